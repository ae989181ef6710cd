// rt/prof/summary.h — what a session means: PyTorch-style top-ops tables, per-step breakdowns,
// memory over time by category and session comparisons. Pure functions over SessionData, shared
// by the Python profiler (key_averages().table()), the CLI and the store's queries.
//
//   std::vector<rt::prof::OpStats> ops = rt::prof::key_averages(data);
//   std::puts(rt::prof::format_table(ops, "self_cpu_time_total", 10).c_str());
//   for (const rt::prof::StepBreakdown& s : rt::prof::step_breakdown(data)) ...
//   rt::prof::MemoryTimeline mem(data);           // all devices; MemoryTimeline(data, 0) for cuda:0
//   int64_t live = mem.live_at(t).total();
//   auto diff = rt::prof::compare_sessions(before, after);  // largest change first
//   for (const rt::prof::CollectiveStats& c : rt::prof::collective_stats(data))   // nsys's NCCL summary
//     std::printf("%s %s: %lld calls, %.2f GB/s\n", c.group.c_str(), c.name.c_str(), (long long)c.calls, c.algbw_gbps());
//
// Contracts
// - Self time = an op's duration minus the durations of its direct children on the same thread.
//   Nesting is rebuilt from the intervals (not from OpRecord::depth) by rt::prof::nest_slices, as in
//   the exported trace and the timeline (Note [Nesting clamp] in rt/prof/nesting.h): a child sticking
//   out of its parent is clamped to end with it, so its total and self time count only the part inside,
//   and self <= total.
// - Every op kind counts (engine ops, backward nodes, user ranges), like PyTorch's table.
// - Device time: GPU kernels, memcpys and memsets whose external_id equals an op's non-zero
//   correlation_id are that op's self device time; device total adds its descendants'.
// - Op memory (OpStats::*_memory_bytes): each memory event belongs to the innermost op open on its
//   thread at its time (start <= time <= clamped end); allocations add, frees subtract.
// - Memory: frees are attributed to the category of the allocation at the same (device, address)
//   when it was seen, so a free recorded with a wrong category cannot skew the per-category totals.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rt/export.h"
#include "rt/prof/events.h"

RT_API_BEGIN

namespace rt::prof {

// [SECTION] Top ops (PyTorch's key_averages)

struct OpStats {
  std::string name;
  std::string input_shapes;  // empty unless grouped by input shape
  int64_t calls = 0;
  int64_t self_ns = 0;
  int64_t total_ns = 0;
  int64_t self_device_ns = 0;
  int64_t device_total_ns = 0;
  // Bytes allocated minus bytes freed while the op ran (PyTorch's cpu_memory_usage and
  // cuda_memory_usage): "self" counts what it did itself, the others include the ops it called.
  int64_t self_cpu_memory_bytes = 0;
  int64_t cpu_memory_bytes = 0;
  int64_t self_device_memory_bytes = 0;
  int64_t device_memory_bytes = 0;
  int64_t avg_ns() const { return calls ? total_ns / calls : 0; }
  int64_t device_avg_ns() const { return calls ? device_total_ns / calls : 0; }
};

// One row per op name (per name and input shapes when group_by_input_shape), sorted by
// total time, largest first, then by name.
std::vector<OpStats> key_averages(const SessionData& data, bool group_by_input_shape = false);

// PyTorch's table layout. sort_by: "cpu_time_total", "self_cpu_time_total", "cpu_time" (avg),
// "count", "cuda_time_total", "self_cuda_time_total", "cuda_time", "cpu_memory_usage",
// "self_cpu_memory_usage", "cuda_memory_usage", "self_cuda_memory_usage"; an unknown key throws
// rt::ValueError listing the valid ones. row_limit < 0 prints every row. The "CPU Mem" / "Self CPU
// Mem" columns (and the CUDA ones) appear when some row has memory, i.e. with profile_memory.
std::string format_table(const std::vector<OpStats>& rows, std::string_view sort_by = "cpu_time_total",
                         int row_limit = 100);

// [SECTION] Steps

struct StepBreakdown {
  int64_t step = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t wall_ns = 0;
  int64_t op_ns = 0;         // top-level ops inside the step, clipped to it (all threads)
  int64_t backward_ns = 0;   // outermost backward nodes inside the step
  int64_t optimizer_ns = 0;  // outermost user ranges whose name contains "optimizer" (any case)
  std::vector<std::pair<std::string, int64_t>> top_level;  // top-level op name -> time, largest first
};

std::vector<StepBreakdown> step_breakdown(const SessionData& data);

// [SECTION] Memory

inline constexpr size_t kMemoryCategoryCount = 6;
std::string_view memory_category_name(MemoryCategoryId c);  // "parameter", "gradient"...

struct MemoryTotals {
  std::array<int64_t, kMemoryCategoryCount> bytes{};  // live bytes, indexed by MemoryCategoryId
  int64_t total() const;
  int64_t operator[](MemoryCategoryId c) const { return bytes[size_t(c)]; }
};

struct MemoryPoint {
  int64_t time_ns = 0;
  int64_t bytes = 0;  // live bytes after the events at time_ns
};

// Live bytes per category over time, built once, queried at any time in O(log n).
class MemoryTimeline {
 public:
  explicit MemoryTimeline(const SessionData& data, std::optional<int32_t> device = std::nullopt);

