// The grad-histogram panel: layers and their parameters on the left, the chosen parameter's gradient
// histograms over steps on the right (ridgeline.h), with its gradient norm per step above them.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "histogram_index.h"
#include "ridgeline.h"
#include "rt/plugin/panel_sdk.h"

namespace grad_histogram {
namespace {

// "encoder.0.weight" -> layer "encoder.0", parameter "weight".
std::pair<std::string, std::string> split_name(const std::string& name) {
  size_t dot = name.rfind('.');
  if (dot == std::string::npos) return {"", name};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

void draw_norms(ImDrawList* dl, const ParameterSeries& p, ImVec2 min, ImVec2 max, float scale) {
  dl->AddRectFilled(min, max, IM_COL32(24, 26, 30, 255));
  double top = 0;
  for (const StepHistogram& s : p.steps)
    if (std::isfinite(s.norm)) top = std::max(top, s.norm);
  if (top <= 0) top = 1;
  size_t n = p.steps.size();
  float w = max.x - min.x, h = max.y - min.y - 4 * scale;
  ImVec2 prev;
  for (size_t i = 0; i < n; ++i) {
    const StepHistogram& s = p.steps[i];
    float x = min.x + (n > 1 ? w * float(i) / float(n - 1) : w / 2);
    if (!std::isfinite(s.norm)) {
      dl->AddLine(ImVec2(x, min.y), ImVec2(x, max.y), IM_COL32(235, 80, 70, 200), 1.5f * scale);
      continue;
    }
    ImVec2 pt(x, max.y - 2 * scale - float(s.norm / top) * h);
    if (i > 0 && std::isfinite(p.steps[i - 1].norm)) dl->AddLine(prev, pt, IM_COL32(240, 180, 80, 255), 1.5f * scale);
    prev = pt;
  }
  char label[48];
  std::snprintf(label, sizeof label, "norm  max %.3g", top);
  dl->AddText(ImVec2(min.x + 4 * scale, min.y + 2 * scale), IM_COL32(170, 170, 180, 255), label);
}

class GradHistogramPanel final : public rt::plugin::Panel {
 public:
  void draw(rt::plugin::PanelFrame& frame) override {
    const float s = frame.scale;
    if (!frame.session) {
      index_.clear();
      ImGui::TextDisabled("Choose a session above: a live training of the notebook, a stored run, or an attached rank.");
      return;
    }
    index_.update(*frame.session);
    const auto& params = index_.parameters();
    if (params.empty()) {
      ImGui::TextWrapped("%.*s has no gradient histograms yet. Record them with "
                         "rt.profiler.profile(record_gradients=model) or rt.profiler.record_gradients(model) after "
                         "each backward (docs/profiler.md).",
                         int(frame.session->title().size()), frame.session->title().data());
      return;
    }
    if (selected_ >= params.size()) selected_ = 0;

    ImGui::BeginChild("layers", ImVec2(220 * s, 0), true);
    ImGui::SetNextItemWidth(-1);
    ImGui::InputTextWithHint("##filter", "filter layers", filter_, sizeof filter_);
    // Parameters grouped by layer, layers in the order they first appear ("fc1.weight", "fc2.weight",
    // "fc1.bias" lists fc1's two together).
    std::vector<std::string> layers;
    std::vector<size_t> order(params.size());
    std::vector<size_t> layer_rank(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      std::string layer = split_name(params[i].name).first;
      auto it = std::find(layers.begin(), layers.end(), layer);
      layer_rank[i] = size_t(it - layers.begin());
      if (it == layers.end()) layers.push_back(layer);
      order[i] = i;
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return layer_rank[a] < layer_rank[b]; });
    std::string current_layer = "\x01";
    bool layer_open = false;
    for (size_t i : order) {
      const ParameterSeries& p = params[i];
      if (filter_[0] && p.name.find(filter_) == std::string::npos) continue;
      auto [layer, leaf] = split_name(p.name);
      if (layer != current_layer) {
        if (layer_open && !current_layer.empty()) ImGui::TreePop();
        current_layer = layer;
        layer_open = layer.empty() ? true : ImGui::TreeNodeEx(layer.c_str(), ImGuiTreeNodeFlags_DefaultOpen);
      }
      if (!layer_open) continue;
      char row[256];
      const double last = p.steps.empty() ? 0.0 : p.steps.back().norm;
      std::snprintf(row, sizeof row, "%s%s##%zu", leaf.c_str(), p.any_non_finite ? "  (NaN/inf)" : "", i);
      if (p.any_non_finite) ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(240, 110, 100, 255));
      if (ImGui::Selectable(row, selected_ == i)) selected_ = i;
      if (p.any_non_finite) ImGui::PopStyleColor();
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s\n%zu steps, last norm %.4g", p.name.c_str(), p.steps.size(), last);
    }
    if (layer_open && !current_layer.empty() && current_layer != "\x01") ImGui::TreePop();
    ImGui::EndChild();
    ImGui::SameLine();

    ImGui::BeginChild("histograms", ImVec2(0, 0), false);
    const ParameterSeries& p = params[selected_];
    const StepHistogram& last = p.steps.back();
    ImGui::Text("%s", p.name.c_str());
    ImGui::SameLine();
    ImGui::TextDisabled("  %zu steps · last step %lld · norm %.4g · range [%.3g, %.3g]%s", p.steps.size(),
                        (long long)last.step, last.norm, p.lo, p.hi,
                        frame.session->live() ? " · live" : "");
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImVec2 origin = ImGui::GetCursorScreenPos();
    ImVec2 avail = ImGui::GetContentRegionAvail();
    float norm_h = std::min(70 * s, avail.y * 0.25f);
    draw_norms(dl, p, origin, ImVec2(origin.x + avail.x, origin.y + norm_h), s);
    ImVec2 ridge_min(origin.x, origin.y + norm_h + 6 * s), ridge_max(origin.x + avail.x, origin.y + avail.y);
    RidgelineHover hover = draw_ridgeline(dl, p, ridge_min, ridge_max, s, ImGui::GetMousePos());
    ImGui::Dummy(avail);
    if (hover.valid && ImGui::IsItemHovered()) {
      ImGui::SetTooltip("step %lld\n%lld values in [%.4g, %.4g)%s", (long long)hover.step, (long long)hover.count,
                        hover.bin_lo, hover.bin_hi, hover.nan_count + hover.inf_count ? "\nthis step has NaN/inf" : "");
    }
    ImGui::EndChild();
  }

  bool wants_live_updates() const override { return false; }  // the studio redraws as a live session grows

 private:
  HistogramIndex index_;
  size_t selected_ = 0;
  char filter_[128] = {};
};

}  // namespace
}  // namespace grad_histogram

RT_PANEL_PLUGIN("org.rustytorch.grad-histogram", "1.0.0", "grad_histogram", "Gradient histograms",
                grad_histogram::GradHistogramPanel)
