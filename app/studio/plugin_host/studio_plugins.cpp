#include "plugin_host/studio_plugins.h"

#include <QMessageBox>
#include <QObject>

#include <fmt/format.h>

#include "plugin_host/panel_compat.h"
#include "plugin_host/plugin_panel_widget.h"
#include "plugin_host/plugins_dialog.h"
#include "rt/plugin_host/plugin_manager.h"
#include "rt/plugin_host/plugin_settings.h"
#include "shell/panel.h"

namespace rt::studio {
namespace {

// A panel plugin as one of the studio's docks.
class PluginStudioPanel final : public StudioPanel {
 public:
  explicit PluginStudioPanel(const plugin::PluginRecord& record) : record_(record) {}
  QString id() const override { return QStringLiteral("plugin-") + QString::fromUtf8(record_.info->panel->panel_id); }
  QString title() const override { return QString::fromUtf8(record_.info->panel->title); }
  Qt::DockWidgetArea default_area() const override { return Qt::RightDockWidgetArea; }
  bool needs_opengl() const override { return true; }
  QWidget* create_widget(const PanelContext&, QWidget* parent) override {
    return new PluginPanelWidget(record_, parent);
  }

 private:
  const plugin::PluginRecord& record_;  // process_plugins() never removes records
};

bool ask_with_a_question_box(const plugin::CrashRecord& c) {
  QString text = QObject::tr("The studio closed unexpectedly while the plugin %1 was in its %2 step.\n\n"
                             "Disable this plugin? You can enable it again in Help > About Plugins… or with "
                             "`rtorch plugin enable %1`.")
                     .arg(QString::fromStdString(c.plugin_id), QString::fromStdString(c.phase));
  return QMessageBox::question(nullptr, QObject::tr("A plugin crashed the studio"), text,
                               QMessageBox::Yes | QMessageBox::No, QMessageBox::Yes) == QMessageBox::Yes;
}

}  // namespace

void register_plugins(PanelRegistry& registry, const StudioPluginOptions& options) {
  plugin::PluginSettings settings;
  std::string settings_error;
  try {
    settings = plugin::PluginSettings::load();
  } catch (const std::exception& e) {
    settings_error = e.what();
    qWarning("rtorch-studio: %s", e.what());
  }
  for (const plugin::CrashRecord& c : plugin::crashes_left_behind("studio")) {
    bool disable = options.ask_to_disable ? options.ask_to_disable(c) : ask_with_a_question_box(c);
    if (disable && settings_error.empty()) {
      settings.disable(c.plugin_id);
      try {
        settings.save();
      } catch (const std::exception& e) {
        qWarning("rtorch-studio: %s", e.what());
      }
    }
    plugin::forget_crash(c);
  }

  plugin::ManagerOptions mo = settings.manager_options();
  mo.app = "studio";
  mo.safe_mode = options.safe_mode;
  mo.noload = options.noload;
  {
    auto lock = plugin::lock_process_plugins();
    plugin::PluginManager& pm = plugin::process_plugins();
    pm.set_options(mo);
    pm.discover(options.search_paths.empty() ? plugin::default_search_paths() : options.search_paths);
    pm.load_and_initialize();
    pm.extensions_initialized();
    for (const plugin::PluginRecord& r : pm.plugins()) {
      if (!r.info || !r.manifest.has_kind(plugin::Kind::Panel)) continue;
      if (r.state != plugin::PluginState::Running && r.state != plugin::PluginState::Initialized) continue;
      std::string why = panel_incompatibility(r.info->panel, r.manifest);
      if (why.empty()) {
        try {
          registry.add(std::make_unique<PluginStudioPanel>(r));
        } catch (const std::exception& e) {
          why = fmt::format("{}: {}", r.manifest.id, e.what());
        }
      }
      if (!why.empty()) pm.mark_failed(r.manifest.id, why);
    }
  }

  registry.add_command({QStringLiteral("actionPlugins"), QObject::tr("&Help"), QObject::tr("About &Plugins…"),
                        [](QWidget* window) { show_plugins_dialog(window); }});
}

void run_delayed_plugin_initialization() {
  auto lock = plugin::lock_process_plugins();
  plugin::process_plugins().delayed_initialize();
}

}  // namespace rt::studio
