// prof_store_bench — session store ingest rate (target >= 1M events/s), finish() and load times.
//
//   build/bin/prof_store_bench                      # 3M events in batches of 100k, store in /tmp
//   build/bin/prof_store_bench --events 10000000 --batch 50000 --path /tmp/x.sqlite
//
// Events are a synthetic training mix: 60% ops (nested pairs), 25% memory alloc/free, 15% kernels
// with correlation ids, over 64 op names. Two runs: into a fresh file (no secondary indexes yet)
// and into the same file after the first session finished (its indexes are then maintained).
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "rt/prof/store.h"

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
double cpu_seconds() { return double(std::clock()) / CLOCKS_PER_SEC; }

struct Batch {
  rt::prof::SessionData data;
  size_t events() const { return data.ops.size() + data.memory.size() + data.gpu.size(); }
};

Batch make_batch(size_t events, int64_t t0) {
  Batch b;
  auto& d = b.data;
  std::vector<rt::prof::StringId> names;
  for (int i = 0; i < 64; ++i) names.push_back(d.strings.intern("aten::op_" + std::to_string(i)));
  const auto shapes = d.strings.intern("[[128, 784], [784, 512]]");
  const auto kernel = d.strings.intern("void gemm_kernel<float, 128, 64>(...)");
  d.ops.reserve(events * 6 / 10 + 2);
  int64_t t = t0;
  uint64_t corr = uint64_t(t0);
  for (size_t i = 0; b.events() < events; ++i) {
    const auto name = names[i % names.size()];
    d.ops.push_back({t, t + 900, 1, name, 0, shapes, 0, int64_t(i), 0, 0, rt::prof::OpKind::Op});
    d.ops.push_back({t + 100, t + 800, 1, names[(i + 1) % names.size()], 0, shapes, 0, -1, ++corr, 1,
                     rt::prof::OpKind::Op});
    if (i % 4 != 3) {
      rt::prof::GpuActivityRecord k;
      k.start_ns = t + 1000;
      k.end_ns = t + 1500;
      k.name = kernel;
      k.stream = 7;
      k.correlation_id = corr;
      k.external_id = corr;
      k.grid[0] = 128;
      k.block[0] = 256;
      d.gpu.push_back(k);
    }
    const uint64_t addr = 0x7f0000000000ull + (i % 1024) * 4096;
    d.memory.push_back({t + 150, 1, addr, 4096, 1 << 20, -1, rt::prof::MemoryCategoryId::Activation, name});
    if (i % 3 == 0)
      d.memory.push_back({t + 850, 1, addr, -4096, 1 << 20, -1, rt::prof::MemoryCategoryId::Activation, 0});
    t += 1000;
  }
  return b;
}

struct Run {
  double ingest_s = 0, ingest_cpu_s = 0, finish_s = 0, load_s = 0;
  size_t events = 0;
};

Run run_session(rt::prof::Store& store, const std::vector<Batch>& batches) {
  Run r;
  auto t0 = Clock::now();
  const double cpu0 = cpu_seconds();
  rt::prof::SessionWriter w = store.begin_session("bench");
  for (const Batch& b : batches) {
    w.append(b.data);
    r.events += b.events();
  }
  r.ingest_s = seconds_since(t0);
  r.ingest_cpu_s = cpu_seconds() - cpu0;
  t0 = Clock::now();
  w.finish();
  r.finish_s = seconds_since(t0);
  t0 = Clock::now();
  const auto loaded = store.load_session(w.id());
  r.load_s = seconds_since(t0);
  if (loaded.ops.size() + loaded.memory.size() + loaded.gpu.size() != r.events) {
    std::fprintf(stderr, "prof_store_bench: loaded %zu events, wrote %zu\n",
                 loaded.ops.size() + loaded.memory.size() + loaded.gpu.size(), r.events);
    std::exit(1);
  }
  return r;
}

void print(const char* label, const Run& r) {
  std::printf("%-32s %8zu events  ingest %5.2f s = %4.2f M events/s (CPU %5.2f s = %4.2f M/s)  "
              "finish %5.2f s  load %5.2f s (%.2f M/s)\n",
              label, r.events, r.ingest_s, double(r.events) / r.ingest_s / 1e6, r.ingest_cpu_s,
              double(r.events) / r.ingest_cpu_s / 1e6, r.finish_s, r.load_s, double(r.events) / r.load_s / 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  size_t total = 3'000'000, batch = 100'000;
  std::filesystem::path path = "/tmp/prof_store_bench.sqlite";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string arg = argv[i];
    if (arg == "--events") total = std::stoull(argv[i + 1]);
    else if (arg == "--batch") batch = std::stoull(argv[i + 1]);
    else if (arg == "--path") path = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: prof_store_bench [--events N] [--batch N] [--path FILE]\n");
      return 2;
    }
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);

  std::vector<Batch> batches;
  for (size_t done = 0; done < total; done += batch)
    batches.push_back(make_batch(std::min(batch, total - done), int64_t(done) * 1000));

  try {
    rt::prof::Store store = rt::prof::Store::open(path);
    print("fresh store (no indexes yet)", run_session(store, batches));
    print("second session (indexes exist)", run_session(store, batches));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "prof_store_bench: %s\n", e.what());
    return 1;
  }
  std::printf("store file: %s (%.1f MB)\n", path.c_str(), double(std::filesystem::file_size(path)) / 1e6);
  return 0;
}
