// prof_trace_bench — Chrome-trace export and import throughput (issue 4 targets: export 1M events
// <= 2 s, import a 100 MB trace <= 2 s). Inputs are generated at run time under /tmp.
//
//   build/bin/prof_trace_bench                 # both, default sizes
//   build/bin/prof_trace_bench --events 200000 # smaller export
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "rt/prof/chrome_trace.h"

namespace {

using namespace rt::prof;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// `events` records shaped like a training step: nested ops on two threads with shapes and
// dtypes, kernels with runtime launches, memory events and a loss counter.
SessionData make_session(size_t events) {
  SessionData s;
  s.name = "bench";
  s.threads.push_back({1, 1001, s.strings.intern("main")});
  s.threads.push_back({2, 1002, s.strings.intern("autograd")});
  const StringId names[4] = {s.strings.intern("aten::linear"), s.strings.intern("aten::addmm"),
                             s.strings.intern("aten::relu"), s.strings.intern("AddmmBackward0")};
  const StringId shapes = s.strings.intern("[[128, 512], [512, 512], [512]]");
  const StringId dtypes = s.strings.intern("[float32, float32, float32]");
  const StringId module = s.strings.intern("net.fc2");
  const StringId kernel = s.strings.intern("void gemm_kernel<float, 128, 64>(...)");
  const StringId launch = s.strings.intern("cudaLaunchKernel");
  const StringId loss = s.strings.intern("loss");
  int64_t t = 1'000'000;
  uint64_t correlation = 1;
  while (s.ops.size() + s.gpu.size() + s.memory.size() + s.counters.size() < events) {
    const int64_t seq = int64_t(s.ops.size());
    s.ops.push_back({.start_ns = t, .end_ns = t + 9'000, .thread = 1, .name = names[0], .module = module,
                     .input_shapes = shapes, .input_dtypes = dtypes, .sequence_nr = seq, .correlation_id = correlation,
                     .depth = 0});
    s.ops.push_back({.start_ns = t + 100, .end_ns = t + 8'000, .thread = 1, .name = names[1], .module = module,
                     .input_shapes = shapes, .input_dtypes = dtypes, .correlation_id = correlation, .depth = 1});
    s.gpu.push_back({.start_ns = t + 200, .end_ns = t + 900, .kind = GpuActivityKind::Runtime, .thread = 1,
                     .name = launch, .correlation_id = correlation, .external_id = correlation});
    s.gpu.push_back({.start_ns = t + 2'000, .end_ns = t + 7'000, .kind = GpuActivityKind::Kernel, .device = 0,
                     .stream = 7, .name = kernel, .correlation_id = correlation, .external_id = correlation,
                     .grid = {64, 1, 1}, .block = {256, 1, 1}, .registers = 96, .shared_memory = 16384});
    s.memory.push_back({.time_ns = t + 150, .thread = 1, .address = 0x7f0000000000 + uint64_t(t), .bytes = 262144,
                        .total_allocated = 262144, .device = 0, .category = MemoryCategoryId::Activation, .op = names[1]});
    s.ops.push_back({.start_ns = t + 20'000, .end_ns = t + 25'000, .thread = 2, .name = names[3], .sequence_nr = seq,
                     .depth = 0, .kind = OpKind::BackwardNode});
    s.memory.push_back({.time_ns = t + 24'000, .thread = 2, .address = 0x7f0000000000 + uint64_t(t), .bytes = -262144,
                        .total_allocated = 0, .device = 0, .category = MemoryCategoryId::Activation, .op = names[1]});
    s.counters.push_back({t + 26'000, loss, 1.0 / double(correlation)});
    ++correlation;
    t += 30'000;
  }
  s.start_ns = 1'000'000;
  s.end_ns = t;
  s.complete = true;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  size_t export_events = 1'000'000;
  uint64_t import_bytes = 100ull << 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--events")) export_events = std::stoull(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--import-mb")) import_bytes = std::stoull(argv[i + 1]) << 20;
    else { std::fprintf(stderr, "usage: %s [--events N] [--import-mb MB]\n", argv[0]); return 2; }
  }
  const auto dir = std::filesystem::temp_directory_path() / "rt_prof_trace_bench";
  std::filesystem::create_directories(dir);

  const SessionData session = make_session(export_events);
  const size_t records = session.ops.size() + session.gpu.size() + session.memory.size() + session.counters.size();
  for (const char* name : {"export.json", "export.json.gz"}) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto stats = export_chrome_trace(session, dir / name, {.gzip_level = 1, .progress = {}});
    const double s = seconds_since(t0);
    std::printf("export %-15s %zu records -> %llu trace events, %.1f MB JSON: %.3f s (%.2f M events/s)\n", name, records,
                (unsigned long long)stats.events, double(stats.bytes) / 1e6, s, double(stats.events) / s / 1e6);
  }

  // Grow a session until its trace is at least `import_bytes`, then import it.
  const auto probe = chrome_trace_json(make_session(20'000)).size();
  size_t n = size_t(20'000.0 * double(import_bytes) / double(probe) * 1.01);
  std::filesystem::path big = dir / "import.json";
  ChromeExportStats big_stats;
  while (true) {
    big_stats = export_chrome_trace(make_session(n), big);
    if (big_stats.bytes >= import_bytes) break;
    n = n * 11 / 10;
  }
  for (int repeat = 0; repeat < 2; ++repeat) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto imported = import_chrome_trace(big);
    const double s = seconds_since(t0);
    const auto& d = imported.session;
    std::printf("import %.1f MB (%llu events): %.3f s (%.0f MB/s); %zu ops, %zu gpu, %zu memory, %zu counters\n",
                double(big_stats.bytes) / 1e6, (unsigned long long)imported.report.events, s,
                double(big_stats.bytes) / 1e6 / s, d.ops.size(), d.gpu.size(), d.memory.size(), d.counters.size());
  }
  std::filesystem::remove_all(dir);
  return 0;
}
