// app/studio/panels/variables_model.h — the variables panel's table: one row per name in the kernel's namespace.
//
//   VariablesModel model;
//   model.set_snapshot(snapshot);                 // from KernelClient::variablesReady
//   model.set_stats(stats);                       // from KernelClient::tensorStatsReady: fills the Value column
//   model.data(model.index(0, VariablesModel::shape_column));   // "[64, 10]"
//
// Columns: Name, Type, Shape, Dtype, Device, Size, Value. Value is the repr for scalars and strings, the parameter
// count for modules, and for tensors/arrays "min … max … mean … NaN …" once statistics were computed (until the
// next cell starts: call clear_stats()). Qt::ToolTipRole gives the whole row in words, Qt::UserRole a sort key
// (numbers for Size, element count for Shape), kind_role the VariableKind name.
//
// Contracts: a snapshot with the same names in the same order updates rows in place (dataChanged), so a view's
// selection and scroll position survive the periodic refresh; other snapshots reset the model. A snapshot carrying
// an error leaves the rows as they were and only sets last_error().
#pragma once
#include <QAbstractTableModel>

#include <map>
#include <string>

#include "kernel/python_kernel.h"

namespace rt::studio {

class VariablesModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { name_column, type_column, shape_column, dtype_column, device_column, size_column, value_column,
                column_count };
  static constexpr int kind_role = Qt::UserRole + 1;

  explicit VariablesModel(QObject* parent = nullptr);

  void set_snapshot(const VariablesSnapshot& snapshot);
  void set_stats(const TensorStats& stats);
  void clear_stats();

  const VariablesSnapshot& snapshot() const { return snapshot_; }
  const VariableInfo* variable(int row) const;
  QString last_error() const { return last_error_; }
  // Statistics of `name` if computed since the last clear_stats(), else nullptr.
  const TensorStats* stats(const std::string& name) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  QString display_text(const VariableInfo& v, int column) const;
  QVariant sort_key(const VariableInfo& v, int column) const;

  VariablesSnapshot snapshot_;
  std::map<std::string, TensorStats> stats_;
  QString last_error_;
};

// "[64, 10]", "[]" for a 0-d tensor, "" when there is no shape.
QString format_shape(const VariableInfo& v);
// "0 B", "512 B", "1.5 KiB", "12.0 MiB"; "" for unknown (-1).
QString format_bytes(long long bytes);
// "min -1.2 · max 3.4 · mean 0.012 · NaN 0" (plus "· Inf N" when there are infinities), or the error.
QString format_stats(const TensorStats& stats);

}  // namespace rt::studio