  MemoryTotals live_at(int64_t time_ns) const;  // after every event at or before time_ns
  int64_t peak_bytes() const { return peak_bytes_; }
  int64_t peak_time_ns() const { return peak_time_ns_; }
  const MemoryTotals& at_peak() const { return at_peak_; }
  const MemoryTotals& peak_by_category() const { return peak_by_category_; }  // each its own max
  const MemoryTotals& allocated_total() const { return allocated_total_; }    // sum of allocations
  const MemoryTotals& freed_total() const { return freed_total_; }
  const std::vector<MemoryPoint>& series(MemoryCategoryId c) const { return series_[size_t(c)]; }
  const std::vector<MemoryPoint>& total_series() const { return total_series_; }

 private:
  std::vector<int64_t> times_;
  std::vector<MemoryTotals> totals_;  // after each distinct time in times_
  std::array<std::vector<MemoryPoint>, kMemoryCategoryCount> series_;
  std::vector<MemoryPoint> total_series_;
  int64_t peak_bytes_ = 0;
  int64_t peak_time_ns_ = 0;
  MemoryTotals at_peak_, peak_by_category_, allocated_total_, freed_total_;
};

// [SECTION] Collectives

// One process group's calls of one collective (CollectiveRecord), from the backend's start to the end.
struct CollectiveStats {
  std::string group;       // "default"
  std::string name;        // "all_reduce"
  int64_t calls = 0;
  int64_t bytes = 0;       // every call's tensors
  int64_t total_ns = 0;    // sum of start -> end
  int64_t max_ns = 0;
  int64_t queued_ns = 0;   // sum of enqueue -> start (waiting for gloo's worker)
  int64_t avg_ns() const { return calls ? total_ns / calls : 0; }
  // Algorithm bandwidth, as nccl-tests and nsys report it: bytes over time, in GB/s (1e9 bytes); 0 without time.
  double algbw_gbps() const { return total_ns > 0 ? double(bytes) / double(total_ns) : 0.0; }
};

// One row per (group, collective), most total time first, then by group and name; ranks of a merged job
// (CollectiveRecord::rank) are counted together.
std::vector<CollectiveStats> collective_stats(const SessionData& data);

// [SECTION] Comparing sessions

struct OpComparison {
  std::string name;
  int64_t calls_a = 0, calls_b = 0;
  int64_t total_ns_a = 0, total_ns_b = 0;
  int64_t self_ns_a = 0, self_ns_b = 0;
  int64_t total_delta_ns() const { return total_ns_b - total_ns_a; }
  int64_t self_delta_ns() const { return self_ns_b - self_ns_a; }
  // b / a; 1 when both are 0, +infinity when only a is 0.
  double total_ratio() const;
  double self_ratio() const;
};

// Per op name, in either session; sorted by |total delta|, then |self delta|, largest first.
std::vector<OpComparison> compare_sessions(const SessionData& a, const SessionData& b);
std::string format_comparison(const std::vector<OpComparison>& rows, int row_limit = 50);

// "12.345us" / "1.234ms" / "2.000s", PyTorch's _format_time on nanoseconds.
std::string format_time_ns(int64_t ns);

}  // namespace rt::prof

RT_API_END
