// debugger/graph_content.h — the Graph panel's ImGui contents: the autograd graph the debugger captured
// (its paused node highlighted), or a graph a profiling session stored (rt::prof::SessionData::graphs),
// annotated with that session's per-op time and memory.
//
//   auto* host = new rt::studio::ImGuiHostWidget(parent);
//   auto content = std::make_unique<rt::studio::GraphContent>(debugger_session);   // the debugger's graph
//   content->show_profile(store_session);      // the session's latest graph, with its time and memory
//   host->setContent(std::move(content));
//
// Contracts
// - draw() runs on the GUI thread; the DebuggerSession (may be null: profiles only) must outlive the content.
// - Debugger mode: shows the session's latest graph, highlights the paused node (revealing it), and passes
//   the node the user clicks to DebuggerSession::select_node.
// - show_profile(data, index) shows data->graphs[index] (a negative index counts from the end: -1 is the
//   latest backward's) with viz::GraphAnnotations of the same session; it throws rt::ValueError naming the
//   reason when the session has no such graph. A newer snapshot of the session shown (same name and start:
//   a live session's refresh) changes nothing while its chosen graph has the same structure as the one
//   shown (the next training step): the view keeps its expansion, zoom and annotations; a graph of another
//   structure replaces it. Parameters (AccumulateGrad leaves, which record no module) are drawn inside the
//   module of the first op that sends them a gradient, so a collapsed module holds its weights.
// - profile_graph_error() says why a session cannot show a graph ("" when it can), without throwing.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "debugger/debugger_session.h"
#include "imgui_host/imgui_content.h"
#include "rt/prof/events.h"
#include "rt/viz/draw/graph_view.h"
#include "rt/viz/graph_annotations.h"

namespace rt::studio {

std::string profile_graph_error(const prof::SessionData& data, int index = -1);

class GraphContent final : public ImGuiContent {
 public:
  explicit GraphContent(std::shared_ptr<DebuggerSession> session) : session_(std::move(session)) {}

  void show_profile(std::shared_ptr<const prof::SessionData> data, int index = -1);
  void show_debugger();
  bool showing_profile() const { return profile_ != nullptr; }
  // The profile's graph record shown (null in debugger mode) and its annotations.
  const prof::GraphRecord* profile_graph() const;
  const std::shared_ptr<const prof::SessionData>& profile_data() const { return profile_; }
  const viz::GraphAnnotations* annotations() const { return annotations_.get(); }

  void draw(ImGuiFrame& frame) override;
  const viz::draw::GraphView& view() const { return view_; }
  viz::draw::GraphView& view() { return view_; }

 private:
  void draw_profile_header(float scale);

  std::shared_ptr<DebuggerSession> session_;
  viz::draw::GraphView view_;
  std::optional<uint64_t> last_selected_;
  std::shared_ptr<const prof::SessionData> profile_;
  size_t profile_index_ = 0;
  std::shared_ptr<const viz::GraphAnnotations> annotations_;
};

}  // namespace rt::studio
