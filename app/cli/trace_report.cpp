#include "trace_report.h"

#include <fmt/core.h>

#include <cstdlib>
#include <ctime>

#include "rt/prof/summary.h"

namespace rt::cli {
namespace {

void append_steps(std::string& out, const rt::prof::SessionData& data) {
  const auto steps = rt::prof::step_breakdown(data);
  if (steps.empty()) return;
  out += fmt::format("\nSteps\n{:>6}  {:>12}  {:>12}  {:>12}  {:>12}  {}\n", "step", "wall", "ops", "backward",
                     "optimizer", "largest top-level op");
  for (const auto& s : steps) {
    const std::string largest =
        s.top_level.empty() ? std::string("-")
                            : fmt::format("{} ({})", s.top_level.front().first,
                                          rt::prof::format_time_ns(s.top_level.front().second));
    out += fmt::format("{:>6}  {:>12}  {:>12}  {:>12}  {:>12}  {}\n", s.step, rt::prof::format_time_ns(s.wall_ns),
                       rt::prof::format_time_ns(s.op_ns), rt::prof::format_time_ns(s.backward_ns),
                       rt::prof::format_time_ns(s.optimizer_ns), largest);
  }
}

// "12.34 GB/s", or in MB/s below 1 GB/s (small collectives on one machine); "-" without time.
std::string bandwidth(const rt::prof::CollectiveStats& r) {
  if (r.total_ns <= 0) return "-";
  const double gbps = r.algbw_gbps();
  return gbps >= 1.0 ? fmt::format("{:.2f} GB/s", gbps) : fmt::format("{:.1f} MB/s", gbps * 1e3);
}

void append_collectives(std::string& out, const rt::prof::SessionData& data) {
  const auto rows = rt::prof::collective_stats(data);
  if (rows.empty()) return;
  out += fmt::format("\nCollectives (backend start to end)\n{:<16}  {:<26}  {:>6}  {:>11}  {:>12}  {:>12}  {:>12}  "
                     "{:>12}  {:>10}\n",
                     "group", "collective", "calls", "bytes", "total", "avg", "max", "avg queued", "algbw");
  for (const auto& r : rows)
    out += fmt::format("{:<16}  {:<26}  {:>6}  {:>11}  {:>12}  {:>12}  {:>12}  {:>12}  {:>10}\n", r.group, r.name,
                       r.calls, format_bytes(r.bytes), rt::prof::format_time_ns(r.total_ns),
                       rt::prof::format_time_ns(r.avg_ns()), rt::prof::format_time_ns(r.max_ns),
                       rt::prof::format_time_ns(r.calls ? r.queued_ns / r.calls : 0),
                       bandwidth(r));
}

void append_memory(std::string& out, const rt::prof::SessionData& data) {
  if (data.memory.empty()) return;
  const rt::prof::MemoryTimeline memory(data);
  out += fmt::format("\nMemory (all devices): peak {} at {} after the start\n", format_bytes(memory.peak_bytes()),
                     rt::prof::format_time_ns(memory.peak_time_ns() - data.start_ns));
  out += fmt::format("{:>16}  {:>12}  {:>12}  {:>12}\n", "category", "at peak", "own peak", "allocated");
  for (size_t c = 0; c < rt::prof::kMemoryCategoryCount; ++c) {
    const auto category = static_cast<rt::prof::MemoryCategoryId>(c);
    if (memory.allocated_total()[category] == 0) continue;
    out += fmt::format("{:>16}  {:>12}  {:>12}  {:>12}\n", rt::prof::memory_category_name(category),
                       format_bytes(memory.at_peak()[category]), format_bytes(memory.peak_by_category()[category]),
                       format_bytes(memory.allocated_total()[category]));
  }
}

std::string local_time(int64_t unix_ns) {
  if (unix_ns <= 0) return "-";
  const std::time_t seconds = static_cast<std::time_t>(unix_ns / 1'000'000'000);
  std::tm tm{};
  localtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
  return text;
}

}  // namespace

std::string format_bytes(int64_t bytes) {
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (std::llabs(bytes) < 1024) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes) / 1024;
  size_t unit = 0;
  while (std::abs(value) >= 1024 && unit + 1 < std::size(units)) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{:.2f} {}", value, units[unit]);
}

std::string format_summary(const rt::prof::SessionData& data, const SummaryOptions& options) {
  std::string out =
      rt::prof::format_table(rt::prof::key_averages(data, options.group_by_shape), options.sort_by, options.row_limit);
  append_steps(out, data);
  append_collectives(out, data);
  append_memory(out, data);
  if (data.dropped_records > 0)
    out += fmt::format("\n{} records were dropped while recording (see the profiler's notes on buffers)\n",
                       data.dropped_records);
  return out;
}

std::string format_session_list(const std::vector<rt::prof::SessionInfo>& sessions) {
  std::string out = fmt::format("{:>5}  {:<19}  {:>12}  {:<8}  {:>9}  {:>9}  {:>9}  {}\n", "id", "created", "duration",
                                "complete", "ops", "gpu", "memory", "name");
  for (const auto& s : sessions) {
    const std::string duration = s.end_ns > s.start_ns ? rt::prof::format_time_ns(s.end_ns - s.start_ns) : "-";
    out += fmt::format("{:>5}  {:<19}  {:>12}  {:<8}  {:>9}  {:>9}  {:>9}  {}\n", s.id, local_time(s.created_unix_ns),
                       duration, s.complete ? "yes" : "no", s.op_count, s.gpu_count, s.memory_count, s.name);
  }
  return out;
}

}  // namespace rt::cli
