#include "variables_panel.h"

#include <QApplication>
#include <QClipboard>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTime>
#include <QToolButton>
#include <QVBoxLayout>

#include "kernel/qt/kernel_client.h"

namespace rt::studio {

VariablesWidget::VariablesWidget(KernelClient* kernel, QWidget* parent)
    : QWidget(parent), kernel_(kernel), proxy_(new QSortFilterProxyModel(this)), table_(new QTableView(this)),
      filter_(new QLineEdit(this)), stats_button_(new QToolButton(this)), status_(new QLabel(this)) {
  setObjectName(QStringLiteral("variablesWidget"));
  proxy_->setSourceModel(&model_);
  proxy_->setSortRole(Qt::UserRole);
  proxy_->setFilterKeyColumn(VariablesModel::name_column);
  proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);

  filter_->setPlaceholderText(tr("Filter by name"));
  filter_->setClearButtonEnabled(true);
  connect(filter_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);
  stats_button_->setText(tr("Compute stats"));
  stats_button_->setToolTip(tr("Min, max, mean and NaN count of the selected tensor or array"));
  stats_button_->setEnabled(false);
  connect(stats_button_, &QToolButton::clicked, this, &VariablesWidget::compute_stats_for_selection);

  table_->setObjectName(QStringLiteral("variablesTable"));
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(VariablesModel::name_column, Qt::AscendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setAlternatingRowColors(true);
  table_->setWordWrap(false);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  table_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(table_, &QTableView::customContextMenuRequested, this, &VariablesWidget::show_context_menu);
  connect(table_, &QTableView::doubleClicked, this, [this] {
    if (selected_has_numbers()) compute_stats_for_selection();
  });
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          [this] { stats_button_->setEnabled(selected_has_numbers()); });

  auto* top = new QHBoxLayout;
  top->setContentsMargins(0, 0, 0, 0);
  top->addWidget(filter_, 1);
  top->addWidget(stats_button_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->setSpacing(4);
  layout->addLayout(top);
  layout->addWidget(table_, 1);
  layout->addWidget(status_);
  status_->setObjectName(QStringLiteral("variablesStatus"));
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  running_refresh_.setInterval(kRunningRefreshMs);
  connect(&running_refresh_, &QTimer::timeout, this, &VariablesWidget::refresh);
  settle_refresh_.setSingleShot(true);
  settle_refresh_.setInterval(kSettleMs);
  connect(&settle_refresh_, &QTimer::timeout, this, &VariablesWidget::refresh);
  connect(kernel_, &KernelClient::variablesReady, this, &VariablesWidget::apply);
  connect(kernel_, &KernelClient::tensorStatsReady, this, [this](const TensorStats& stats) {
    model_.set_stats(stats);
  });
  connect(kernel_, &KernelClient::started, this, [this] {
    model_.clear_stats();
    if (!running_refresh_.isActive()) running_refresh_.start();
    refresh_soon();
  });
  connect(kernel_, &KernelClient::finished, this, [this] { refresh_soon(); });
  connect(kernel_, &KernelClient::stateChanged, this, [this](KernelState state) {
    if (state == KernelState::idle || state == KernelState::failed) {
      running_refresh_.stop();
      refresh_soon();
    } else if (state == KernelState::starting) {
      running_refresh_.stop();
      request_pending_ = false;  // a restart answers outstanding requests late or not at all
    }
    update_status();
  });
  update_status();
}

void VariablesWidget::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  refresh();
}

void VariablesWidget::refresh_soon() {
  if (!settle_refresh_.isActive()) settle_refresh_.start();
}

void VariablesWidget::refresh() {
  if (!isVisible() && snapshots_received_ > 0) return;  // hidden: the next show refreshes
  if (request_pending_ && request_age_.elapsed() < kStaleRequestMs) return;
  request_pending_ = true;
  request_age_.start();
  kernel_->requestVariables();
}

