// Summaries over SessionData: self/total time, PyTorch's table layout, steps, memory, comparisons.
#include <catch2/catch.hpp>

#include <cmath>

#include "rt/error.h"
#include "rt/prof/summary.h"

using namespace rt::prof;

namespace {

OpRecord op(SessionData& d, std::string_view name, int64_t start, int64_t end, uint64_t thread = 1,
            OpKind kind = OpKind::Op, std::string_view shapes = "") {
  OpRecord r;
  r.start_ns = start;
  r.end_ns = end;
  r.thread = thread;
  r.name = d.strings.intern(name);
  r.input_shapes = d.strings.intern(shapes);
  r.kind = kind;
  return r;
}

const OpStats& row(const std::vector<OpStats>& rows, std::string_view name, std::string_view shapes = "") {
  for (const OpStats& s : rows)
    if (s.name == name && s.input_shapes == shapes) return s;
  FAIL("no row " << name << " " << shapes);
  throw;
}

// A [0,100] { B [10,30], C [40,90] { D [50,60] } } on thread 1; B [0,5] on thread 2.
SessionData nested() {
  SessionData d;
  d.ops = {op(d, "A", 0, 100), op(d, "B", 10, 30), op(d, "C", 40, 90), op(d, "D", 50, 60), op(d, "B", 0, 5, 2)};
  return d;
}

}  // namespace

TEST_CASE("self time subtracts direct children on the same thread only") {
  const auto rows = key_averages(nested());
  CHECK(row(rows, "A").self_ns == 30);
  CHECK(row(rows, "A").total_ns == 100);
  CHECK(row(rows, "C").self_ns == 40);
  CHECK(row(rows, "D").self_ns == 10);
  CHECK(row(rows, "B").self_ns == 25);
  CHECK(row(rows, "B").total_ns == 25);
  CHECK(row(rows, "B").calls == 2);
  CHECK(rows.front().name == "A");  // largest total first
}

TEST_CASE("nesting comes from intervals, not from the input order or depth field") {
  SessionData d = nested();
  std::reverse(d.ops.begin(), d.ops.end());
  for (OpRecord& r : d.ops) r.depth = 7;
  CHECK(row(key_averages(d), "A").self_ns == 30);
}

TEST_CASE("a child overlapping its parent by rounding only counts the part inside") {
  SessionData d;
  d.ops = {op(d, "parent", 0, 100), op(d, "child", 60, 103), op(d, "next", 103, 110)};
  const auto rows = key_averages(d);
  CHECK(row(rows, "parent").self_ns == 60);
  CHECK(row(rows, "child").self_ns == 40);  // clamped to end with its parent, as in the trace and the timeline
  CHECK(row(rows, "child").total_ns == 40);
  CHECK(row(rows, "next").self_ns == 7);
  for (const OpStats& s : rows) CHECK(s.self_ns <= s.total_ns);
}

TEST_CASE("grouping by input shapes splits rows and sums back to the per-name rows") {
  SessionData d;
  d.ops = {op(d, "mm", 0, 10, 1, OpKind::Op, "[[2, 3], [3, 4]]"), op(d, "mm", 20, 50, 1, OpKind::Op, "[[8, 8], [8, 8]]"),
           op(d, "mm", 60, 70, 1, OpKind::Op, "[[2, 3], [3, 4]]")};
  const auto by_shape = key_averages(d, true);
  REQUIRE(by_shape.size() == 2);
  CHECK(row(by_shape, "mm", "[[2, 3], [3, 4]]").calls == 2);
  CHECK(row(by_shape, "mm", "[[2, 3], [3, 4]]").total_ns == 20);
  CHECK(row(by_shape, "mm", "[[8, 8], [8, 8]]").total_ns == 30);
  const auto by_name = key_averages(d);
  REQUIRE(by_name.size() == 1);
  CHECK(by_name[0].input_shapes.empty());
  CHECK(by_name[0].calls == 3);
  CHECK(by_name[0].total_ns == 50);
}

