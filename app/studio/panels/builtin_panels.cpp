#include "builtin_panels.h"

#include <memory>

#include "panels/variables_panel.h"
#include "shell/panel.h"
#include "debugger/debugger_panels.h"
#include "viz_panels/visualizer_panels.h"

namespace rt::studio {

void register_builtin_panels(PanelRegistry& registry) {
  registry.add(std::make_unique<VariablesPanel>());
  register_visualizer_panels(registry);  // timeline, memory, scalars
  register_debugger_panels(registry);    // debugger, graph, grad_norms
}

}  // namespace rt::studio
