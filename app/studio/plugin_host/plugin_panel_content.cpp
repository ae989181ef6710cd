#include "plugin_host/plugin_panel_content.h"

#include <fmt/format.h>

#include <optional>
#include <stdexcept>

#include "rt/plugin_host/crash_marker.h"

namespace rt::studio {

PluginPanelContent::PluginPanelContent(const plugin::PluginRecord& record, std::string app)
    : table_(record.info ? record.info->panel : nullptr), plugin_id_(record.manifest.id), app_(std::move(app)) {
  if (!table_) throw std::invalid_argument(plugin_id_ + " has no panel");
  try {
    panel_ = table_->create();
  } catch (const std::exception& e) {
    fail(fmt::format("creating the panel threw: {}", e.what()));
  } catch (...) {
    fail("creating the panel threw");
  }
  if (!panel_ && error_.empty()) fail("the plugin's create() returned no panel");
}

PluginPanelContent::~PluginPanelContent() {
  if (!panel_) return;
  try {
    table_->destroy(panel_);
  } catch (...) {
    // A destructor that throws leaves the panel's memory to the process; nothing else can be done here.
  }
}

void PluginPanelContent::set_session(std::shared_ptr<const prof::SessionData> data, std::string title, bool live) {
  view_ = data ? std::make_unique<SessionDataView>(std::move(data), std::move(title), live) : nullptr;
}

bool PluginPanelContent::wants_live_updates() const {
  if (!panel_ || !error_.empty()) return false;
  try {
    return panel_->wants_live_updates() || (view_ && view_->live());
  } catch (...) {
    return false;
  }
}

void PluginPanelContent::fail(std::string why) {
  error_ = std::move(why);
  if (on_failure) on_failure(error_);
}

void PluginPanelContent::draw(ImGuiFrame& frame) {
  if (!error_.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(235, 110, 100, 255));
    ImGui::TextWrapped("This panel stopped: %s", error_.c_str());
    ImGui::PopStyleColor();
    ImGui::TextDisabled("Plugin %s. Help > Plugins shows it; the rest of the studio is unaffected.",
                        plugin_id_.c_str());
    return;
  }
  plugin::PanelFrame f;
  f.session = view_.get();
  f.size = frame.size();
  f.scale = frame.scale();
  f.index = frames_;
  std::optional<plugin::CrashMarker> marker;
  if (frames_ == 0) marker.emplace(app_, plugin_id_, "first draw");
  ++frames_;
  try {
    panel_->draw(f);
  } catch (const std::exception& e) {
    fail(fmt::format("draw() threw: {}", e.what()));
    throw;
  } catch (...) {
    fail("draw() threw an exception that is not a std::exception");
    throw;
  }
  if (f.another_frame) frame.request_another_frame();
}

}  // namespace rt::studio