TEST_CASE("device time follows external correlation ids up the op tree") {
  SessionData d;
  OpRecord outer = op(d, "linear", 0, 100);
  OpRecord inner = op(d, "addmm", 10, 90);
  inner.correlation_id = 7;
  d.ops = {outer, inner};
  GpuActivityRecord k;
  k.kind = GpuActivityKind::Kernel;
  k.start_ns = 50;
  k.end_ns = 80;
  k.external_id = 7;
  GpuActivityRecord runtime = k;
  runtime.kind = GpuActivityKind::Runtime;  // API calls are CPU time, not device time
  d.gpu = {k, runtime};
  const auto rows = key_averages(d);
  CHECK(row(rows, "addmm").self_device_ns == 30);
  CHECK(row(rows, "addmm").device_total_ns == 30);
  CHECK(row(rows, "linear").self_device_ns == 0);
  CHECK(row(rows, "linear").device_total_ns == 30);
  const std::string table = format_table(rows);
  CHECK(table.find("Self CUDA %") != std::string::npos);
  CHECK(table.find("Self CUDA time total: 0.030us") != std::string::npos);
}

TEST_CASE("format_table reproduces PyTorch's layout") {
  std::vector<OpStats> rows = {{"aten::addmm", "", 2, 3000, 5000, 0, 0}, {"aten::relu", "", 4, 1000, 1000, 0, 0}};
  const std::string expected =
      "---------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
      "           Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls  \n"
      "---------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
      "    aten::addmm        75.00%       3.000us       125.00%       5.000us       2.500us             2  \n"
      "     aten::relu        25.00%       1.000us        25.00%       1.000us       0.250us             4  \n"
      "---------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
      "Self CPU time total: 4.000us\n";
  CHECK(format_table(rows, "cpu_time_total") == expected);
}

TEST_CASE("op memory: events count for the innermost op containing them, totals include children") {
  // A [0,100] { B [10,30], C [40,90] { D [50,60] } } on thread 1; B [0,5] on thread 2.
  SessionData d = nested();
  auto mem = [&](int64_t t, int64_t bytes, uint64_t thread = 1, int32_t device = -1) {
    MemoryRecord m;
    m.time_ns = t;
    m.bytes = bytes;
    m.thread = thread;
    m.device = device;
    d.memory.push_back(m);
  };
  mem(5, 1000);          // A itself
  mem(20, 400);          // B inside A
  mem(55, 64);           // D inside C
  mem(70, -32);          // C frees
  mem(80, 2048, 1, 0);   // C allocates on cuda:0
  mem(3, 8, 2);          // the other thread's B
  mem(200, 1 << 20);     // outside every op: no row gets it
  const auto rows = key_averages(d);
  CHECK(row(rows, "A").self_cpu_memory_bytes == 1000);
  CHECK(row(rows, "A").cpu_memory_bytes == 1000 + 400 + 64 - 32);
  CHECK(row(rows, "B").self_cpu_memory_bytes == 408);
  CHECK(row(rows, "C").self_cpu_memory_bytes == -32);
  CHECK(row(rows, "C").cpu_memory_bytes == 32);
  CHECK(row(rows, "C").self_device_memory_bytes == 2048);
  CHECK(row(rows, "A").device_memory_bytes == 2048);
  CHECK(row(rows, "D").cpu_memory_bytes == 64);

  const std::string table = format_table(rows, "self_cpu_memory_usage", -1);
  CHECK(table.find("CPU Mem") != std::string::npos);
  CHECK(table.find("Self CUDA Mem") != std::string::npos);
  CHECK(table.find("1.40 Kb") != std::string::npos);  // A's 1432 bytes
  CHECK(table.find("-32 b") != std::string::npos);
  CHECK(table.find("2.00 Kb") != std::string::npos);
  CHECK(table.find(" A ") < table.find(" C "));  // sorted by self CPU memory: A (1000) before C (-32)
  CHECK(format_table(key_averages(nested())).find("CPU Mem") == std::string::npos);  // no memory, no columns
}

TEST_CASE("format_table sorts by the requested key and honours row_limit") {
  std::vector<OpStats> rows = {{"few_long", "", 1, 900000, 900000, 0, 0}, {"many_short", "", 50, 2000000, 2000000, 0, 0}};
  const std::string by_count = format_table(rows, "count", 1);
  CHECK(by_count.find("many_short") != std::string::npos);
  CHECK(by_count.find("few_long") == std::string::npos);
  CHECK(by_count.find("2.000ms") != std::string::npos);
  const std::string by_avg = format_table(rows, "cpu_time", 1);
  CHECK(by_avg.find("few_long") != std::string::npos);
  CHECK(by_avg.find("900.000us") != std::string::npos);
  CHECK(format_table(rows, "self_cpu_time_total", -1).find("Self CPU time total: 2.900ms") != std::string::npos);
}

