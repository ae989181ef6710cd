// A session that grows the way a live view sees it (rt/prof/session_delta.h): the records of a finished
// SessionData handed over in random-size chunks, in an arrival order of the test's choosing (late outer ops,
// shuffled memory events...), with the strings they need, the step still open at the end of each chunk and the
// thread records arriving late. Each next() returns the SessionGrowth append_delta would, so view models can be
// appended to and compared with a model built from scratch on the same data.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "rt/prof/events.h"
#include "rt/prof/session_delta.h"

namespace rt::viz::fixtures {

enum class Arrival : uint8_t {
  RecordOrder,  // as the records are stored
  ByEnd,        // by end time: an op arrives when it ends, after its children (the recorder's order)
  Jittered,     // record order with records moved a few places later or earlier (threads drained in turn)
  Shuffled,     // any order
};

class GrowingSession {
 public:
  GrowingSession(const prof::SessionData& all, Arrival arrival, uint64_t seed) : all_(all), rng_(seed) {
    live_ = std::make_shared<prof::SessionData>();
    live_->name = all.name;
    live_->start_ns = all.start_ns;
    live_->clock_offset_ns = all.clock_offset_ns;
    live_->metadata = all.metadata;
    ops_ = order(all.ops.size(), arrival, [&](size_t i) { return all.ops[i].end_ns; });
    gpu_ = order(all.gpu.size(), arrival, [&](size_t i) { return all.gpu[i].end_ns; });
    memory_ = order(all.memory.size(), arrival, [&](size_t i) { return all.memory[i].time_ns; });
    counters_ = order(all.counters.size(), arrival, [&](size_t i) { return all.counters[i].time_ns; });
    collectives_ = order(all.collectives.size(), arrival, [&](size_t i) { return all.collectives[i].end_ns; });
  }

  std::shared_ptr<prof::SessionData> data() const { return live_; }
  bool done() const {
    return next_op_ == ops_.size() && next_gpu_ == gpu_.size() && next_memory_ == memory_.size() &&
           next_counter_ == counters_.size() && next_collective_ == collectives_.size() &&
           closed_steps_ == all_.steps.size();
  }

  // Appends up to `max_chunk` more records of each kind (a random number, 0 included), the next closed steps and
  // the open one; the thread records come with the third chunk. Returns what changed, as append_delta does.
  prof::SessionGrowth next(size_t max_chunk) {
    prof::SessionData& d = *live_;
    prof::SessionGrowth g;
    g.ops = d.ops.size();
    g.gpu = d.gpu.size();
    g.memory = d.memory.size();
    g.counters = d.counters.size();
    g.collectives = d.collectives.size();
    g.strings = d.strings.size();
    uint32_t max_string = 0;
    take(ops_, next_op_, max_chunk, [&](size_t i) {
      d.ops.push_back(all_.ops[i]);
      latest_ = std::max(latest_, all_.ops[i].end_ns);
      max_string = std::max({max_string, all_.ops[i].name, all_.ops[i].module, all_.ops[i].input_shapes});
    });
    take(gpu_, next_gpu_, max_chunk, [&](size_t i) {
      d.gpu.push_back(all_.gpu[i]);
      max_string = std::max(max_string, all_.gpu[i].name);
    });
    take(memory_, next_memory_, max_chunk, [&](size_t i) {
      d.memory.push_back(all_.memory[i]);
      max_string = std::max(max_string, all_.memory[i].op);
    });
    take(counters_, next_counter_, max_chunk, [&](size_t i) {
      d.counters.push_back(all_.counters[i]);
      max_string = std::max(max_string, all_.counters[i].name);
    });
    take(collectives_, next_collective_, max_chunk, [&](size_t i) {
      const prof::CollectiveRecord& c = all_.collectives[i];
      d.collectives.push_back(c);
      max_string = std::max({max_string, c.name, c.group, c.shape, c.dtype, c.call_site});
    });
    if (++chunks_ == 3) {
      d.threads = all_.threads;
      for (const prof::ThreadRecord& t : all_.threads) max_string = std::max(max_string, t.name);
    }
    while (d.strings.size() <= max_string) d.strings.intern(all_.strings.at(prof::StringId(d.strings.size())));

    if (open_step_) d.steps.pop_back();
    g.steps = d.steps.size();
    const size_t closing = std::min(all_.steps.size() - closed_steps_, size_t(rng_() % 3));
    for (size_t k = 0; k < closing; ++k) d.steps.push_back(all_.steps[closed_steps_++]);
    open_step_ = closed_steps_ < all_.steps.size();
    if (open_step_) {  // still open: it ends where the records read so far end
      prof::StepRecord open = all_.steps[closed_steps_];
      open.end_ns = std::max(open.start_ns, latest_);
      d.steps.push_back(open);
    }
    g.threads_changed = chunks_ == 3;
    g.records_changed = true;
    return g;
  }

 private:
  template <typename Key>
  std::vector<size_t> order(size_t n, Arrival arrival, Key key) {
    std::vector<size_t> out(n);
    std::iota(out.begin(), out.end(), size_t(0));
    if (arrival == Arrival::ByEnd)
      std::stable_sort(out.begin(), out.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
    if (arrival == Arrival::Shuffled) std::shuffle(out.begin(), out.end(), rng_);
    if (arrival == Arrival::Jittered)
      for (size_t i = 0; i + 1 < n; i += 1 + rng_() % 8) std::swap(out[i], out[std::min(n - 1, i + 1 + rng_() % 20)]);
    return out;
  }

  template <typename Add>
  void take(const std::vector<size_t>& order, size_t& next, size_t max_chunk, Add add) {
    const size_t n = std::min(order.size() - next, size_t(rng_() % (max_chunk + 1)));
    for (size_t k = 0; k < n; ++k) add(order[next++]);
  }

  const prof::SessionData& all_;
  std::mt19937_64 rng_;
  std::shared_ptr<prof::SessionData> live_;
  std::vector<size_t> ops_, gpu_, memory_, counters_, collectives_;
  size_t next_op_ = 0, next_gpu_ = 0, next_memory_ = 0, next_counter_ = 0, next_collective_ = 0;
  size_t closed_steps_ = 0;
  bool open_step_ = false;
  int chunks_ = 0;
  int64_t latest_ = 0;  // the latest end of the ops handed over
};

}  // namespace rt::viz::fixtures
