#include <algorithm>
#include <fmt/format.h>

#include "rt/error.h"
#include "rt/prof/summary.h"

namespace rt::prof {
namespace {

constexpr int kColumnWidth = 12;
constexpr int kMaxNameWidth = 55;
constexpr int kMaxShapesWidth = 80;
constexpr int kSpacing = 2;

using SortKey = double (*)(const OpStats&);

struct SortOption {
  const char* name;
  SortKey key;
};

constexpr SortOption kSortOptions[] = {
    {"cpu_time_total", [](const OpStats& s) { return double(s.total_ns); }},
    {"self_cpu_time_total", [](const OpStats& s) { return double(s.self_ns); }},
    {"cpu_time", [](const OpStats& s) { return s.calls ? double(s.total_ns) / double(s.calls) : 0.0; }},
    {"count", [](const OpStats& s) { return double(s.calls); }},
    {"cuda_time_total", [](const OpStats& s) { return double(s.device_total_ns); }},
    {"self_cuda_time_total", [](const OpStats& s) { return double(s.self_device_ns); }},
    {"cuda_time", [](const OpStats& s) { return s.calls ? double(s.device_total_ns) / double(s.calls) : 0.0; }},
    {"cpu_memory_usage", [](const OpStats& s) { return double(s.cpu_memory_bytes); }},
    {"self_cpu_memory_usage", [](const OpStats& s) { return double(s.self_cpu_memory_bytes); }},
    {"cuda_memory_usage", [](const OpStats& s) { return double(s.device_memory_bytes); }},
    {"self_cuda_memory_usage", [](const OpStats& s) { return double(s.self_device_memory_bytes); }},
};

SortKey find_sort_key(std::string_view sort_by) {
  std::string valid;
  for (const SortOption& o : kSortOptions) {
    if (sort_by == o.name) return o.key;
    valid += fmt::format("{}{}", valid.empty() ? "" : ", ", o.name);
  }
  throw ValueError(fmt::format("format_table: unknown sort_by '{}': use one of {}", sort_by, valid));
}

std::string share(double part, double whole) {
  return whole == 0 ? std::string("NaN") : fmt::format("{:.2f}%", part * 100.0 / whole);
}

// PyTorch's memory cells: "1.50 Mb", "-512 b".
std::string format_memory(int64_t bytes) {
  constexpr double kKb = 1024.0, kMb = kKb * 1024.0, kGb = kMb * 1024.0;
  const double b = double(bytes), size = b < 0 ? -b : b;
  if (size >= kGb) return fmt::format("{:.2f} Gb", b / kGb);
  if (size >= kMb) return fmt::format("{:.2f} Mb", b / kMb);
  if (size >= kKb) return fmt::format("{:.2f} Kb", b / kKb);
  return fmt::format("{} b", bytes);
}

std::string format_time_us(double us) {
  if (us >= 1e6) return fmt::format("{:.3f}s", us / 1e6);
  if (us >= 1e3) return fmt::format("{:.3f}ms", us / 1e3);
  return fmt::format("{:.3f}us", us);
}

class TableLayout {
 public:
  void add_column(int width) { widths_.push_back(width); }
  std::string separator() const {
    std::string s;
    for (int w : widths_) s += std::string(size_t(w), '-') + std::string(kSpacing, ' ');
    return s + "\n";
  }
  std::string row(const std::vector<std::string>& cells) const {
    std::string s;
    for (size_t i = 0; i < cells.size(); ++i) s += fmt::format("{:>{}}", cells[i], widths_[i]) + std::string(kSpacing, ' ');
    return s + "\n";
  }