TEST_CASE("format_table shows input shapes and shortens long names like PyTorch") {
  const std::string long_name(70, 'x');
  std::vector<OpStats> rows = {{long_name, "[[1, 2]]", 1, 10, 10, 0, 0}};
  const std::string t = format_table(rows);
  CHECK(t.find("Input Shapes") != std::string::npos);
  CHECK(t.find("[[1, 2]]") != std::string::npos);
  CHECK(t.find(std::string(52, 'x') + "...") != std::string::npos);
  CHECK(t.find(std::string(53, 'x')) == std::string::npos);
}

TEST_CASE("format_table rejects an unknown sort key naming the valid ones") {
  std::vector<OpStats> rows = {{"a", "", 1, 1, 1, 0, 0}};
  REQUIRE_THROWS_AS(format_table(rows, "cpu_total"), rt::ValueError);
  REQUIRE_THROWS_WITH(format_table(rows, "cpu_total"),
                      Catch::Contains("unknown sort_by 'cpu_total'") && Catch::Contains("self_cpu_time_total"));
  CHECK(format_table({}, "count").empty());
}

TEST_CASE("format_time_ns switches units like PyTorch's _format_time") {
  CHECK(format_time_ns(999) == "0.999us");
  CHECK(format_time_ns(1'500'000) == "1.500ms");
  CHECK(format_time_ns(2'000'000'000) == "2.000s");
}

TEST_CASE("step breakdown: wall time, top-level ops, backward and optimizer") {
  SessionData d;
  d.steps = {{0, 0, 1000}, {1, 1000, 1600}};
  d.ops = {op(d, "forward", 100, 400, 1, OpKind::UserRange), op(d, "aten::linear", 120, 380),
           op(d, "AddmmBackward0", 450, 700, 2, OpKind::BackwardNode),
           op(d, "AccumulateGrad", 500, 520, 2, OpKind::BackwardNode),
           op(d, "Optimizer.step#SGD.step", 750, 950, 1, OpKind::UserRange), op(d, "aten::add_", 760, 900),
           op(d, "forward", 1100, 1300, 1, OpKind::UserRange)};
  const auto steps = step_breakdown(d);
  REQUIRE(steps.size() == 2);
  CHECK(steps[0].wall_ns == 1000);
  CHECK(steps[0].op_ns == 300 + 250 + 200);
  CHECK(steps[0].backward_ns == 250);
  CHECK(steps[0].optimizer_ns == 200);
  REQUIRE(steps[0].top_level.size() == 3);
  CHECK(steps[0].top_level[0] == std::pair<std::string, int64_t>("forward", 300));
  CHECK(steps[1].wall_ns == 600);
  CHECK(steps[1].op_ns == 200);
  CHECK(steps[1].backward_ns == 0);
}

TEST_CASE("memory timeline: peak, per-category series, totals at any time") {
  SessionData d;
  auto mem = [&](int64_t t, uint64_t addr, int64_t bytes, MemoryCategoryId c, int32_t device = -1) {
    MemoryRecord r;
    r.time_ns = t;
    r.address = addr;
    r.bytes = bytes;
    r.category = c;
    r.device = device;
    d.memory.push_back(r);
  };
  mem(10, 0x100, 400, MemoryCategoryId::Parameter);
  mem(20, 0x200, 100, MemoryCategoryId::Activation);
  mem(30, 0x300, 50, MemoryCategoryId::Gradient);
  mem(40, 0x200, -100, MemoryCategoryId::Other);  // the free names the wrong category
  mem(40, 0x400, 30, MemoryCategoryId::Temporary);
  mem(50, 0x300, -50, MemoryCategoryId::Gradient);
  mem(60, 0x400, -30, MemoryCategoryId::Temporary);
  mem(15, 0x900, 1000, MemoryCategoryId::Activation, 0);  // another device

  MemoryTimeline cpu(d, -1);
  CHECK(cpu.peak_bytes() == 550);
  CHECK(cpu.peak_time_ns() == 30);
  CHECK(cpu.at_peak()[MemoryCategoryId::Activation] == 100);
  CHECK(cpu.live_at(5).total() == 0);
  CHECK(cpu.live_at(25).total() == 500);
  CHECK(cpu.live_at(45)[MemoryCategoryId::Activation] == 0);
  CHECK(cpu.live_at(45)[MemoryCategoryId::Other] == 0);
  CHECK(cpu.live_at(45)[MemoryCategoryId::Temporary] == 30);
  CHECK(cpu.live_at(1000).total() == 400);
  CHECK(cpu.allocated_total()[MemoryCategoryId::Activation] == 100);
  CHECK(cpu.freed_total()[MemoryCategoryId::Activation] == 100);
  CHECK(cpu.freed_total()[MemoryCategoryId::Other] == 0);
  const auto& act = cpu.series(MemoryCategoryId::Activation);
  REQUIRE(act.size() == 2);
  CHECK(act[0].time_ns == 20);
  CHECK(act[0].bytes == 100);
  CHECK(act[1].time_ns == 40);
  CHECK(act[1].bytes == 0);
  CHECK(cpu.total_series().back().bytes == 400);

  MemoryTimeline all(d);
  CHECK(all.peak_bytes() == 1550);
  CHECK(MemoryTimeline(d, 0).peak_by_category()[MemoryCategoryId::Activation] == 1000);
  CHECK(memory_category_name(MemoryCategoryId::OptimizerState) == "optimizer_state");
}

TEST_CASE("comparing sessions: per-op deltas and ratios, largest change first") {
  SessionData a, b;
  a.ops = {op(a, "relu", 0, 10), op(a, "mm", 10, 110), op(a, "gone", 200, 205)};
  b.ops = {op(b, "relu", 0, 12), op(b, "mm", 12, 62), op(b, "mm", 62, 82), op(b, "new", 100, 130)};
  const auto rows = compare_sessions(a, b);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].name == "mm");
  CHECK(rows[0].calls_a == 1);
  CHECK(rows[0].calls_b == 2);
  CHECK(rows[0].total_delta_ns() == -30);
  CHECK(rows[0].total_ratio() == Approx(0.7));
  CHECK(rows[1].name == "new");
  CHECK(std::isinf(rows[1].total_ratio()));
  CHECK(rows[2].name == "gone");
  CHECK(rows[2].total_ratio() == 0.0);
  CHECK(rows[3].name == "relu");
  const std::string text = format_comparison(rows);
  CHECK(text.find("-30.000ns") == std::string::npos);
  CHECK(text.find("-0.030us") != std::string::npos);
  CHECK(text.find("new") != std::string::npos);
}

