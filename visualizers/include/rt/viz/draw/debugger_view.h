// rt/viz/draw/debugger_view.h — the backward debugger's gradient view drawn with Dear ImGui: the paused
// node (name, forward op, module, why it paused), a table of the gradients it received and produced
// (shape, dtype, norm, min, max, mean, NaN, Inf, histogram) with non-finite values in red, and the
// execution order so far.
//
//   rt::viz::draw::DebuggerView view;
//   rt::viz::draw::DebuggerStatus st{.armed = true, .running = dbg.running(), .paused = dbg.paused_state(),
//                                    .order = dbg.execution_order()};
//   view.set_node_labels(labels);               // graph id -> "AddmmBackward0", from the graph snapshot
//   view.draw(st, ImGui::GetContentRegionAvail(), frame.scale());
//   if (auto id = view.take_clicked_node()) dbg.run_to(rt::debug::NodeTarget::id(*id));
//
// Contracts
// - Without a pause the view says what the debugger is doing (not armed, armed and waiting for a
//   backward, running) and still lists the last backward's execution order.
// - layout() describes the last frame in screen (device pixel) coordinates, for tests and hit-testing.
// - A click on an execution-order entry selects it (selected_node(); take_clicked_node() returns it once).
// - draw() needs the ImGui context current. Never throws for any PausedState.
#pragma once
#include <imgui.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "rt/debug/paused_state.h"

namespace rt::viz::draw {

struct DebuggerStatus {
  bool armed = false;
  bool running = false;
  std::optional<debug::PausedState> paused;
  std::vector<uint64_t> order;  // when not paused: the last backward's execution order
  std::string message;          // the last backward's outcome ("stopped by the debugger"), "" when none
};

struct DebuggerViewLayout {
  struct Row {
    bool produced = false;  // grad_inputs (else grad_outputs)
    size_t index = 0;
    ImVec2 min, max;            // the whole row
    ImVec2 nan_min, nan_max;    // the NaN count cell
    ImVec2 hist_min, hist_max;  // the histogram cell
  };
  ImVec2 header_min, header_max;
  std::vector<Row> rows;
  ImVec2 order_min, order_max;
  size_t order_entries = 0;
};

class DebuggerView {
 public:
  void set_node_labels(std::unordered_map<uint64_t, std::string> labels) { labels_ = std::move(labels); }
  void draw(const DebuggerStatus& status, ImVec2 size, float scale);

  const DebuggerViewLayout& layout() const { return layout_; }
  std::optional<uint64_t> selected_node() const { return selected_; }
  std::optional<uint64_t> take_clicked_node() {
    auto c = clicked_;
    clicked_.reset();
    return c;
  }

 private:
  void draw_header(const DebuggerStatus& status, ImVec2 min, float width, float scale);
  float draw_table(const debug::PausedState& s, ImVec2 min, ImVec2 max, float scale);
  void draw_order(const DebuggerStatus& status, ImVec2 min, ImVec2 max, float scale);
  std::string label(uint64_t id) const;

  std::unordered_map<uint64_t, std::string> labels_;
  DebuggerViewLayout layout_;
  std::optional<uint64_t> selected_, clicked_;
};

// "1.23e-05", "0.5", "nan", "inf": compact numbers for gradient statistics.
std::string format_stat(double v);

}  // namespace rt::viz::draw
