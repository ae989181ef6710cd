// plugin_host/plugins_dialog.h — Help > About Plugins…: every plugin found, its state, error and load times,
// and whether to load it at the next start (Qt Creator's "About Plugins").
//
//   show_plugins_dialog(window);   // one dialog per window, raised if already open
//
// Contracts
// - Lists process_plugins() (taken under lock_process_plugins(), so plugins the notebook loads with
//   rt.ops.load_library appear after Refresh): a row per plugin with Load (check box), id, version, kinds,
//   state, load and initialize times in ms; the selected row's name, description, license, folder and error
//   (failed plugins' rows are red and selected first).
// - Un/checking Load writes the user's settings (rt/plugin_host/plugin_settings.h); it takes effect at the next
//   start, as the dialog says. A plugin whose manifest is invalid has no check box.
#pragma once
#include <QDialog>

class QLabel;
class QTableWidget;

namespace rt::studio {

class PluginsDialog : public QDialog {
  Q_OBJECT

 public:
  explicit PluginsDialog(QWidget* parent = nullptr);
  QTableWidget* table() const { return table_; }
  QLabel* details() const { return details_; }

 public slots:
  void refresh();

 private:
  void show_details(int row);
  void set_load(int row, bool load);

  QTableWidget* table_ = nullptr;
  QLabel* details_ = nullptr;
  QLabel* notice_ = nullptr;
  bool filling_ = false;
};

void show_plugins_dialog(QWidget* window);

}  // namespace rt::studio