 private:
  std::vector<int> widths_;
};

}  // namespace

std::string format_time_ns(int64_t ns) { return format_time_us(double(ns) / 1000.0); }

std::string format_table(const std::vector<OpStats>& input, std::string_view sort_by, int row_limit) {
  const SortKey key = find_sort_key(sort_by);
  if (input.empty()) return "";
  std::vector<OpStats> rows = input;
  std::stable_sort(rows.begin(), rows.end(), [&](const OpStats& a, const OpStats& b) { return key(a) > key(b); });

  const bool has_device = std::any_of(rows.begin(), rows.end(), [](const OpStats& s) { return s.self_device_ns > 0; });
  const bool has_shapes = std::any_of(rows.begin(), rows.end(), [](const OpStats& s) { return !s.input_shapes.empty(); });
  const bool has_cpu_memory = std::any_of(rows.begin(), rows.end(), [](const OpStats& s) {
    return s.cpu_memory_bytes != 0 || s.self_cpu_memory_bytes != 0;
  });
  const bool has_device_memory = std::any_of(rows.begin(), rows.end(), [](const OpStats& s) {
    return s.device_memory_bytes != 0 || s.self_device_memory_bytes != 0;
  });
  size_t name_width = 0, shapes_width = 0;
  for (const OpStats& s : rows) {
    name_width = std::max(name_width, s.name.size() + 4);
    shapes_width = std::max(shapes_width, s.input_shapes.size() + 4);
  }
  name_width = std::min<size_t>(name_width, kMaxNameWidth);
  shapes_width = std::min<size_t>(shapes_width, kMaxShapesWidth);

  std::vector<std::string> headers = {"Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"};
  if (has_device) headers.insert(headers.end(), {"Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"});
  if (has_cpu_memory || has_device_memory) headers.insert(headers.end(), {"CPU Mem", "Self CPU Mem"});
  if (has_device_memory) headers.insert(headers.end(), {"CUDA Mem", "Self CUDA Mem"});
  headers.push_back("# of Calls");
  TableLayout layout;
  layout.add_column(int(name_width));
  for (size_t i = 1; i < headers.size(); ++i) layout.add_column(kColumnWidth);
  if (has_shapes) {
    headers.push_back("Input Shapes");
    layout.add_column(int(shapes_width));
  }

  double self_total_us = 0, self_device_total_us = 0;
  for (const OpStats& s : rows) {
    self_total_us += double(s.self_ns) / 1000.0;
    self_device_total_us += double(s.self_device_ns) / 1000.0;
  }

  std::string out = layout.separator() + layout.row(headers) + layout.separator();
  int shown = 0;
  for (const OpStats& s : rows) {
    if (row_limit >= 0 && shown == row_limit) break;
    ++shown;
    std::string name = s.name;
    if (name.size() >= size_t(kMaxNameWidth - 3)) name = name.substr(0, kMaxNameWidth - 3) + "...";
    const double self_us = double(s.self_ns) / 1000.0, total_us = double(s.total_ns) / 1000.0;
    std::vector<std::string> cells = {name,
                                      share(self_us, self_total_us),
                                      format_time_us(self_us),
                                      share(total_us, self_total_us),
                                      format_time_us(total_us),
                                      format_time_us(s.calls ? total_us / double(s.calls) : 0.0)};
    if (has_device) {
      const double self_dev = double(s.self_device_ns) / 1000.0, total_dev = double(s.device_total_ns) / 1000.0;
      cells.push_back(format_time_us(self_dev));
      cells.push_back(share(self_dev, self_device_total_us));
      cells.push_back(format_time_us(total_dev));
      cells.push_back(format_time_us(s.calls ? total_dev / double(s.calls) : 0.0));
    }
    if (has_cpu_memory || has_device_memory) {
      cells.push_back(format_memory(s.cpu_memory_bytes));
      cells.push_back(format_memory(s.self_cpu_memory_bytes));
    }
    if (has_device_memory) {
      cells.push_back(format_memory(s.device_memory_bytes));
      cells.push_back(format_memory(s.self_device_memory_bytes));
    }
    cells.push_back(std::to_string(s.calls));
    if (has_shapes) cells.push_back(s.input_shapes.substr(0, shapes_width));
    out += layout.row(cells);
  }
  out += layout.separator();
  out += fmt::format("Self CPU time total: {}\n", format_time_us(self_total_us));
  if (has_device) out += fmt::format("Self CUDA time total: {}\n", format_time_us(self_device_total_us));
  return out;
}

}  // namespace rt::prof
