#include "rt/data/csv.h"

#include <charconv>
#include <cmath>

#include "data/file_contents.h"

namespace rt::data {
namespace {

[[noreturn]] void fail(const std::string& source, size_t line, const std::string& what) {
  throw ValueError("read_csv: '" + source + "'" + (line ? ", line " + std::to_string(line) : std::string()) + ": " +
                   what);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view line, char delimiter) {
  std::vector<std::string_view> fields;
  for (size_t start = 0;;) {
    const size_t end = line.find(delimiter, start);
    fields.push_back(trim(line.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start)));
    if (end == std::string_view::npos) return fields;
    start = end + 1;
  }
}

double parse_number(std::string_view field, const std::string& source, size_t line, size_t column) {
  const bool plus = !field.empty() && field.front() == '+';
  const std::string_view digits = plus ? field.substr(1) : field;
  double v = 0;
  std::from_chars_result r{digits.data(), std::errc::invalid_argument};
  if (!digits.empty() && !(plus && digits.front() == '-'))
    r = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (r.ec == std::errc::invalid_argument || r.ptr != digits.data() + digits.size())
    fail(source, line, "column " + std::to_string(column) + ": '" + std::string(field) + "' is not a number");
  if (r.ec == std::errc::result_out_of_range)
    fail(source, line, "column " + std::to_string(column) + ": '" + std::string(field) + "' is out of range for float64");
  return v;
}

}  // namespace

CsvTable parse_csv(std::string_view text, const CsvOptions& options, const std::string& source) {
  if (!is_floating(options.dtype))
    throw DTypeError("read_csv: features dtype must be floating, got " + std::string(dtype_name(options.dtype)));
  if (options.label_dtype != kInt64 && !is_floating(options.label_dtype))
    throw DTypeError("read_csv: label_dtype must be int64 or floating, got " + std::string(dtype_name(options.label_dtype)));
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);

  CsvTable table;
  std::vector<double> features, labels;
  size_t columns = 0, first_line = 0, rows = 0, label = 0;
  bool header_pending = options.header;
  size_t line_no = 0;
  for (size_t pos = 0; pos < text.size();) {
    const size_t nl = text.find('\n', pos);
    const std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    if (trim(line).empty()) continue;
    const std::vector<std::string_view> fields = split(line, options.delimiter);
    if (columns == 0) {
      columns = fields.size();
      first_line = line_no;
      if (options.label_column) {
        const int64_t c = *options.label_column;
        if (c < -int64_t(columns) || c >= int64_t(columns))
          fail(source, line_no, "label_column " + std::to_string(c) + " is out of range for " +
                                    std::to_string(columns) + " columns");
        label = size_t(c < 0 ? c + int64_t(columns) : c);
      }
    } else if (fields.size() != columns) {
      fail(source, line_no, "has " + std::to_string(fields.size()) + " fields but line " + std::to_string(first_line) +
                                " has " + std::to_string(columns));
    }
    if (header_pending) {
      header_pending = false;
      for (size_t c = 0; c < columns; ++c) {
        std::string_view name = fields[c];
        if (name.size() >= 2 && name.front() == '"' && name.back() == '"') name = name.substr(1, name.size() - 2);
        if (options.label_column && c == label) table.label_name = name;
        else table.column_names.emplace_back(name);
      }
      continue;
    }
    for (size_t c = 0; c < columns; ++c) {
      const double v = parse_number(fields[c], source, line_no, c + 1);
      if (!options.label_column || c != label) {
        features.push_back(v);
        continue;
      }
      if (options.label_dtype == kInt64 && (v != std::floor(v) || !(std::abs(v) < 9.2e18)))
        fail(source, line_no, "column " + std::to_string(c + 1) + ": label '" + std::string(fields[c]) +
                                  "' is not an integer (use a floating label_dtype for regression targets)");
      labels.push_back(v);
    }
    ++rows;
  }
  if (rows == 0) fail(source, 0, "no data rows");

  const int64_t feature_cols = int64_t(columns) - (options.label_column ? 1 : 0);
  table.features = make_tensor({int64_t(rows), feature_cols}, options.dtype);
  visit_dtype(options.dtype, [&]<typename T>() {
    T* p = table.features.data_ptr<T>();
    for (size_t i = 0; i < features.size(); ++i) p[i] = T(compute_t<T>(features[i]));
  });
  if (options.label_column) {
    table.labels = make_tensor({int64_t(rows)}, options.label_dtype);
    visit_dtype(options.label_dtype, [&]<typename T>() {
      T* p = table.labels.data_ptr<T>();
      for (size_t i = 0; i < labels.size(); ++i) p[i] = T(compute_t<T>(labels[i]));
    });
  }
  return table;
}

CsvTable read_csv(const std::filesystem::path& path, const CsvOptions& options) {
  return parse_csv(detail::read_file_contents(path, "read_csv"), options, path.string());
}

}  // namespace rt::data
