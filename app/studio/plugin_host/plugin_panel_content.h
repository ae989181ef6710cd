// plugin_host/plugin_panel_content.h — a panel plugin's rt::plugin::Panel drawn as ImGuiContent, guarded.
//
//   auto content = std::make_unique<PluginPanelContent>(record);       // record: a loaded, compatible panel
//   content->on_failure = [](const std::string& why) { /* tell the Plugins dialog */ };
//   content->set_session(data, "runs.sqlite #3", /*live=*/false);
//   host->setContent(std::move(content));
//
// Contracts
// - Creates the plugin's Panel on construction and destroys it through the plugin's destroy().
// - The first draw() runs under a crash marker (rt/plugin_host/crash_marker.h, phase "first draw"), so a
//   panel that crashes the studio is named on the next start.
// - An exception escaping the panel's draw() stops the panel: error() holds its message, on_failure is called
//   once, and from then on the content draws that message instead of calling the panel. The exception is
//   passed on once, so the host unwinds what the panel left open in ImGui (imgui_content.h).
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "imgui_host/imgui_content.h"
#include "plugin_host/session_view_adapter.h"
#include "rt/plugin/panel_sdk.h"
#include "rt/plugin_host/plugin_manager.h"

namespace rt::studio {

class PluginPanelContent final : public ImGuiContent {
 public:
  explicit PluginPanelContent(const plugin::PluginRecord& record, std::string app = "studio");
  ~PluginPanelContent() override;
  PluginPanelContent(const PluginPanelContent&) = delete;
  PluginPanelContent& operator=(const PluginPanelContent&) = delete;

  void set_session(std::shared_ptr<const prof::SessionData> data, std::string title, bool live);
  void clear_session() { view_.reset(); }
  void draw(ImGuiFrame& frame) override;
  bool wants_live_updates() const override;

  const std::string& error() const { return error_; }
  const std::string& plugin_id() const { return plugin_id_; }
  std::function<void(const std::string& error)> on_failure;

 private:
  void fail(std::string why);

  const RtPanelPlugin* table_;
  std::string plugin_id_;
  std::string app_;
  plugin::Panel* panel_ = nullptr;
  std::unique_ptr<SessionDataView> view_;
  uint64_t frames_ = 0;
  std::string error_;
};

}  // namespace rt::studio
