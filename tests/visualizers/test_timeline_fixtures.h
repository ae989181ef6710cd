// Sessions for the timeline, memory and scalar view models' tests and bench/viz: a small builder for
// hand-made sessions and a seeded generator of large, properly nested ones (ops of widths spread
// over five orders of magnitude, kernels launched by some of them, steps, counters, memory).
#pragma once
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "rt/prof/events.h"

namespace rt::viz::fixtures {

class SessionBuilder {
 public:
  SessionBuilder& thread(uint64_t id, const std::string& name) {
    data_.threads.push_back({id, uint32_t(id), data_.strings.intern(name)});
    return *this;
  }
  prof::OpRecord& op(const std::string& name, int64_t start, int64_t end, uint64_t thread = 1,
                     prof::OpKind kind = prof::OpKind::Op) {
    prof::OpRecord r;
    r.start_ns = start;
    r.end_ns = end;
    r.thread = thread;
    r.name = data_.strings.intern(name);
    r.kind = kind;
    data_.ops.push_back(r);
    return data_.ops.back();
  }
  prof::GpuActivityRecord& gpu(const std::string& name, int64_t start, int64_t end, int32_t device = 0,
                               int32_t stream = 7, prof::GpuActivityKind kind = prof::GpuActivityKind::Kernel) {
    prof::GpuActivityRecord r;
    r.start_ns = start;
    r.end_ns = end;
    r.device = device;
    r.stream = stream;
    r.kind = kind;
    r.name = data_.strings.intern(name);
    data_.gpu.push_back(r);
    return data_.gpu.back();
  }
  prof::CollectiveRecord& collective(const std::string& name, const std::string& group, int64_t start, int64_t end,
                                     uint64_t thread = 1, int32_t rank = -1) {
    prof::CollectiveRecord c;
    c.enqueue_ns = start;
    c.start_ns = start;
    c.end_ns = end;
    c.thread = thread;
    c.name = data_.strings.intern(name);
    c.group = data_.strings.intern(group);
    c.rank = rank;
    data_.collectives.push_back(c);
    return data_.collectives.back();
  }
  SessionBuilder& counter(const std::string& name, int64_t time, double value) {
    data_.counters.push_back({time, data_.strings.intern(name), value});
    return *this;
  }
  SessionBuilder& step(int64_t step, int64_t start, int64_t end) {
    data_.steps.push_back({step, start, end});
    return *this;
  }
  SessionBuilder& memory(int64_t time, uint64_t address, int64_t bytes, prof::MemoryCategoryId category,
                         int32_t device = -1, const std::string& op = "") {
    prof::MemoryRecord r;
    r.time_ns = time;
    r.address = address;
    r.bytes = bytes;
    r.category = category;
    r.device = device;
    r.op = data_.strings.intern(op);
    data_.memory.push_back(r);
    return *this;
  }
  prof::StringId intern(const std::string& s) { return data_.strings.intern(s); }
  prof::SessionData& data() { return data_; }
  std::shared_ptr<const prof::SessionData> shared() const { return std::make_shared<const prof::SessionData>(data_); }

