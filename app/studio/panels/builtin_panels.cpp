#include "builtin_panels.h"

#include <memory>

#include "attach/attach_dialog.h"
#include "panels/variables_panel.h"
#include "shell/panel.h"
#include "debugger/debugger_panels.h"
#include "viz_panels/visualizer_panels.h"

namespace rt::studio {

void register_builtin_panels(PanelRegistry& registry) {
  registry.add(std::make_unique<VariablesPanel>());
  register_visualizer_panels(registry);  // timeline, memory, scalars
  register_debugger_panels(registry);    // debugger, graph, grad_norms
  // Remote > Attach…: one dialog per window, kept (with its listing) while the window lives.
  registry.add_command({QStringLiteral("actionAttach"), QObject::tr("&Remote"), QObject::tr("&Attach to a Running Job…"),
                        [](QWidget* window) {
                          auto* dialog = window->findChild<AttachDialog*>(QStringLiteral("attachDialog"));
                          if (!dialog) dialog = new AttachDialog(window);
                          dialog->show();
                          dialog->raise();
                          dialog->activateWindow();
                        }});
}

}  // namespace rt::studio
