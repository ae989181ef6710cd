#include "plugin_host/plugins_dialog.h"

#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include "rt/plugin_host/plugin_manager.h"
#include "rt/plugin_host/plugin_settings.h"

namespace rt::studio {
namespace {

enum Column { kLoad, kId, kVersion, kKinds, kState, kLoadMs, kInitMs, kColumns };

QString kinds_of(const plugin::Manifest& m) {
  QStringList kinds;
  for (plugin::Kind k : m.kinds) kinds << QString::fromUtf8(plugin::kind_name(k));
  return kinds.join(QStringLiteral(", "));
}

bool failed(plugin::PluginState s) { return s == plugin::PluginState::Failed || s == plugin::PluginState::Invalid; }

}  // namespace

PluginsDialog::PluginsDialog(QWidget* parent) : QDialog(parent) {
  setObjectName(QStringLiteral("pluginsDialog"));
  setWindowTitle(tr("Installed Plugins"));
  resize(900, 480);
  auto* layout = new QVBoxLayout(this);
  table_ = new QTableWidget(0, kColumns, this);
  table_->setObjectName(QStringLiteral("pluginTable"));
  table_->setHorizontalHeaderLabels({tr("Load"), tr("Plugin"), tr("Version"), tr("Kinds"), tr("State"),
                                     tr("Load ms"), tr("Init ms")});
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setSectionResizeMode(kId, QHeaderView::Stretch);
  layout->addWidget(table_, 1);
  details_ = new QLabel(this);
  details_->setObjectName(QStringLiteral("pluginDetails"));
  details_->setWordWrap(true);
  details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  details_->setMinimumHeight(90);
  details_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  layout->addWidget(details_);
  notice_ = new QLabel(this);
  notice_->setObjectName(QStringLiteral("pluginNotice"));
  layout->addWidget(notice_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  QPushButton* refresh_button = buttons->addButton(tr("Refresh"), QDialogButtonBox::ActionRole);
  layout->addWidget(buttons);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(refresh_button, &QPushButton::clicked, this, &PluginsDialog::refresh);
  connect(table_, &QTableWidget::currentCellChanged, this, [this](int row) { show_details(row); });
  connect(table_, &QTableWidget::itemChanged, this, [this](QTableWidgetItem* item) {
    if (!filling_ && item->column() == kLoad) set_load(item->row(), item->checkState() == Qt::Checked);
  });
  refresh();
}

void PluginsDialog::refresh() {
  filling_ = true;
  auto lock = plugin::lock_process_plugins();
  const auto& records = plugin::process_plugins().plugins();
  plugin::PluginSettings settings;
  try {
    settings = plugin::PluginSettings::load();
  } catch (const std::exception& e) {
    notice_->setText(QString::fromUtf8(e.what()));
  }
  table_->setRowCount(int(records.size()));
  int first_failed = -1;
  for (int row = 0; row < int(records.size()); ++row) {
    const plugin::PluginRecord& r = records[size_t(row)];
    auto* load = new QTableWidgetItem();
    if (r.state != plugin::PluginState::Invalid) {
      bool on = r.manifest.enabled_by_default ? !settings.disabled.count(r.manifest.id)
                                              : settings.enabled.count(r.manifest.id) > 0;
      load->setFlags(Qt::ItemIsUserCheckable | Qt::ItemIsEnabled | Qt::ItemIsSelectable);
      load->setCheckState(on ? Qt::Checked : Qt::Unchecked);
    } else {
      load->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    }
    table_->setItem(row, kLoad, load);
    auto text = [&](Column c, const QString& s) {
      auto* item = new QTableWidgetItem(s);
      if (failed(r.state)) item->setForeground(QColor(200, 40, 40));
      table_->setItem(row, c, item);
    };
    text(kId, QString::fromStdString(r.manifest.id));
    text(kVersion, r.state == plugin::PluginState::Invalid ? QString() : QString::fromStdString(r.manifest.version.str()));
    text(kKinds, kinds_of(r.manifest));
    text(kState, QString::fromUtf8(plugin::state_name(r.state)));
    text(kLoadMs, r.load_ms > 0 ? QString::number(r.load_ms, 'f', 1) : QString());
    text(kInitMs, r.initialize_ms > 0 ? QString::number(r.initialize_ms, 'f', 1) : QString());
    if (failed(r.state) && first_failed < 0) first_failed = row;
  }
  table_->resizeColumnsToContents();
  table_->horizontalHeader()->setSectionResizeMode(kId, QHeaderView::Stretch);
  filling_ = false;
  if (records.empty()) {
    details_->setText(tr("No plugins found. A plugin is a folder with a plugin.json in the install's plugin folder, "
                         "~/.local/share/rustytorch/plugins or $RT_PLUGIN_PATH (docs/plugins.md)."));
  } else {
    table_->selectRow(first_failed >= 0 ? first_failed : 0);
    show_details(first_failed >= 0 ? first_failed : 0);
  }
}

void PluginsDialog::show_details(int row) {
  auto lock = plugin::lock_process_plugins();
  const auto& records = plugin::process_plugins().plugins();
  if (row < 0 || row >= int(records.size())) return details_->clear();
  const plugin::PluginRecord& r = records[size_t(row)];
  QString html = QStringLiteral("<b>%1</b> %2<br>").arg(QString::fromStdString(r.manifest.name).toHtmlEscaped(),
                                                        QString::fromStdString(r.manifest.id).toHtmlEscaped());
  if (!r.manifest.description.empty())
    html += QString::fromStdString(r.manifest.description).toHtmlEscaped() + QStringLiteral("<br>");
  if (!r.manifest.license.empty())
    html += tr("License: %1<br>").arg(QString::fromStdString(r.manifest.license).toHtmlEscaped());
  html += tr("Folder: %1<br>").arg(QString::fromStdString(r.manifest.folder().string()).toHtmlEscaped());
  if (!r.error.empty()) {
    html += QStringLiteral("<span style='color:#c82828'>%1</span>")
                .arg(QString::fromStdString(r.error).toHtmlEscaped());
  }
  details_->setText(html);
}

void PluginsDialog::set_load(int row, bool load) {
  std::string id;
  {
    auto lock = plugin::lock_process_plugins();
    const auto& records = plugin::process_plugins().plugins();
    if (row < 0 || row >= int(records.size())) return;
    id = records[size_t(row)].manifest.id;
  }
  try {
    plugin::PluginSettings s = plugin::PluginSettings::load();
    if (load) s.enable(id); else s.disable(id);
    s.save();
    notice_->setText(tr("%1 will %2 at the next start.").arg(QString::fromStdString(id),
                                                             load ? tr("load") : tr("not load")));
  } catch (const std::exception& e) {
    notice_->setText(QString::fromUtf8(e.what()));
  }
}

void show_plugins_dialog(QWidget* window) {
  auto* dialog = window->findChild<PluginsDialog*>(QStringLiteral("pluginsDialog"));
  if (!dialog) dialog = new PluginsDialog(window);
  dialog->refresh();
  dialog->show();
  dialog->raise();
  dialog->activateWindow();
}

}  // namespace rt::studio
