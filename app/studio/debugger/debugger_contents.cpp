#include "debugger/debugger_contents.h"

namespace rt::studio {

void DebuggerContent::draw(ImGuiFrame& frame) {
  if (session_->graph() != labelled_) {
    labelled_ = session_->graph();
    view_.set_node_labels(session_->node_labels());
  }
  view_.draw(session_->status(), frame.size(), frame.scale());
  if (auto id = view_.take_clicked_node()) session_->select_node(id);
}

void GraphContent::draw(ImGuiFrame& frame) {
  if (session_->graph() != view_.model()) view_.set_graph(session_->graph());
  const auto& paused = session_->status().paused;
  view_.set_highlight(paused ? std::optional<uint64_t>(paused->node.id) : std::nullopt);
  view_.draw(frame.size(), frame.scale());
  if (view_.selected_node() != last_selected_) {
    last_selected_ = view_.selected_node();
    if (last_selected_) session_->select_node(last_selected_);
  }
  if (view_.laying_out()) frame.request_another_frame();
}

void GradNormContent::draw(ImGuiFrame& frame) { chart_.draw(session_->grad_norms(), frame.size(), frame.scale()); }

}  // namespace rt::studio
