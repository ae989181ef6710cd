// debugger/debugger_contents.h — the ImGui contents of the debugger, graph and grad-norm panels, each
// drawing one rt_viz_draw view of a DebuggerSession's state.
//
//   auto* host = new rt::studio::ImGuiHostWidget(parent);
//   host->setContent(std::make_unique<rt::studio::GraphContent>(session));
//   QObject::connect(session.get(), &rt::studio::DebuggerSession::stateChanged, host, &rt::studio::ImGuiHostWidget::requestFrame);
//
// Contracts
// - draw() reads the session's last poll (GUI thread); the session must outlive the content.
// - DebuggerContent passes a clicked execution-order entry to DebuggerSession::select_node. The graph
//   panel's GraphContent is in graph_content.h.
#pragma once
#include <memory>

#include "debugger/debugger_session.h"
#include "debugger/graph_content.h"  // GraphContent, the graph panel's contents
#include "imgui_host/imgui_content.h"
#include "rt/viz/draw/debugger_view.h"
#include "rt/viz/draw/grad_norm_chart.h"
#include "rt/viz/draw/graph_view.h"

namespace rt::studio {

class DebuggerContent final : public ImGuiContent {
 public:
  explicit DebuggerContent(std::shared_ptr<DebuggerSession> session) : session_(std::move(session)) {}
  void draw(ImGuiFrame& frame) override;
  const viz::draw::DebuggerView& view() const { return view_; }

 private:
  std::shared_ptr<DebuggerSession> session_;
  viz::draw::DebuggerView view_;
  std::shared_ptr<viz::GraphModel> labelled_;
};

class GradNormContent final : public ImGuiContent {
 public:
  explicit GradNormContent(std::shared_ptr<DebuggerSession> session) : session_(std::move(session)) {}
  void draw(ImGuiFrame& frame) override;
  const viz::draw::GradNormChart& chart() const { return chart_; }

 private:
  std::shared_ptr<DebuggerSession> session_;
  viz::draw::GradNormChart chart_;
};

}  // namespace rt::studio
