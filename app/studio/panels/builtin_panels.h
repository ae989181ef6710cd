// app/studio/panels/builtin_panels.h — the panels the studio ships, in the order View > Panels lists them.
//
//   PanelRegistry registry;
//   register_builtin_panels(registry);      // Variables, Timeline, Memory, Scalars, Debugger, Graph, Grad norms,
//                                           // and the Remote > Attach… command (attach/attach_dialog.h)
//   MainWindow window(registry, kernel);
//
// Adding a panel: implement StudioPanel (shell/panel.h) in panels/ (or a folder of its own with a
// register_*_panels function, as viz_panels/ and debugger/ do) and add one line to builtin_panels.cpp. The shell
// is not touched.
#pragma once

namespace rt::studio {

class PanelRegistry;

void register_builtin_panels(PanelRegistry& registry);

}  // namespace rt::studio
