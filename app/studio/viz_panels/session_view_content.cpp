#include "viz_panels/session_view_content.h"

#include <fmt/format.h>

#include "rt/error.h"

namespace rt::studio {

VizView parse_view(std::string_view name) {
  if (name == "timeline") return VizView::Timeline;
  if (name == "memory") return VizView::Memory;
  if (name == "scalars") return VizView::Scalars;
  throw rt::ValueError(fmt::format("unknown view '{}': choose timeline, memory or scalars", name));
}

const char* view_name(VizView view) {
  switch (view) {
    case VizView::Timeline: return "timeline";
    case VizView::Memory: return "memory";
    case VizView::Scalars: return "scalars";
  }
  return "?";
}

SessionViewContent::SessionViewContent(VizView view, std::vector<std::shared_ptr<const prof::SessionData>> sessions,
                                       std::shared_ptr<viz::draw::TimeCursor> cursor)
    : view_(view), sessions_(std::move(sessions)), cursor_(std::move(cursor)) {
  if (sessions_.empty() || !sessions_.front()) throw rt::ValueError("SessionViewContent: no session to show");
  switch (view_) {
    case VizView::Timeline: timeline_ = std::make_unique<viz::draw::TimelineDraw>(sessions_.front()); break;
    case VizView::Memory: memory_ = std::make_unique<viz::draw::MemoryDraw>(sessions_.front()); break;
    case VizView::Scalars: scalars_ = std::make_unique<viz::draw::ScalarsDraw>(sessions_); break;
  }
}

SessionViewContent::~SessionViewContent() {
  if (cursor_ && cursor_->session == sessions_.front().get()) {
    cursor_->session = nullptr;
    cursor_->hover_ns.reset();
    cursor_->hover_owner = nullptr;
    ++cursor_->version;
  }
}

void SessionViewContent::append(const prof::SessionGrowth& growth) {
  if (timeline_) timeline_->append(growth);
  if (memory_) memory_->append(growth);
  if (scalars_) scalars_->append(sessions_.size() - 1, growth);
}

void SessionViewContent::draw(ImGuiFrame& frame) {
  const ImVec2 size = frame.size();
  if (timeline_) timeline_->draw(size, frame.scale(), cursor_.get());
  if (memory_) memory_->draw(size, frame.scale(), cursor_.get());
  if (scalars_) scalars_->draw(size, frame.scale());
}

}  // namespace rt::studio