void VariablesWidget::apply(const VariablesSnapshot& snapshot) {
  request_pending_ = false;
  const QString selected = selected_name();
  const int rows_before = model_.rowCount();
  const bool names_change = !snapshot.error.empty() ? false : [&] {
    if (static_cast<std::size_t>(rows_before) != snapshot.variables.size()) return true;
    for (int r = 0; r < rows_before; ++r)
      if (model_.variable(r)->name != snapshot.variables[r].name) return true;
    return false;
  }();
  model_.set_snapshot(snapshot);
  ++snapshots_received_;
  if (!selected.isEmpty() && selected_name() != selected) {
    for (int row = 0; row < proxy_->rowCount(); ++row) {
      const QModelIndex index = proxy_->index(row, VariablesModel::name_column);
      if (index.data().toString() == selected) {
        table_->selectRow(row);
        break;
      }
    }
  }
  if (names_change && model_.rowCount() > 0) fit_columns();
  update_status();
  emit snapshotApplied(snapshot);
}

void VariablesWidget::fit_columns() {
  table_->resizeColumnsToContents();
  const int cap = table_->fontMetrics().horizontalAdvance(QStringLiteral("M")) * 16;
  for (int column = 0; column < VariablesModel::value_column; ++column)
    if (table_->columnWidth(column) > cap) table_->setColumnWidth(column, cap);
}

void VariablesWidget::compute_stats(const QString& name) { kernel_->requestTensorStats(name); }

void VariablesWidget::compute_stats_for_selection() {
  const QString name = selected_name();
  if (!name.isEmpty()) compute_stats(name);
}

QString VariablesWidget::selected_name() const {
  const QModelIndexList rows = table_->selectionModel()->selectedRows(VariablesModel::name_column);
  return rows.isEmpty() ? QString() : rows.first().data().toString();
}

bool VariablesWidget::selected_has_numbers() const {
  const QModelIndexList rows = table_->selectionModel()->selectedRows(VariablesModel::name_column);
  if (rows.isEmpty()) return false;
  const QString kind = rows.first().data(VariablesModel::kind_role).toString();
  return kind == QLatin1String("tensor") || kind == QLatin1String("array");
}

void VariablesWidget::show_context_menu(const QPoint& pos) {
  const QModelIndex index = table_->indexAt(pos);
  if (!index.isValid()) return;
  table_->selectRow(index.row());
  const QString name = selected_name();
  QMenu menu(this);
  QAction* stats = menu.addAction(tr("Compute stats (min, max, mean, NaN count)"));
  stats->setEnabled(selected_has_numbers());
  connect(stats, &QAction::triggered, this, [this, name] { compute_stats(name); });
  QAction* copy = menu.addAction(tr("Copy name"));
  connect(copy, &QAction::triggered, this, [name] { QApplication::clipboard()->setText(name); });
  menu.exec(table_->viewport()->mapToGlobal(pos));
}

void VariablesWidget::update_status() {
  QString text;
  if (!model_.last_error().isEmpty()) {
    text = tr("Cannot list variables: %1").arg(model_.last_error());
  } else if (snapshots_received_ == 0) {
    text = kernel_->state() == KernelState::failed ? tr("The kernel did not start") : tr("Waiting for the kernel…");
  } else if (model_.rowCount() == 0) {
    text = tr("No variables yet: run a cell");
  } else {
    text = model_.rowCount() == 1 ? tr("1 variable") : tr("%1 variables").arg(model_.rowCount());
    if (model_.snapshot().cell_running)
      text += tr(" · cell [%1] running").arg(model_.snapshot().execution_count);
    text += tr(" · updated %1").arg(QTime::currentTime().toString(QStringLiteral("HH:mm:ss")));
  }
  status_->setText(text);
}

QString VariablesPanel::title() const { return QObject::tr("Variables"); }

QWidget* VariablesPanel::create_widget(const PanelContext& context, QWidget* parent) {
  return new VariablesWidget(context.kernel, parent);
}

}  // namespace rt::studio