TEST_CASE("collective_stats: one row per group and collective, start to end, queue time apart") {
  SessionData d;
  auto add = [&](const char* group, const char* name, int64_t enqueue, int64_t start, int64_t end, int64_t bytes) {
    CollectiveRecord c;
    c.enqueue_ns = enqueue;
    c.start_ns = start;
    c.end_ns = end;
    c.group = d.strings.intern(group);
    c.name = d.strings.intern(name);
    c.bytes = bytes;
    d.collectives.push_back(c);
  };
  add("default", "all_reduce", 0, 100, 1100, 4000);
  add("default", "all_reduce", 50, 1100, 4100, 4000);  // queued behind the first: 1050 ns
  add("default", "broadcast", 0, 0, 500, 100);
  add("group 1", "all_reduce", 0, 0, 2000, 8000);
  const auto rows = collective_stats(d);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].group == "default");
  CHECK(rows[0].name == "all_reduce");
  CHECK(rows[0].calls == 2);
  CHECK(rows[0].bytes == 8000);
  CHECK(rows[0].total_ns == 4000);
  CHECK(rows[0].max_ns == 3000);
  CHECK(rows[0].avg_ns() == 2000);
  CHECK(rows[0].queued_ns == 100 + 1050);
  CHECK(rows[0].algbw_gbps() == Approx(2.0));  // 8000 bytes in 4000 ns
  CHECK(rows[1].group == "group 1");
  CHECK(rows[2].name == "broadcast");
  CHECK(collective_stats(SessionData{}).empty());
}
