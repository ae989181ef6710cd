#include "variables_model.h"

#include <QStringList>

namespace rt::studio {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

bool same_names(const VariablesSnapshot& a, const VariablesSnapshot& b) {
  if (a.variables.size() != b.variables.size()) return false;
  for (std::size_t i = 0; i < a.variables.size(); ++i)
    if (a.variables[i].name != b.variables[i].name) return false;
  return true;
}

bool has_numbers(VariableKind kind) { return kind == VariableKind::tensor || kind == VariableKind::array; }

}  // namespace

QString format_shape(const VariableInfo& v) {
  if (v.shape.empty()) return has_numbers(v.kind) ? QStringLiteral("[]") : QString();
  QStringList parts;
  for (const int64_t d : v.shape) parts << QString::number(d);
  return QStringLiteral("[%1]").arg(parts.join(QStringLiteral(", ")));
}

QString format_bytes(long long bytes) {
  if (bytes < 0) return {};
  if (bytes < 1024) return QStringLiteral("%1 B").arg(bytes);
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  int unit = 0;
  while (value >= 1024.0 && unit < 3) {
    value /= 1024.0;
    ++unit;
  }
  return QStringLiteral("%1 %2").arg(value, 0, 'f', 1).arg(QLatin1String(units[unit]));
}

QString format_stats(const TensorStats& s) {
  if (!s.error.empty()) return QObject::tr("stats failed: %1").arg(qs(s.error));
  QString text = QObject::tr("min %1 · max %2 · mean %3 · NaN %4")
                     .arg(QString::number(s.min, 'g', 5), QString::number(s.max, 'g', 5),
                          QString::number(s.mean, 'g', 5))
                     .arg(s.nan_count);
  if (s.inf_count > 0) text += QObject::tr(" · Inf %1").arg(s.inf_count);
  return text;
}

VariablesModel::VariablesModel(QObject* parent) : QAbstractTableModel(parent) {}

void VariablesModel::set_snapshot(const VariablesSnapshot& snapshot) {
  if (!snapshot.error.empty()) {
    last_error_ = qs(snapshot.error);
    return;
  }
  last_error_.clear();
  if (same_names(snapshot_, snapshot)) {
    snapshot_ = snapshot;
    if (!snapshot_.variables.empty())
      emit dataChanged(index(0, 0), index(rowCount() - 1, column_count - 1));
    return;
  }
  beginResetModel();
  snapshot_ = snapshot;
  endResetModel();
}

void VariablesModel::set_stats(const TensorStats& stats) {
  stats_[stats.name] = stats;
  for (int row = 0; row < rowCount(); ++row)
    if (snapshot_.variables[row].name == stats.name)
      emit dataChanged(index(row, value_column), index(row, value_column));
}

void VariablesModel::clear_stats() {
  if (stats_.empty()) return;
  stats_.clear();
  if (rowCount() > 0) emit dataChanged(index(0, value_column), index(rowCount() - 1, value_column));
}

const VariableInfo* VariablesModel::variable(int row) const {
  if (row < 0 || row >= rowCount()) return nullptr;
  return &snapshot_.variables[row];
}

const TensorStats* VariablesModel::stats(const std::string& name) const {
  const auto it = stats_.find(name);
  return it == stats_.end() ? nullptr : &it->second;
}

int VariablesModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(snapshot_.variables.size());
}

int VariablesModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : column_count; }

QString VariablesModel::display_text(const VariableInfo& v, int column) const {
  switch (column) {
    case name_column: return qs(v.name);
    case type_column:
      return v.requires_grad ? QObject::tr("%1 (grad)").arg(qs(v.type_name)) : qs(v.type_name);
    case shape_column: return format_shape(v);
    case dtype_column: return qs(v.dtype);
    case device_column: return qs(v.device);
    case size_column: return format_bytes(v.bytes);
    case value_column:
      if (const TensorStats* s = stats(v.name)) return format_stats(*s);
      if (v.kind == VariableKind::module && v.parameter_count > 0)
        return QObject::tr("%L1 params").arg(v.parameter_count);
      return qs(v.value);
  }
  return {};
}

QVariant VariablesModel::sort_key(const VariableInfo& v, int column) const {
  if (column == size_column) return QVariant::fromValue<qlonglong>(v.bytes);
  if (column == shape_column) {
    qlonglong numel = v.shape.empty() ? (has_numbers(v.kind) ? 1 : -1) : 1;
    for (const int64_t d : v.shape) numel *= d;
    return numel;
  }
  return display_text(v, column);
}

QVariant VariablesModel::data(const QModelIndex& index, int role) const {
  const VariableInfo* v = index.isValid() ? variable(index.row()) : nullptr;
  if (!v) return {};
  switch (role) {
    case Qt::DisplayRole: return display_text(*v, index.column());
    case Qt::UserRole: return sort_key(*v, index.column());
    case kind_role: return QString::fromLatin1(to_string(v->kind));
    case Qt::TextAlignmentRole:
      if (index.column() == size_column) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
      return {};
    case Qt::ToolTipRole: {
      QStringList lines{QStringLiteral("%1: %2 (%3)").arg(qs(v->name), qs(v->type_name),
                                                          QString::fromLatin1(to_string(v->kind)))};
      if (!v->shape.empty()) lines << QObject::tr("shape %1").arg(format_shape(*v));
      if (!v->dtype.empty()) lines << QObject::tr("dtype %1 on %2").arg(qs(v->dtype), qs(v->device));
      if (v->bytes >= 0) lines << QObject::tr("%L1 bytes").arg(v->bytes);
      if (v->requires_grad) lines << QObject::tr("requires grad");
      if (has_numbers(v->kind) && !stats(v->name))
        lines << QObject::tr("Compute stats (context menu) for min, max, mean and NaN count");
      const QString value = display_text(*v, value_column);
      if (!value.isEmpty()) lines << value;
      return lines.join('\n');
    }
  }
  return {};
}

QVariant VariablesModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case name_column: return tr("Name");
    case type_column: return tr("Type");
    case shape_column: return tr("Shape");
    case dtype_column: return tr("Dtype");
    case device_column: return tr("Device");
    case size_column: return tr("Size");
    case value_column: return tr("Value");
  }
  return {};
}

}  // namespace rt::studio
