#include "plugin_host/panel_compat.h"

#include <fmt/format.h>

#include <cctype>
#include <cstring>

namespace rt::studio {

std::string panel_incompatibility(const RtPanelPlugin* panel, const plugin::Manifest& m) {
  const std::string& id = m.id;
  if (!panel) return fmt::format("{}: RtPluginInfo.panel is NULL", id);
  if (panel->struct_size != sizeof(RtPanelPlugin))
    return fmt::format("{}: its RtPanelPlugin has {} bytes, this studio's {}; rebuild the panel against this "
                       "studio's rt/plugin/panel_sdk.h",
                       id, panel->struct_size, sizeof(RtPanelPlugin));
  std::string sdk = panel->sdk_version ? panel->sdk_version : "";
  if (sdk != RT_PANEL_SDK_VERSION || m.sdk_version != RT_PANEL_SDK_VERSION)
    return fmt::format("{}: built against panel SDK {} (plugin.json says \"sdk\": \"{}\"); this studio's is {}. "
                       "Panels must match exactly: rebuild it against this studio",
                       id, sdk, m.sdk_version, RT_PANEL_SDK_VERSION);
  if (panel->imgui_version_num != IMGUI_VERSION_NUM)
    return fmt::format("{}: built with Dear ImGui {}, this studio has {}; link the studio's librt_imgui and "
                       "rebuild",
                       id, panel->imgui_version_num, IMGUI_VERSION_NUM);
  const plugin::PanelLayout mine;
  struct Field {
    const char* name;
    uint32_t theirs, ours;
  } fields[] = {{"ImGuiIO", panel->layout.imgui_io, mine.imgui_io},
                {"ImGuiStyle", panel->layout.imgui_style, mine.imgui_style},
                {"ImDrawVert", panel->layout.draw_vert, mine.draw_vert},
                {"ImDrawIdx", panel->layout.draw_idx, mine.draw_idx},
                {"PanelFrame", panel->layout.panel_frame, mine.panel_frame},
                {"GradientHistogram", panel->layout.gradient_histogram, mine.gradient_histogram}};
  for (const Field& f : fields)
    if (f.theirs != f.ours)
      return fmt::format("{}: sizeof({}) is {} in the panel and {} in this studio (a different imconfig.h or "
                         "compiler settings); rebuild it with the studio's headers",
                         id, f.name, f.theirs, f.ours);
  if (!panel->create || !panel->destroy) return fmt::format("{}: RtPanelPlugin.create or .destroy is NULL", id);
  std::string panel_id = panel->panel_id ? panel->panel_id : "";
  bool valid_id = !panel_id.empty() && panel_id.size() <= 64;
  for (char c : panel_id) valid_id = valid_id && (std::isalnum((unsigned char)c) || c == '_' || c == '-');
  if (!valid_id)
    return fmt::format("{}: panel id \"{}\" must be 1 to 64 letters, digits, '_' or '-'", id, panel_id);
  if (!panel->title || !*panel->title) return fmt::format("{}: the panel has no title", id);
  return {};
}

}  // namespace rt::studio
