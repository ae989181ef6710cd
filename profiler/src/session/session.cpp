#include "rt/prof/session.h"

#include <algorithm>
#include <chrono>
#include <mutex>

#include "collect/clock.h"
#include "collect/recorder.h"
#include "collect/slot_converter.h"
#include "collect/thread_buffer.h"
#include "rt/dispatch.h"
#include "rt/error.h"
#include "rt/prof/cupti_collector.h"

namespace rt::prof {

namespace {
std::mutex g_active_mu;
bool g_active = false;  // one session records at a time

int64_t epoch_offset_ns() {
  const int64_t epoch = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  return epoch - rt::now_ns();
}

void sort_records(SessionData& d) {
  std::stable_sort(d.ops.begin(), d.ops.end(), [](const OpRecord& a, const OpRecord& b) {
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    if (a.thread != b.thread) return a.thread < b.thread;
    return a.depth < b.depth;
  });
  std::stable_sort(d.memory.begin(), d.memory.end(),
                   [](const MemoryRecord& a, const MemoryRecord& b) { return a.time_ns < b.time_ns; });
  std::stable_sort(d.counters.begin(), d.counters.end(),
                   [](const CounterRecord& a, const CounterRecord& b) { return a.time_ns < b.time_ns; });
  std::stable_sort(d.gpu.begin(), d.gpu.end(),
                   [](const GpuActivityRecord& a, const GpuActivityRecord& b) { return a.start_ns < b.start_ns; });
}

const char* yes_no(bool b) { return b ? "true" : "false"; }
}  // namespace

enum class Phase { Created, Recording, Stopped };

struct Session::State {
  explicit State(SessionOptions o) : options(std::move(o)), converter(data, clock) {}

  // Moves every thread's published records into `data`. Caller holds mu.
  void drain() {
    clock.add_point();
    collect::BufferRegistry::instance().for_each([&](collect::ThreadBuffer& b) {
      bool seen = false;
      b.drain([&](const collect::Segment& segment, const collect::Slot& slot) {
        if (!seen) converter.thread(b);
        seen = true;
        converter.convert(b, segment, slot);
      });
      if (!seen && !b.name.empty()) converter.thread(b);
      data.dropped_records += b.take_dropped();
    });
    collect::BufferRegistry::instance().prune();
  }

  void require_recording(const char* what) const {
    if (phase != Phase::Recording)
      throw rt::Error(std::string("Session::") + what + ": the session is not recording; call start() first" +
                      (phase == Phase::Stopped ? " (a stopped session cannot restart: create a new Session)" : ""));
  }

