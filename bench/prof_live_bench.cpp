// prof_live_bench — a Session streaming into the SQLite store while it records: how fast the
// flush thread ingests (records/s, target >= 1M/s), whether the recording thread notices, and
// the overhead on an MLP training step (784-256-128-10, Adam, batch 64; target <= 3%), each
// next to an in-memory session without a store.
//
//   build/bin/prof_live_bench [--events N] [--dir /tmp] [--flush-ms 200]
//
// The store file is created in --dir and deleted afterwards. Overheads are medians of
// alternating plain and profiled runs, so machine load affects both sides alike.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <string>
#include <unistd.h>
#include <vector>

#include "rt/nn/nn.h"
#include "rt/optim/optim.h"
#include "rt/prof/record_function.h"
#include "rt/prof/session.h"
#include "rt/prof/store.h"
#include "rt/rt.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double cpu_seconds() { return double(std::clock()) / CLOCKS_PER_SEC; }

enum class Sink { Memory, StoreDropping, StoreKeeping };
const char* sink_name(Sink k) {
  return k == Sink::Memory ? "in memory, no store      " : k == Sink::StoreDropping ? "store, keep_in_memory=false"
                                                                                       : "store, keep_in_memory=true ";
}

std::chrono::milliseconds g_flush_interval{200};

rt::prof::SessionOptions options_for(Sink k, const fs::path& db) {
  rt::prof::SessionOptions o;
  o.flush_interval = g_flush_interval;
  o.cupti = rt::prof::CuptiMode::Off;
  o.name = "prof_live_bench";
  if (k != Sink::Memory) o.store_path = db.string();
  o.keep_in_memory = k != Sink::StoreDropping;
  return o;
}

// Records `events` user ranges into a session; returns the process CPU seconds start..stop.
double ingest(const fs::path& db, int events, Sink k) {
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
  rt::prof::Session s(options_for(k, db));
  const double cpu0 = cpu_seconds();
  s.start();
  const auto t0 = Clock::now();
  for (int i = 0; i < events; ++i) rt::prof::RecordFunction r("range");
  const double record_s = seconds_since(t0);
  const uint64_t drained = s.counts().ops;
  const auto t1 = Clock::now();
  s.stop();
  const double stop_s = seconds_since(t1), total_s = seconds_since(t0), cpu = cpu_seconds() - cpu0;
  std::printf("%s: %d ranges recorded at %5.1f ns each (%4.1f%% drained meanwhile); stop() %.2f s; "
              "start..stop %.2f s wall = %.2f M records/s, CPU %.2f s\n",
              sink_name(k), events, record_s / events * 1e9, 100.0 * double(drained) / events, stop_s, total_s,
              events / total_s / 1e6, cpu);
  return cpu;
}

void mlp_overhead(const fs::path& db, double streaming_cpu_per_event) {
  using namespace rt::nn;
  rt::manual_seed(0);
  auto model = std::make_shared<Sequential>(std::make_shared<Linear>(784, 256), std::make_shared<ReLU>(),
                                            std::make_shared<Linear>(256, 128), std::make_shared<ReLU>(),
                                            std::make_shared<Linear>(128, 10));
  rt::optim::Adam opt(model->parameters(), {.lr = 1e-3});
  auto x = rt::randn({64, 784});
  auto y = rt::randint(0, 10, {64});
  constexpr int kSteps = 20;
  auto steps = [&] {
    const auto t0 = Clock::now();
    for (int i = 0; i < kSteps; ++i) {
      opt.zero_grad();
      rt::cross_entropy((*model)(x), y).backward();
      opt.step();
    }
    return seconds_since(t0) / kSteps;
  };
  auto profiled = [&](Sink k) {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
    rt::prof::SessionOptions o = options_for(k, db);
    o.record_shapes = o.profile_memory = o.with_stack = true;
    rt::prof::Session s(o);
    s.start();
    const double t = steps();
    s.stop();
    return std::pair{t, s.counts().ops + s.counts().memory};
  };
  steps();
  std::vector<double> plain, memory, store;
  uint64_t events = 0;
  for (int r = 0; r < 9; ++r) {
    plain.push_back(steps());
    memory.push_back(profiled(Sink::Memory).first);
    auto [t, n] = profiled(Sink::StoreDropping);
    store.push_back(t);
    events = n / kSteps;
  }
  const double p = median(plain), m = median(memory), q = median(store);
  std::printf("MLP step (all options): %.3f ms plain, %.3f ms in-memory session (%+.2f%%), %.3f ms streaming to the "
              "store (%+.2f%%) (target <= 3%%)\n",
              p * 1e3, m * 1e3, (m - p) / p * 100, q * 1e3, (q - p) / p * 100);
  std::printf("MLP step records %llu events; x %.2f us flush-thread CPU per streamed event = %.3f ms = %.2f%% of "
              "a %.3f ms step, spent on the flush thread\n",
              static_cast<unsigned long long>(events), streaming_cpu_per_event * 1e6,
              events * streaming_cpu_per_event * 1e3, events * streaming_cpu_per_event / p * 100, p * 1e3);
}

}  // namespace

int main(int argc, char** argv) {
  int events = 2'000'000;
  fs::path dir = fs::temp_directory_path();
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--events")) events = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--dir")) dir = argv[i + 1];
    else if (!std::strcmp(argv[i], "--flush-ms")) g_flush_interval = std::chrono::milliseconds(std::atoi(argv[i + 1]));
    else {
      std::fprintf(stderr, "usage: prof_live_bench [--events N] [--dir DIR] [--flush-ms MS]\n");
      return 2;
    }
  }
  if (events <= 0 || g_flush_interval.count() <= 0) {
    std::fprintf(stderr, "prof_live_bench: --events and --flush-ms must be positive\n");
    return 2;
  }
  const fs::path db = dir / ("prof_live_bench_" + std::to_string(::getpid()) + ".sqlite");
  try {
    ingest(db, events, Sink::Memory);  // warm-up: first-use costs of names, pages
    const double memory_cpu = ingest(db, events, Sink::Memory);
    const double store_cpu = ingest(db, events, Sink::StoreDropping);
    ingest(db, events, Sink::StoreKeeping);
    const double per_event = std::max(0.0, store_cpu - memory_cpu) / events;
    std::printf("streaming into the store costs %.2f us CPU per event over an in-memory session "
                "(= %.2f M events/s per core)\n", per_event * 1e6, per_event > 0 ? 1e-6 / per_event : 0.0);
    mlp_overhead(db, per_event);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "prof_live_bench: %s\n", e.what());
    return 1;
  }
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
  return 0;
}
