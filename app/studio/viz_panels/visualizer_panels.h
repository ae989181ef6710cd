// viz_panels/visualizer_panels.h — the studio's profiling panels: "timeline", "memory" and "scalars",
// each a session picker above a Dear ImGui view (viz_panel_widget.h), docked at the bottom.
//
//   // app/studio/panels/builtin_panels.cpp
//   register_visualizer_panels(registry);
//
// Contracts
// - Registers three panels with stable ids "timeline", "memory", "scalars" (default area: bottom;
//   scalars starts hidden). Throws std::invalid_argument (PanelRegistry::add) if one is already registered.
// - The timeline and memory panels of one main window share a time cursor: views of the same session
//   zoom, pan and hover together.
// - Asks the process's session registry to keep finished sessions (rt/prof/session_registry.h), so the
//   pickers still list a profile whose Python object a cell has dropped.
#pragma once

namespace rt::studio {

class PanelRegistry;

void register_visualizer_panels(PanelRegistry& registry);

}  // namespace rt::studio
