// app/studio/panels/variables_panel.h — the Variables panel: tensors, modules, arrays and scalars in the kernel's
// namespace, refreshed while a cell runs.
//
//   registry.add(std::make_unique<VariablesPanel>());          // panels/builtin_panels.cpp
//
//   auto* widget = new VariablesWidget(kernelClient, parent);   // what the panel's dock shows
//   widget->model().rowCount();                                  // one row per variable
//   widget->compute_stats("w");                                  // fills w's Value with min/max/mean/NaN
//
// Refresh policy: a snapshot is requested kSettleMs after the kernel becomes idle or a cell finishes (one request
// for a burst of short cells, as in Run All), and every kRunningRefreshMs while a cell runs. Requests are asynchronous (KernelClient::requestVariables, answered by the
// kernel's inspector thread between two bytecodes of the running cell), so the panel never blocks the GUI or the
// kernel; at most one request is outstanding (a lost answer is re-requested after kStaleRequestMs). While the
// panel is hidden it does not poll. Statistics are computed only on demand (context menu, toolbar button or
// double click on a tensor) and are cleared when the next cell starts, since values may change.
#pragma once
#include <QElapsedTimer>
#include <QTimer>
#include <QWidget>

#include "panels/variables_model.h"
#include "shell/panel.h"

class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;
class QToolButton;

namespace rt::studio {

class KernelClient;

class VariablesWidget : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kRunningRefreshMs = 500;
  static constexpr int kStaleRequestMs = 3000;
  static constexpr int kSettleMs = 100;

  explicit VariablesWidget(KernelClient* kernel, QWidget* parent = nullptr);

  VariablesModel& model() { return model_; }
  QTableView* table() const { return table_; }
  // Requests a snapshot now unless one is outstanding.
  void refresh();
  // Requests a snapshot kSettleMs from now (once for several calls in that time).
  void refresh_soon();
  // Requests statistics of the tensor or array `name`.
  void compute_stats(const QString& name);
  // Snapshots applied so far (tests and the status line).
  int snapshots_received() const { return snapshots_received_; }

 signals:
  void snapshotApplied(const rt::studio::VariablesSnapshot& snapshot);

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void apply(const VariablesSnapshot& snapshot);
  void fit_columns();
  void compute_stats_for_selection();
  void show_context_menu(const QPoint& pos);
  QString selected_name() const;
  bool selected_has_numbers() const;
  void update_status();

  KernelClient* kernel_;
  VariablesModel model_;
  QSortFilterProxyModel* proxy_;
  QTableView* table_;
  QLineEdit* filter_;
  QToolButton* stats_button_;
  QLabel* status_;
  QTimer running_refresh_;
  QTimer settle_refresh_;
  QElapsedTimer request_age_;
  bool request_pending_ = false;
  int snapshots_received_ = 0;
};

class VariablesPanel final : public StudioPanel {
 public:
  QString id() const override { return QStringLiteral("variables"); }
  QString title() const override;
  Qt::DockWidgetArea default_area() const override { return Qt::RightDockWidgetArea; }
  QWidget* create_widget(const PanelContext& context, QWidget* parent) override;
};

}  // namespace rt::studio
