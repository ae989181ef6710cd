// plugin_host/panel_compat.h — whether a panel plugin was built against this studio's panel SDK.
//
//   std::string why = panel_incompatibility(record.info->panel, record.manifest);
//   if (!why.empty()) refuse(why);   // "org.x.y: built against panel SDK 0.9 with Dear ImGui 18500; this studio ..."
//
// Exact match, as Qt Creator requires of its C++ plugins (rt/plugin/panel_sdk.h): the manifest's "sdk" and the
// library's RT_PANEL_SDK_VERSION must equal the studio's, and so must the Dear ImGui version and every size in
// rt::plugin::PanelLayout. The message names what differs, with both values.
#pragma once
#include <string>

#include "rt/plugin/panel_sdk.h"
#include "rt/plugin_host/manifest.h"

namespace rt::studio {

std::string panel_incompatibility(const RtPanelPlugin* panel, const plugin::Manifest& manifest);

}  // namespace rt::studio
