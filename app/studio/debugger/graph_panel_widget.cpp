#include "debugger/graph_panel_widget.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include "rt/error.h"

namespace rt::studio {

GraphPanelWidget::GraphPanelWidget(std::shared_ptr<DebuggerSession> session, QWidget* parent)
    : QWidget(parent), session_(std::move(session)) {
  setObjectName(QStringLiteral("graphPanel"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  auto* bar = new QWidget(this);
  auto* row = new QHBoxLayout(bar);
  row->setContentsMargins(4, 2, 4, 2);
  source_ = new QComboBox(bar);
  source_->addItem(tr("Debugger's backward"));
  source_->addItem(tr("Profiled session"));
  source_->setToolTip(tr("The graph of the backward under the debugger, or the one a profiling session kept "
                         "(annotated with that session's time and memory)"));
  which_ = new QComboBox(bar);
  which_->addItem(tr("Latest backward"), -1);
  which_->addItem(tr("First backward"), 0);
  status_ = new QLabel(bar);
  status_->setWordWrap(true);
  row->addWidget(source_);
  row->addWidget(which_);
  row->addWidget(status_, 1);
  picker_ = new SessionPicker(this);
  host_ = new ImGuiHostWidget(this);
  auto content = std::make_unique<GraphContent>(session_);
  content_ = content.get();
  host_->setContent(std::move(content));
  layout->addWidget(bar);
  layout->addWidget(picker_);
  layout->addWidget(host_, 1);

  connect(source_, &QComboBox::currentIndexChanged, this, [this](int i) { showProfiles(i == 1); });
  connect(which_, &QComboBox::currentIndexChanged, this, [this](int) { show_loaded(); });
  connect(picker_, &SessionPicker::sessionLoaded, this, [this](std::shared_ptr<const prof::SessionData> data, bool) {
    loaded_ = std::move(data);
    show_loaded();
  });
  connect(session_.get(), &DebuggerSession::stateChanged, host_, &ImGuiHostWidget::requestFrame);
  connect(session_.get(), &DebuggerSession::graphChanged, host_, &ImGuiHostWidget::requestFrame);
  showProfiles(false);
}

void GraphPanelWidget::showProfiles(bool on) {
  if (source_->currentIndex() != (on ? 1 : 0)) {
    source_->setCurrentIndex(on ? 1 : 0);  // emits currentIndexChanged, which comes back here
    return;
  }
  picker_->setVisible(on);
  which_->setVisible(on);
  status_->clear();
  if (on) show_loaded();
  else content_->show_debugger();
  host_->requestFrame();
}

bool GraphPanelWidget::showingProfiles() const { return source_->currentIndex() == 1; }

void GraphPanelWidget::setGraphIndex(int index) {
  const int i = which_->findData(index);
  if (i >= 0) which_->setCurrentIndex(i);
}

QString GraphPanelWidget::statusText() const { return status_->text(); }

void GraphPanelWidget::show_loaded() {
  if (!showingProfiles() || !loaded_) return;
  const int index = which_->currentData().toInt();
  const std::string why = profile_graph_error(*loaded_, index);
  status_->setText(QString::fromStdString(why));
  status_->setToolTip(status_->text());
  if (why.empty()) content_->show_profile(loaded_, index);
  host_->requestFrame();
}

}  // namespace rt::studio
