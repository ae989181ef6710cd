#include "panel.h"

#include <stdexcept>

namespace rt::studio {
namespace {

bool valid_id(const QString& id) {
  if (id.isEmpty()) return false;
  for (const QChar c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

void PanelRegistry::add(std::unique_ptr<StudioPanel> panel) {
  if (!panel) throw std::invalid_argument("PanelRegistry::add: null panel");
  const QString id = panel->id();
  if (!valid_id(id))
    throw std::invalid_argument("PanelRegistry::add: invalid panel id '" + id.toStdString() +
                                "' (use ASCII letters, digits, '_' or '-'; it keys the saved window layout)");
  if (find(id))
    throw std::invalid_argument("PanelRegistry::add: a panel with id '" + id.toStdString() +
                                "' is already registered; give the new panel its own id");
  panels_.push_back(std::move(panel));
}

void PanelRegistry::add_command(StudioCommand command) {
  if (!valid_id(command.id))
    throw std::invalid_argument("PanelRegistry::add_command: invalid command id '" + command.id.toStdString() +
                                "' (use ASCII letters, digits, '_' or '-')");
  if (!command.run)
    throw std::invalid_argument("PanelRegistry::add_command: command '" + command.id.toStdString() + "' does nothing");
  for (const StudioCommand& c : commands_)
    if (c.id == command.id)
      throw std::invalid_argument("PanelRegistry::add_command: a command with id '" + command.id.toStdString() +
                                  "' is already registered");
  commands_.push_back(std::move(command));
}

StudioPanel* PanelRegistry::find(const QString& id) const {
  for (const auto& panel : panels_)
    if (panel->id() == id) return panel.get();
  return nullptr;
}

}  // namespace rt::studio
