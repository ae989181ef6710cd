#include "debugger/graph_content.h"

#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>

#include "rt/error.h"
#include "rt/viz/draw/draw_style.h"

namespace rt::studio {
namespace {

// data.graphs index for a possibly negative `index`; -1 when out of range.
int resolve(const prof::SessionData& data, int index) {
  const int n = int(data.graphs.size());
  const int i = index < 0 ? n + index : index;
  return i >= 0 && i < n ? i : -1;
}

// Same ops, modules, shapes and edges in the same order: the same picture (ids differ between backwards).
bool same_structure(const autograd::GraphSnapshot& a, const autograd::GraphSnapshot& b) {
  if (a.nodes.size() != b.nodes.size() || a.edges.size() != b.edges.size()) return false;
  for (size_t i = 0; i < a.nodes.size(); ++i)
    if (a.nodes[i].name != b.nodes[i].name || a.nodes[i].module != b.nodes[i].module ||
        a.nodes[i].output_shapes != b.nodes[i].output_shapes)
      return false;
  for (size_t i = 0; i < a.edges.size(); ++i)
    if (a.edges[i].input_nr != b.edges[i].input_nr || a.edges[i].shape != b.edges[i].shape) return false;
  return true;
}

// Parameters (AccumulateGrad leaves record no module) go into the module of the first op, in backward order,
// that sends them a gradient, as TensorBoard draws a layer's weights inside the layer.
autograd::GraphSnapshot with_parameters_in_modules(autograd::GraphSnapshot g) {
  std::unordered_map<uint64_t, size_t> index;
  for (size_t i = 0; i < g.nodes.size(); ++i) index.emplace(g.nodes[i].id, i);
  std::unordered_set<uint64_t> placed;
  for (const autograd::GraphEdgeInfo& e : g.edges) {
    const auto to = index.find(e.to), from = index.find(e.from);
    if (to == index.end() || from == index.end()) continue;
    autograd::GraphNodeInfo& leaf = g.nodes[to->second];
    if (leaf.is_leaf && leaf.module.empty() && placed.insert(leaf.id).second) leaf.module = g.nodes[from->second].module;
  }
  return g;
}

}  // namespace

std::string profile_graph_error(const prof::SessionData& data, int index) {
  const std::string name = data.name.empty() ? "the session" : fmt::format("session '{}'", data.name);
  if (data.graphs.empty())
    return fmt::format("{} has no autograd graph: no backward ran while it recorded, or it was recorded by a "
                       "RustyTorch older than store schema 4. Profile a training step that calls backward() "
                       "(rtorch run --store DB script.py) and draw that session.",
                       name);
  if (resolve(data, index) < 0)
    return fmt::format("{} has {} autograd graph{} (the first and the latest backward's); graph index {} does "
                       "not exist: use 0..{} or -1 for the latest",
                       name, data.graphs.size(), data.graphs.size() == 1 ? "" : "s", index, data.graphs.size() - 1);
  return {};
}

void GraphContent::show_profile(std::shared_ptr<const prof::SessionData> data, int index) {
  if (!data) throw rt::ValueError("GraphContent::show_profile: no session given");
  if (const std::string why = profile_graph_error(*data, index); !why.empty()) throw rt::ValueError(why);
  const auto i = size_t(resolve(*data, index));
  const prof::GraphRecord& record = data->graphs[i];
  // A live session's refresh: the same graph, or one of the same structure (the next training step), keeps the
  // graph shown with its annotations, so the view does not jump or re-lay out every step.
  const prof::GraphRecord* shown = profile_graph();
  if (shown && view_.model() && i == profile_index_ && data->name == profile_->name &&
      data->start_ns == profile_->start_ns && same_structure(shown->graph, record.graph))
    return;
  profile_ = std::move(data);
  profile_index_ = i;
  auto model = std::make_shared<viz::GraphModel>(with_parameters_in_modules(record.graph));
  annotations_ = std::make_shared<const viz::GraphAnnotations>(*model, *profile_);
  view_.set_graph(model);
  view_.set_annotations(annotations_);
  view_.set_highlight(std::nullopt);
  last_selected_.reset();
}

void GraphContent::show_debugger() {
  if (!profile_) return;
  profile_.reset();
  annotations_.reset();
  view_.set_graph(nullptr);
}

const prof::GraphRecord* GraphContent::profile_graph() const {
  return profile_ ? &profile_->graphs[profile_index_] : nullptr;
}

void GraphContent::draw_profile_header(float scale) {
  const prof::GraphRecord& g = *profile_graph();
  const size_t count = profile_->graphs.size();
  const char* which = count > 1 && profile_index_ + 1 == count ? "latest" : profile_index_ == 0 ? "first" : "";
  ImGui::SetCursorScreenPos(ImVec2(ImGui::GetCursorScreenPos().x + 6 * scale, ImGui::GetCursorScreenPos().y + 4 * scale));
  ImGui::TextColored(ImColor(viz::draw::palette::kText), "%s", profile_->name.empty() ? "profile" : profile_->name.c_str());
  ImGui::SameLine();
  ImGui::TextColored(ImColor(viz::draw::palette::kTextDim), "%s",
                     fmt::format("backward #{} ({}{}step {}) · time and memory from this session: {} of {} ops "
                                 "matched",
                                 g.backward_index, which, *which ? ", " : "", g.step, annotations_->matched_ops(),
                                 g.graph.nodes.size())
                         .c_str());
}

void GraphContent::draw(ImGuiFrame& frame) {
  ImVec2 size = frame.size();
  if (profile_) {
    const float before = ImGui::GetCursorScreenPos().y;
    draw_profile_header(frame.scale());
    size.y -= ImGui::GetCursorScreenPos().y - before;
  } else if (session_) {
    if (session_->graph() != view_.model()) view_.set_graph(session_->graph());
    const auto& paused = session_->status().paused;
    view_.set_highlight(paused ? std::optional<uint64_t>(paused->node.id) : std::nullopt);
  }
  view_.draw(size, frame.scale());
  if (!profile_ && session_ && view_.selected_node() != last_selected_) {
    last_selected_ = view_.selected_node();
    if (last_selected_) session_->select_node(last_selected_);
  }
  if (view_.laying_out()) frame.request_another_frame();
}

}  // namespace rt::studio
