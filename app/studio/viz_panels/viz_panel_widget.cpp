#include "viz_panels/viz_panel_widget.h"

#include <QCheckBox>
#include <QVBoxLayout>

#include <algorithm>
#include <optional>
#include <utility>

namespace rt::studio {

namespace {

// What the view shows before a session is chosen.
class NoSessionContent final : public ImGuiContent {
 public:
  void draw(ImGuiFrame& frame) override {
    const char* lines[] = {"No session yet.",
                           "Profile a cell (with rt.profiler.profile(...) as prof:) and it appears here while it records,",
                           "or open a store (rtorch run --store) or a Chrome/Perfetto trace above."};
    float y = frame.size().y * 0.5f - ImGui::GetTextLineHeightWithSpacing() * 1.5f;
    for (const char* line : lines) {
      const float w = ImGui::CalcTextSize(line).x;
      ImGui::SetCursorPos(ImVec2(std::max(0.0f, (frame.size().x - w) * 0.5f), y));
      ImGui::TextDisabled("%s", line);
      y += ImGui::GetTextLineHeightWithSpacing();
    }
  }
};

}  // namespace

void SharedTimeCursor::notify_if_changed() {
  if (cursor->version == version_ && cursor->hover_ns == hover_) return;
  version_ = cursor->version;
  hover_ = cursor->hover_ns;
  emit changed();
}

VizPanelWidget::VizPanelWidget(VizView view, std::shared_ptr<SharedTimeCursor> cursor, QWidget* parent)
    : QWidget(parent), view_(view), cursor_(std::move(cursor)) {
  setObjectName(QStringLiteral("%1Panel").arg(QString::fromLatin1(view_name(view))));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  picker_ = new SessionPicker(this);
  // A launched job's ranks side by side: threads and counters are per rank; memory is not (session_picker.h).
  picker_->setOffersJobs(view_ != VizView::Memory);
  host_ = new ImGuiHostWidget(this);
  host_->setContent(std::make_unique<NoSessionContent>());
  layout->addWidget(picker_);
  layout->addWidget(host_, 1);
  if (view_ == VizView::Scalars) {
    overlay_ = new QCheckBox(tr("Overlay"), picker_);
    overlay_->setToolTip(tr("Add the next chosen session to the charts instead of replacing them"));
    picker_->addTrailingWidget(overlay_);
    connect(overlay_, &QCheckBox::toggled, this, [this](bool on) {
      if (!on && sessions_.size() > 1) {
        sessions_.erase(sessions_.begin(), sessions_.end() - 1);
        host_->setContent(std::make_unique<SessionViewContent>(view_, sessions_, cursor_->cursor));
      }
    });
  }
  connect(picker_, &SessionPicker::sessionLoaded, this,
          [this](std::shared_ptr<const prof::SessionData> data, bool live) { show_session(std::move(data), live); });
  connect(picker_, &SessionPicker::sessionGrew, this,
          [this](std::shared_ptr<const prof::SessionData> data, prof::SessionGrowth growth) {
            grow_session(data, growth);
          });
  connect(host_, &ImGuiHostWidget::frameDrawn, cursor_.get(), &SharedTimeCursor::notify_if_changed);
  connect(cursor_.get(), &SharedTimeCursor::changed, host_, &ImGuiHostWidget::requestFrame);
}

SessionViewContent* VizPanelWidget::content() const { return dynamic_cast<SessionViewContent*>(host_->content()); }

void VizPanelWidget::show_session(std::shared_ptr<const prof::SessionData> data, bool live) {
  // A live refresh replaces the previous snapshot of the same session instead of overlaying it, and keeps a
  // zoomed-in timeline window where it was (a fitted one keeps fitting the growing session).
  const bool refresh = live && last_was_live_;
  std::optional<std::pair<int64_t, int64_t>> zoomed;
  if (SessionViewContent* old = refresh ? content() : nullptr; old && old->timeline()) {
    const viz::draw::TimelineDraw& t = *old->timeline();
    if (t.view().t0() > t.model().first_ns() || t.view().t1() < t.model().last_ns())
      zoomed = {t.view().t0(), t.view().t1()};
  }
  const bool overlay = overlay_ && overlay_->isChecked() && !refresh;
  if (overlay) sessions_.push_back(std::move(data));
  else if (refresh && !sessions_.empty()) sessions_.back() = std::move(data);
  else sessions_.assign(1, std::move(data));
  last_was_live_ = live;
  auto next = std::make_unique<SessionViewContent>(view_, sessions_, cursor_->cursor);
  if (zoomed && next->timeline()) next->timeline()->set_window(zoomed->first, zoomed->second);
  host_->setContent(std::move(next));
}

void VizPanelWidget::grow_session(const std::shared_ptr<const prof::SessionData>& data,
                                  const prof::SessionGrowth& growth) {
  SessionViewContent* shown = content();
  if (!shown || sessions_.empty() || sessions_.back() != data || shown->sessions().back() != data) {
    show_session(data, true);  // not showing this data: build the view from it
    return;
  }
  shown->append(growth);
  host_->requestFrame();
}

}  // namespace rt::studio
