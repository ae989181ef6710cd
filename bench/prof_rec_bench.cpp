// prof_rec_bench — what recording costs: ns per recorded event on the hot path, and the
// profiler's overhead on an MLP training step (784-256-128-10, Adam, batch 64).
//
//   build/bin/prof_rec_bench [--threads N]
//   valgrind --tool=callgrind build/bin/prof_rec_bench --threads 1 --mlp-steps 20 --session default
//       runs only the MLP steps (after 3 unrecorded warm-up steps), under a session with the given
//       options (none, default or full): instruction counts per function, plain against recorded,
//       say where the overhead goes without the noise of timing
//
// Prints one line per measurement. Each figure is the median of alternating runs with and
// without a session, so machine load affects both sides alike; the steady-state line is the best
// short batch instead (see steady_state_cost).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "rt/nn/nn.h"
#include "rt/optim/optim.h"
#include "rt/prof/record_function.h"
#include "rt/prof/session.h"
#include "rt/parallel.h"
#include "rt/rt.h"

namespace {

double seconds(const std::function<void()>& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

rt::prof::SessionOptions options(bool full) {
  rt::prof::SessionOptions o;
  o.record_shapes = o.profile_memory = o.with_stack = full;
  o.cupti = rt::prof::CuptiMode::Off;
  return o;
}

// Alternates plain and profiled runs of `work`; returns {plain median, profiled median} in seconds.
std::pair<double, double> compare(const std::function<void()>& work, bool full, int rounds) {
  work();  // warm-up
  std::vector<double> plain, profiled;
  for (int r = 0; r < rounds; ++r) {
    plain.push_back(seconds(work));
    rt::prof::Session s(options(full));
    s.start();
    profiled.push_back(seconds(work));
    s.stop();
  }
  return {median(plain), median(profiled)};
}

// Steady-state cost: the best of many short batches (10k guards, ~0.3 ms), with and without a
// session, so a batch that ran undisturbed on its core decides. The long runs above include the
// first touch of fresh buffer segments; this is what an op costs once buffers are recycled.
void steady_state_cost(double tsc_ns) {
  auto x = rt::ones({2, 3});
  auto best_batch = [&](int rounds) {
    double best = 1e30;
    for (int r = 0; r < rounds; ++r) {
      best = std::min(best, seconds([&] {
                            for (int i = 0; i < 10'000; ++i) rt::OpGuard g("bench_op", x);
                          }) / 10'000 * 1e9);
    }
    return best;
  };
  const double plain = best_batch(400);
  double recorded = 1e30;
  for (int k = 0; k < 10; ++k) {
    rt::prof::Session s(options(false));
    s.start();
    recorded = std::min(recorded, best_batch(40));
    s.stop();
  }
  std::printf("per event, steady state (best 10k batch)     : %6.1f ns recorded = 2 clock reads (%.1f ns) + %.1f ns "
              "bookkeeping\n",
              recorded - plain, 2 * tsc_ns, recorded - plain - 2 * tsc_ns);
}

// Returns the measured ns per recorded event with every option on.
double per_event_cost() {
  double full_ns = 0;
  constexpr int kEvents = 2'000'000;
  auto x = rt::ones({2, 3});
  // The dispatcher's hot path itself: an OpGuard with one input and no kernel.
  auto guards = [&] {
    for (int i = 0; i < kEvents; ++i) rt::OpGuard g("bench_op", x);
  };
  for (bool full : {false, true}) {
    auto [plain, profiled] = compare(guards, full, 7);
    if (full) full_ns = (profiled - plain) / kEvents * 1e9;
    std::printf("per event (OpGuard, %-28s): %6.1f ns recorded, %5.2f ns unprofiled  (target <= 20 ns)\n",
                full ? "shapes+module+memory opts" : "name, time, thread, depth", (profiled - plain) / kEvents * 1e9,
                plain / kEvents * 1e9);
  }
  // The floor: the two clock reads (start, end) every recorded range needs.
  std::string clock;
  {
    rt::prof::Session s(options(false));
    s.start();
    s.stop();
    clock = s.data().metadata.at("clock");
  }
  uint64_t sink = 0;
  auto steady_reads = [&] {
    for (int i = 0; i < kEvents; ++i) sink += uint64_t(rt::now_ns());
  };
  std::printf("clock read, steady (rt::now_ns)              : %6.1f ns each\n", seconds(steady_reads) / kEvents * 1e9);
#if defined(__x86_64__)
  auto tsc_reads = [&] {
    for (int i = 0; i < kEvents; ++i) sink += __rdtsc();
  };
  const double tsc_ns = seconds(tsc_reads) / kEvents * 1e9;
  std::printf("clock read, TSC (rdtsc)                      : %6.1f ns each (recording clock: %s)\n", tsc_ns,
              clock.c_str());
  if (clock == "tsc") steady_state_cost(tsc_ns);
#endif
  if (sink == 42) std::puts("");
  auto ranges = [&] {
    for (int i = 0; i < kEvents; ++i) rt::prof::RecordFunction r("range");
  };
  auto [plain, profiled] = compare(ranges, false, 7);
  std::printf("per event (RecordFunction, user range)       : %6.1f ns recorded\n", (profiled - plain) / kEvents * 1e9);
  // A real cheap op (allocates its output): what recording adds per op.
  auto a = rt::ones({1}), b = rt::ones({1});
  rt::Tensor c;
  constexpr int kOps = 300'000;
  auto adds = [&] {
    for (int i = 0; i < kOps; ++i) c = a + b;
  };
  for (bool full : {false, true}) {
    auto [p, q] = compare(adds, full, 7);
    std::printf("1-element add (%-28s): %6.1f ns/op plain, +%5.1f ns/op recorded (op + its alloc/free events)\n",
                full ? "shapes+module+memory" : "default options", p / kOps * 1e9, (q - p) / kOps * 1e9);
  }
  return full_ns;
}

// The MLP 784-256-128-10 with Adam on one batch of 64: step() is one training step.
struct Mlp {
  std::shared_ptr<rt::nn::Sequential> model;
  std::unique_ptr<rt::optim::Adam> opt;
  rt::Tensor x, y;
  Mlp() {
    using namespace rt::nn;
    rt::manual_seed(0);
    model = std::make_shared<Sequential>(std::make_shared<Linear>(784, 256), std::make_shared<ReLU>(),
                                         std::make_shared<Linear>(256, 128), std::make_shared<ReLU>(),
                                         std::make_shared<Linear>(128, 10));
    opt = std::make_unique<rt::optim::Adam>(model->parameters(), rt::optim::AdamOptions{.lr = 1e-3});
    x = rt::randn({64, 784});
    y = rt::randint(0, 10, {64});
  }
  void step() {
    opt->zero_grad();
    rt::cross_entropy((*model)(x), y).backward();
    opt->step();
  }
};

// The profiler's overhead on MLP training, in two parts.
// - On the training threads: rounds that each time a plain run and a profiled run of the same steps (about
//   40 ms each) in alternating order (plain first in even rounds); the figure is the median of the rounds'
//   ratios with their interquartile range, so drift in the machine's speed cancels within a round. A profiled
//   run is timed from its first step to its last under a session started before it (default options, so the
//   flush thread's first flush, 200 ms after start, falls after the run: its work is all in stop()).
// - The flush work: converting the recorded events into the session, which the flush thread does every
//   200 ms in a long session. Measured as each round's stop() time less an empty session's start and stop
//   (thread start and join), per step. It runs on its own thread: it slows training only where it takes a
//   core that training wanted, so the sum of the two parts is the worst case (2 busy threads on 2 cores).
void mlp_overhead(double ns_per_event) {
  Mlp mlp;
  for (int i = 0; i < 3; ++i) mlp.step();
  // Load-independent bound: events one step records x the measured cost of one event.
  size_t events = 0;
  {
    rt::prof::Session s(options(true));
    s.start();
    mlp.step();
    s.stop();
    events = s.data().ops.size() + s.data().memory.size();
  }
  const double step_s = seconds([&] {
                          for (int i = 0; i < 20; ++i) mlp.step();
                        }) / 20;
  std::printf("MLP step records %zu events; x %.1f ns/event = %.1f us = %.3f%% of a %.3f ms step\n", events,
              ns_per_event, events * ns_per_event * 1e-3, events * ns_per_event * 1e-9 / step_s * 100, step_s * 1e3);
  const int steps = std::max(10, int(0.04 / step_s));
  auto run = [&] {
    for (int i = 0; i < steps; ++i) mlp.step();
  };
  constexpr int kRounds = 101;
  for (bool full : {false, true}) {
    std::vector<double> ratios, plain, flush;
    for (int r = 0; r < kRounds; ++r) {
      double p = 0, q = 0;
      for (int k = 0; k < 2; ++k) {
        if ((k == 0) == (r % 2 == 0)) {
          p = seconds(run);
          continue;
        }
        double empty = 0;  // an empty session's start and stop: the fixed part of stop() below
        {
          rt::prof::Session e(options(full));
          empty = seconds([&] {
            e.start();
            e.stop();
          });
        }
        rt::prof::Session s(options(full));
        const auto t0 = std::chrono::steady_clock::now();
        s.start();
        const auto t1 = std::chrono::steady_clock::now();
        q = seconds(run);
        const auto t2 = std::chrono::steady_clock::now();
        s.stop();
        const double start_stop = std::chrono::duration<double>(t1 - t0 + (std::chrono::steady_clock::now() - t2)).count();
        flush.push_back((start_stop - empty) / q);
      }
      ratios.push_back(q / p);
      plain.push_back(p);
    }
    std::sort(ratios.begin(), ratios.end());
    std::sort(flush.begin(), flush.end());
    const auto pct = [&](const std::vector<double>& v, size_t i, double base) { return (v[i] - base) * 100; };
    std::printf("MLP 784-256-128-10 Adam b64 (%-20s): %7.3f ms/step plain; training threads %+5.2f%% (IQR %+.2f to "
                "%+.2f, %d rounds of %d steps); flush work %+.2f%% (IQR %+.2f to %+.2f); worst case %+.2f%% "
                "(target <= 3%%)\n",
                full ? "shapes+memory+module" : "default options", median(plain) / steps * 1e3,
                pct(ratios, kRounds / 2, 1), pct(ratios, kRounds / 4, 1), pct(ratios, kRounds * 3 / 4, 1), kRounds,
                steps, pct(flush, kRounds / 2, 0), pct(flush, kRounds / 4, 0), pct(flush, kRounds * 3 / 4, 0),
                pct(ratios, kRounds / 2, 1) + pct(flush, kRounds / 2, 0));
  }
}

// The --mlp-steps mode: `steps` MLP steps under a session with `mode`'s options ("none": no session).
int mlp_steps_only(int steps, const std::string& mode) {
  if (mode != "none" && mode != "default" && mode != "full") {
    std::fprintf(stderr, "prof_rec_bench: --session takes none, default or full, not '%s'\n", mode.c_str());
    return 2;
  }
  Mlp mlp;
  for (int i = 0; i < 3; ++i) mlp.step();
  std::optional<rt::prof::Session> session;
  if (mode != "none") {
    session.emplace(options(mode == "full"));
    session->start();
  }
  const double s = seconds([&] {
    for (int i = 0; i < steps; ++i) mlp.step();
  });
  if (session) session->stop();
  std::printf("%d MLP steps, session %s: %.3f ms/step\n", steps, mode.c_str(), s / steps * 1e3);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, mlp_steps = 0;
  std::string session = "default";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--mlp-steps") && i + 1 < argc) {
      mlp_steps = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--session") && i + 1 < argc) {
      session = argv[++i];
    } else {
      std::fprintf(stderr, "usage: prof_rec_bench [--threads N] [--mlp-steps N [--session none|default|full]]\n");
      return 2;
    }
  }
  rt::set_num_threads(threads);
  if (mlp_steps > 0) return mlp_steps_only(mlp_steps, session);
  mlp_overhead(per_event_cost());
  return 0;
}
