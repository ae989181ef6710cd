// debugger/debugger_panels.h — the studio's gradient-debugging panels: "debugger" (toolbar, breakpoints,
// gradient view), "graph" (the autograd graph of the debugger's backward with the paused node highlighted, or one a
// profiling session kept, annotated with its time and memory: graph_panel_widget.h) and
// "grad_norms" (per-parameter gradient norms over backward passes).
//
//   // app/studio/panels/builtin_panels.cpp
//   register_debugger_panels(registry);
//
// Contracts
// - Registers three panels with stable ids "debugger", "graph", "grad_norms" (graph and grad_norms start
//   hidden). Throws std::invalid_argument (PanelRegistry::add) if one is already registered.
// - The panels share one DebuggerSession (one rt::debug::BackwardDebugger for the studio), created with
//   the first of their widgets on the GUI thread and destroyed with the last of them.
#pragma once
#include <memory>

namespace rt::studio {

class PanelRegistry;
class DebuggerSession;

void register_debugger_panels(PanelRegistry& registry);
// The session the registered panels' widgets share: the live one, or a new one (GUI thread).
std::shared_ptr<DebuggerSession> studio_debugger_session();

}  // namespace rt::studio
