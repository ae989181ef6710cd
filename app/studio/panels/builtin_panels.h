// app/studio/panels/builtin_panels.h — the panels the studio ships, in the order View > Panels lists them.
//
//   PanelRegistry registry;
//   register_builtin_panels(registry);      // Variables; later Timeline, Memory, Graph, Debugger
//   MainWindow window(registry, kernel);
//
// Adding a panel: write panels/<name>_panel.{h,cpp} implementing StudioPanel (shell/panel.h), add the source to
// app/studio/CMakeLists.txt's rt_studio_panels and one registry.add line in builtin_panels.cpp. The shell is not
// touched.
#pragma once

namespace rt::studio {

class PanelRegistry;

void register_builtin_panels(PanelRegistry& registry);

}  // namespace rt::studio
