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

void GradNormContent::draw(ImGuiFrame& frame) { chart_.draw(session_->grad_norms(), frame.size(), frame.scale()); }

}  // namespace rt::studio
