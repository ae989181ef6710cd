// plugin_host/plugin_panel_widget.h — a panel plugin in a dock: the visualizers' session picker above an
// ImGuiHostWidget drawing the plugin's panel (plugin_panel_content.h) with the chosen session.
//
//   auto* w = new PluginPanelWidget(record, dock);     // record: a loaded panel plugin the studio accepted
//   w->picker()->openStore("runs.sqlite");
//
// Contracts
// - The picker lists live sessions of this process, ranks of attached jobs and sessions of opened stores, as
//   the timeline's does; choosing one hands it to the panel, and a live one is redrawn as it grows.
// - When the panel fails (its draw threw), the plugin is marked Failed in process_plugins() with the reason.
#pragma once
#include <QWidget>

#include "imgui_host/imgui_host_widget.h"
#include "plugin_host/plugin_panel_content.h"
#include "viz_panels/session_picker.h"

namespace rt::studio {

class PluginPanelWidget : public QWidget {
  Q_OBJECT

 public:
  PluginPanelWidget(const plugin::PluginRecord& record, QWidget* parent = nullptr);

  SessionPicker* picker() const { return picker_; }
  ImGuiHostWidget* host() const { return host_; }
  PluginPanelContent* content() const { return content_; }

 private:
  SessionPicker* picker_ = nullptr;
  ImGuiHostWidget* host_ = nullptr;
  PluginPanelContent* content_ = nullptr;  // owned by host_
};

}  // namespace rt::studio