  SessionOptions options;
  mutable std::mutex mu;
  Phase phase = Phase::Created;
  SessionData data;
  collect::TickMap clock;
  collect::SlotConverter converter;
  std::unique_ptr<CuptiCollector> gpu;
  int64_t step_index = 0;
  int64_t step_start = 0;
};

Session::Session(SessionOptions options) : state_(std::make_unique<State>(std::move(options))) {}

Session::~Session() {
  if (recording()) {
    try {
      stop();
    } catch (...) {  // a destructor must not throw; the session's data dies with it anyway
    }
  }
}

const SessionOptions& Session::options() const { return state_->options; }

bool Session::recording() const {
  std::lock_guard<std::mutex> lk(state_->mu);
  return state_->phase == Phase::Recording;
}

void Session::start() {
  State& s = *state_;
  std::lock_guard<std::mutex> lk(s.mu);
  if (s.phase != Phase::Created)
    throw rt::Error("Session::start: this session was already started; create a new Session to record again");
  std::lock_guard<std::mutex> active(g_active_mu);
  if (g_active)
    throw rt::Error("Session::start: another profiling session is recording in this process; stop it first "
                    "(only one session records at a time)");

  collect::g_generation.fetch_add(1);
  collect::BufferRegistry::instance().for_each([](collect::ThreadBuffer& b) {
    b.drain([](const collect::Segment&, const collect::Slot&) {});
    b.take_dropped();
  });
  collect::BufferRegistry::instance().prune();

  collect::RecordingConfig config{s.options.record_shapes, s.options.profile_memory, s.options.with_stack};
  SessionData& d = s.data;
  d.name = s.options.name;
  d.metadata["device"] = "cpu";
  d.metadata["clock"] = collect::clock_uses_tsc() ? "tsc" : "steady";
  d.metadata["record_shapes"] = yes_no(s.options.record_shapes);
  d.metadata["profile_memory"] = yes_no(s.options.profile_memory);
  d.metadata["with_stack"] = yes_no(s.options.with_stack);
  d.metadata["cupti"] = "off";
  if (s.options.cupti != CuptiMode::Off) {
    auto gpu = std::make_unique<CuptiCollector>();
    try {
      gpu->start();
      config.push_correlation = &CuptiCollector::push_correlation;
      config.pop_correlation = &CuptiCollector::pop_correlation;
      s.gpu = std::move(gpu);
      d.metadata["cupti"] = "on";
      d.metadata["device"] = "cuda";
    } catch (const CuptiUnavailableError& e) {
      if (s.options.cupti == CuptiMode::On) throw;
      d.metadata["cupti"] = std::string("off: ") + e.what();
    }
  }

  d.clock_offset_ns = epoch_offset_ns();
  s.clock.add_point();
  d.start_ns = rt::now_ns();
  s.step_index = 0;
  s.step_start = d.start_ns;
  try {
    collect::start_recording(config);
  } catch (...) {
    collect::stop_recording();
    if (s.gpu) {
      SessionData discard;
      s.gpu->stop(discard);
      s.gpu.reset();
    }
    throw;
  }
  s.phase = Phase::Recording;
  g_active = true;
}

void Session::stop() {
  State& s = *state_;
  std::lock_guard<std::mutex> lk(s.mu);
  s.require_recording("stop");
  collect::stop_recording();
  SessionData& d = s.data;
  d.end_ns = rt::now_ns();
  d.steps.push_back({s.step_index, s.step_start, d.end_ns});
  s.drain();
  if (s.gpu) {
    s.gpu->stop(d);
    s.gpu.reset();
  }
  sort_records(d);
  d.complete = true;
  s.phase = Phase::Stopped;
  std::lock_guard<std::mutex> active(g_active_mu);
  g_active = false;
}

void Session::step() {
  State& s = *state_;
  std::lock_guard<std::mutex> lk(s.mu);
  s.require_recording("step");
  const int64_t now = rt::now_ns();
  s.data.steps.push_back({s.step_index, s.step_start, now});
  ++s.step_index;
  s.step_start = now;
}

void Session::counter(std::string_view name, double value) {
  {
    std::lock_guard<std::mutex> lk(state_->mu);
    state_->require_recording("counter");
  }
  if (!collect::record_counter(name, value))
    throw rt::Error("Session::counter: '" + std::string(name) + "' could not be recorded (this thread is exiting)");
}

SessionData Session::snapshot() const {
  State& s = *state_;
  std::lock_guard<std::mutex> lk(s.mu);
  if (s.phase == Phase::Recording) s.drain();
  SessionData copy = s.data;
  if (s.phase == Phase::Recording) {
    copy.steps.push_back({s.step_index, s.step_start, rt::now_ns()});
    sort_records(copy);
  }
  return copy;
}

const SessionData& Session::data() const {
  std::lock_guard<std::mutex> lk(state_->mu);
  if (state_->phase != Phase::Stopped)
    throw rt::Error(state_->phase == Phase::Recording
                        ? "Session::data: the session is still recording; call stop() first, or snapshot() for "
                          "what was recorded so far"
                        : "Session::data: the session was never started; call start() and stop() first");
  return state_->data;
}

}  // namespace rt::prof
