#include "builtin_panels.h"

#include <memory>

#include "panels/variables_panel.h"
#include "shell/panel.h"

namespace rt::studio {

void register_builtin_panels(PanelRegistry& registry) {
  registry.add(std::make_unique<VariablesPanel>());
}

}  // namespace rt::studio