 private:
  prof::SessionData data_;
};

struct GeneratedShape {
  size_t ops = 10000;        // about this many ops (a tree is never cut short)
  int threads = 2;
  int max_depth = 6;
  double launch_fraction = 0.2;  // ops that launch a kernel on one of two streams
  uint64_t seed = 1;
};

// Properly nested ops per thread, sequential trees with gaps; kernels keep to their stream's order.
inline std::shared_ptr<const prof::SessionData> generate_session(const GeneratedShape& shape) {
  prof::SessionData d;
  std::mt19937_64 rng(shape.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto log_uniform = [&](double lo, double hi) { return std::exp(std::log(lo) + unit(rng) * (std::log(hi) - std::log(lo))); };
  const prof::StringId names[] = {d.strings.intern("aten::addmm"), d.strings.intern("aten::relu"),
                                  d.strings.intern("aten::mul"), d.strings.intern("AddmmBackward0"),
                                  d.strings.intern("optimizer.step")};
  const prof::StringId kernel = d.strings.intern("gemm_kernel");
  int64_t stream_free[2] = {0, 0};
  uint64_t correlation = 1;

  auto emit = [&](auto& self, uint64_t thread, int64_t start, int64_t end, int depth) -> void {
    prof::OpRecord r;
    r.start_ns = start;
    r.end_ns = end;
    r.thread = thread;
    r.depth = depth;
    r.name = names[rng() % 5];
    if (unit(rng) < shape.launch_fraction) {
      r.correlation_id = correlation++;
      const int s = int(rng() % 2);
      prof::GpuActivityRecord g;
      g.start_ns = std::max(start + 500, stream_free[s]);
      g.end_ns = g.start_ns + int64_t(log_uniform(100, 50000));
      stream_free[s] = g.end_ns + 1;
      g.stream = 7 + s;
      g.name = kernel;
      g.external_id = r.correlation_id;
      d.gpu.push_back(g);
    }
    d.ops.push_back(r);
    if (depth >= shape.max_depth || end - start < 20) return;
    const int children = int(rng() % 4);
    int64_t cursor = start;
    for (int c = 0; c < children; ++c) {
      const int64_t room = end - cursor;
      if (room < 4) break;
      const int64_t gap = int64_t(unit(rng) * double(room) * 0.1);
      const int64_t width = std::max<int64_t>(1, int64_t(unit(rng) * double(room - gap) * 0.6));
      if (cursor + gap + width > end) break;
      self(self, thread, cursor + gap, cursor + gap + width, depth + 1);
      cursor += gap + width;
    }
  };

  const size_t per_thread = shape.ops / size_t(std::max(1, shape.threads));
  for (int t = 0; t < shape.threads; ++t) {
    const auto thread = uint64_t(t + 1);
    d.threads.push_back({thread, uint32_t(100 + t), d.strings.intern(t == 0 ? "main" : "worker " + std::to_string(t))});
    int64_t time = 1000;
    const size_t target = d.ops.size() + per_thread;
    while (d.ops.size() < target) {
      const auto width = int64_t(log_uniform(50, 2e6));
      emit(emit, thread, time, time + width, 0);
      time += width + int64_t(log_uniform(1, 1e5));
    }
  }
  int64_t end = 0;
  for (const prof::OpRecord& op : d.ops) end = std::max(end, op.end_ns);
  const int64_t step_len = std::max<int64_t>(1, end / 50);
  for (int64_t s = 0; s * step_len < end; ++s) {
    d.steps.push_back({s, s * step_len, (s + 1) * step_len - 1});
    d.counters.push_back({(s + 1) * step_len - 2, d.strings.intern("loss"), 2.0 / double(s + 1)});
  }
  d.start_ns = 0;
  d.end_ns = end;
  return std::make_shared<const prof::SessionData>(std::move(d));
}

// Allocations and frees on the CPU and cuda:0 in time order: each block lives a random while; a few
// records are imperfect on purpose when `imperfect` (frees of unknown blocks, reused addresses,
// frees of the wrong size).
inline prof::SessionData generate_memory(size_t events, uint64_t seed, bool imperfect) {
  prof::SessionData d;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const prof::StringId ops[] = {d.strings.intern("aten::empty"), d.strings.intern("aten::addmm"),
                                d.strings.intern("AddmmBackward0")};
  struct Live { uint64_t address; int64_t bytes; int32_t device; prof::MemoryCategoryId category; };
  std::vector<Live> live;
  uint64_t next_address = 0x1000;
  int64_t time = 0;
  while (d.memory.size() < events) {
    time += int64_t(rng() % 50);
    prof::MemoryRecord r;
    r.time_ns = time;
    const bool free = !live.empty() && unit(rng) < 0.48 + (live.size() > 2000 ? 0.2 : 0.0);
    if (free) {
      const size_t k = rng() % live.size();
      r.address = live[k].address;
      r.bytes = -live[k].bytes;
      r.device = live[k].device;
      r.category = unit(rng) < 0.9 ? live[k].category : prof::MemoryCategoryId::Other;
      if (imperfect && unit(rng) < 0.01) r.bytes -= 16;
      live[k] = live.back();
      live.pop_back();
    } else {
      r.address = next_address;
      next_address += 0x100;
      r.bytes = int64_t(std::exp(unit(rng) * 16.0)) + 1;
      r.device = rng() % 3 == 0 ? 0 : -1;
      r.category = prof::MemoryCategoryId(rng() % 6);
      r.op = ops[rng() % 3];
      if (imperfect && unit(rng) < 0.01 && !live.empty()) r.address = live[rng() % live.size()].address;
      else live.push_back({r.address, r.bytes, r.device, r.category});
    }
    if (imperfect && unit(rng) < 0.005) {
      prof::MemoryRecord orphan = r;
      orphan.address = 0xdead0000 + rng() % 1000;
      orphan.bytes = -64;
      d.memory.push_back(orphan);
    }
    d.memory.push_back(r);
  }
  d.start_ns = 0;
  d.end_ns = time;
  return d;
}

}  // namespace rt::viz::fixtures
