#include "rt/prof/session.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <vector>

#include "collect/clock.h"
#include "collect/recorder.h"
#include "collect/collective_log.h"
#include "collect/gradient_log.h"
#include "collect/slot_converter.h"
#include "collect/thread_buffer.h"
#include "rt/error.h"
#include "rt/op_observer.h"
#include "rt/prof/cupti_collector.h"
#include "rt/prof/session_registry.h"
#include "session/backward_graphs.h"
#include "session/batch_merge.h"
#include "session/periodic_task.h"
#include "session/session_header.h"
#include "session/store_sink.h"

namespace rt::prof {

namespace {
std::mutex g_active_mu;
std::condition_variable g_active_cv;  // notified when g_active turns false
bool g_active = false;  // one session records at a time
std::function<void()> g_yield;  // the recording session's on_yield (Note [Sessions that give way] in session.h)
std::atomic<uint64_t> g_next_serial{1};  // SnapshotCursor::session

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
  std::stable_sort(d.collectives.begin(), d.collectives.end(),
                   [](const CollectiveRecord& a, const CollectiveRecord& b) { return a.start_ns < b.start_ns; });
  std::stable_sort(d.gradient_histograms.begin(), d.gradient_histograms.end(),
                   [](const GradientHistogramRecord& a, const GradientHistogramRecord& b) { return a.time_ns < b.time_ns; });
}

const char* yes_no(bool b) { return b ? "true" : "false"; }
}  // namespace

enum class Phase { Created, Recording, Stopping, Stopped };

// Note [Delta cursor]
// While a session records, `data` only grows: each flush (and each read) appends the drained batch at the
// end of every record vector, in drain order, and nothing reorders it until stop() sorts the records by
// time. So a count of records per kind is a position in `data` that stays valid for the whole recording:
// snapshot_since() copies each vector from the cursor's count to its end and sorts only that copy. Counts
// into a time-sorted vector would not do: a record drained late (an outer op is written when it ends, after
// its children; a thread's buffer drained just after another's) sorts before records already read, and
// would shift them. The one reordering, stop()'s sort, bumps `layout`; a cursor of an older layout gets the
// whole (sorted) session once, as a reset. A session with sort_at_stop = false never reorders `data`, so its
// cursors stay valid across stop() and the read after it is an increment like any other. Strings only grow too (StringTable interns at the end), and the
// closed steps, the kept graphs and the latest graph's version are counted the same way. With
// keep_in_memory = false the vectors stay empty, and so do the deltas.

// Note [Drain without a store]
// With a store, each flush's records must be a batch of their own (own StringTable) for the store to write,
// and are then merged into `data`: converted once, copied and re-interned once. Without a store nothing
// needs the batch, so ops, memory events and counters are converted straight into `data` against its
// StringTable, with the converter's name and shape caches kept for the whole session: a training loop's
// shapes are formatted once, not once per flush, and there is no merge. This halves the flush thread's
// work per record, which on a 2-core machine is time taken from training (bench/RESULTS.md, "Profiler
// overhead with every option"). Collectives, histograms, steps and graphs still come through `batch`.

// Records flow: thread buffers -> `batch` (drain) -> `data` (merge) and, with a store, the
// outbox -> the store (the flush thread, outside mu); without a store, ops, memory and counters go
// from the thread buffers to `data` directly. Lock order: mu, the buffer registry's,
// then a buffer's (held only briefly: see Note [Thread buffers]).
struct Session::State {
  explicit State(SessionOptions o) : options(std::move(o)), converter(batch, clock), direct(data, clock) {}

  // Moves every thread's published records into `batch`, or, without a store, their ops, memory events and
  // counters straight into `data` (Note [Drain without a store]). Caller holds mu.
  void drain() {
    clock.add_point();
    collect::SlotConverter& into = sink ? converter : direct;
    const size_t ops = data.ops.size(), memory = data.memory.size(), counters = data.counters.size();
    collect::BufferRegistry::instance().for_each([&](collect::ThreadBuffer& b) {
      const std::string name = b.thread_name();
      bool seen = false;
      b.drain([&](const collect::Segment& segment, const collect::Slot& slot) {
        if (!seen) into.thread(b, name);
        seen = true;
        into.convert(b, segment, slot);
      });
      if (!seen && !name.empty()) into.thread(b, name);
      batch.dropped_records += b.take_dropped();
    });
    counts.ops += data.ops.size() - ops;
    counts.memory += data.memory.size() - memory;
    counts.counters += data.counters.size() - counters;
    collect::BufferRegistry::instance().prune();
    collect::drain_collectives(batch);
    collect::drain_gradient_histograms(batch);
  }

  // Folds `batch` into `data` and queues it for the store; `batch` starts afresh. Caller holds mu.
  void take_batch() {
    counts.ops += batch.ops.size();
    counts.gpu += batch.gpu.size();
    counts.collectives += batch.collectives.size();
    counts.memory += batch.memory.size();
    counts.counters += batch.counters.size();
    counts.steps += batch.steps.size();
    counts.gradient_histograms += batch.gradient_histograms.size();
    graphs.take_first(batch.graphs);
    counts.graphs += batch.graphs.size();
    session::merge_batch(data, batch, options.keep_in_memory);
    if (sink && !session::batch_is_empty(batch)) {
      if (batch.end_ns == 0) batch.end_ns = rt::now_ns();  // the stored session's "recorded until"
      outbox.push_back(std::move(batch));
    }
    batch = SessionData{};
    converter.reset();
  }

  // The flush thread's task: drain, then write outside mu.
  void flush() noexcept {
    std::vector<SessionData> ready;
    {
      std::lock_guard<std::mutex> lk(mu);
      if (phase != Phase::Recording) return;
      try {
        drain();
        take_batch();
      } catch (const std::exception& e) {
        if (flush_error.empty()) flush_error = e.what();
      }
      ready.swap(outbox);
    }
    for (const SessionData& b : ready) sink->write(b);
  }

  // Everything so far, as snapshot() returns it, and the version of the latest graph it holds. Caller
  // holds mu; drains first while recording.
  SessionData snapshot_locked(uint64_t* graph_version = nullptr) {
    if (phase == Phase::Recording) {
      drain();
      take_batch();
    }
    SessionData copy = data;
    if (graph_version) *graph_version = graphs.latest_version();
    if (phase == Phase::Recording) {
      if (options.keep_in_memory) {
        copy.steps.push_back(open_step());
        if (auto latest = graphs.peek_latest(graph_version)) copy.graphs.push_back(std::move(*latest));
      }
      sort_records(copy);
    } else if (!options.sort_at_stop) {
      sort_records(copy);  // data stays in drain order (SessionOptions::sort_at_stop); copies are sorted
    }
    return copy;
  }

  // The position of a reader that holds everything in `data` (and the open step when `open`), with the
  // latest graph of `graph_version`. Caller holds mu.
  SnapshotCursor cursor_at_end(bool open, uint64_t graph_version) const {
    SnapshotCursor c;
    c.session = serial;
    c.layout = layout;
    c.ops = data.ops.size();
    c.gpu = data.gpu.size();
    c.collectives = data.collectives.size();
    c.memory = data.memory.size();
    c.counters = data.counters.size();
    c.closed_steps = data.steps.size();
    c.strings = data.strings.size();
    c.graphs_kept = data.graphs.size();
    c.latest_graph = graph_version;
    c.gradient_histograms = data.gradient_histograms.size();
    c.open_step = open;
    return c;
  }

  bool shows_open_step() const { return phase == Phase::Recording && options.keep_in_memory; }
  StepRecord open_step() const { return {step_index, step_start, rt::now_ns()}; }

  void require_recording(const char* what) const {
    if (phase != Phase::Recording)
      throw rt::Error(std::string("Session::") + what + ": the session is not recording; call start() first" +
                      (phase == Phase::Stopped ? " (a stopped session cannot restart: create a new Session)" : ""));
  }

  SessionOptions options;
  mutable std::mutex mu;
  Phase phase = Phase::Created;
  SessionData data;
  SessionData batch;  // drained since the last take_batch(), in its own StringTable
  RecordCounts counts;
  collect::TickMap clock;
  collect::SlotConverter converter;  // slots -> `batch`, which the store writes
  collect::SlotConverter direct;     // slots -> `data`, when there is no store; never reset
  std::unique_ptr<CuptiCollector> gpu;
  std::unique_ptr<session::StoreSink> sink;  // written only by the flush thread, then stop()
  std::vector<SessionData> outbox;           // batches waiting for the store, oldest first
  std::unique_ptr<session::PeriodicTask> flusher;
  session::BackwardGraphs graphs;  // Note [Graphs a session keeps]
  std::string flush_error;
  int64_t step_index = 0;
  int64_t step_start = 0;
  const uint64_t serial = g_next_serial.fetch_add(1);
  uint64_t layout = 0;  // Note [Delta cursor]
};

Session::Session(SessionOptions options) : state_(std::make_unique<State>(std::move(options))) {}

Session::~Session() {
  if (recording()) {
    try {
      stop();
    } catch (...) {  // a destructor must not throw; the session's data dies with it anyway
    }
  }
  // The studio's views may still show this session: the registry takes its final data.
  SnapshotCursor end;
  {
    std::lock_guard<std::mutex> lk(state_->mu);
    end = state_->cursor_at_end(false, state_->graphs.latest_version());
  }
  SessionRegistry::instance().retire(*this, std::move(state_->data), end);
}

const SessionOptions& Session::options() const { return state_->options; }

bool Session::recording() const {
  std::lock_guard<std::mutex> lk(state_->mu);
  return state_->phase == Phase::Recording;
}

bool recording_session_gives_way() {
  std::lock_guard<std::mutex> active(g_active_mu);
  return g_active && g_yield;
}

void Session::start() {
  State& s = *state_;
  std::unique_lock<std::mutex> lk(s.mu);
  if (s.phase != Phase::Created)
    throw rt::Error("Session::start: this session was already started; create a new Session to record again");
  if (s.options.flush_interval.count() <= 0)
    throw rt::Error(fmt::format("Session::start: flush_interval is {} ms; it must be positive (default 200 ms)",
                                s.options.flush_interval.count()));
  if (!s.options.keep_in_memory && s.options.store_path.empty())
    throw rt::Error("Session::start: keep_in_memory = false needs a store_path: without a store the records "
                    "would be discarded; set store_path or keep_in_memory = true");
  std::unique_lock<std::mutex> active(g_active_mu);
  if (g_active && g_yield) {  // Note [Sessions that give way]
    g_yield();
    g_active_cv.wait_for(active, std::chrono::seconds(5), [] { return !g_active; });
  }
  if (g_active)
    throw rt::Error("Session::start: another profiling session is recording in this process; stop it first "
                    "(only one session records at a time)");

  collect::g_generation.fetch_add(1);
  collect::BufferRegistry::instance().for_each([](collect::ThreadBuffer& b) {
    b.drain([](const collect::Segment&, const collect::Slot&) {});
    b.take_dropped();
  });
  collect::BufferRegistry::instance().prune();
  collect::discard_collectives();
  collect::discard_gradient_histograms();

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
  // The host tells views whether two sessions' steady clocks are comparable (rank_merge.h).
  if (char host[256] = {}; ::gethostname(host, sizeof host - 1) == 0 && host[0] != 0) d.metadata["host"] = host;
  for (const auto& [key, value] : s.options.metadata) d.metadata[key] = value;
  auto stop_gpu = [&s] {
    if (!s.gpu) return;
    SessionData discard;
    s.gpu->stop(discard);
    s.gpu.reset();
  };
  if (!s.options.store_path.empty()) {
    try {
      s.sink = std::make_unique<session::StoreSink>(s.options.store_path, d.name, d.metadata);
    } catch (...) {
      stop_gpu();
      throw;
    }
  }

  d.clock_offset_ns = epoch_offset_ns();
  s.clock.add_point();
  d.start_ns = rt::now_ns();
  s.batch.start_ns = d.start_ns;
  s.batch.clock_offset_ns = d.clock_offset_ns;
  s.step_index = 0;
  s.step_start = d.start_ns;
  collect::set_gradient_step(0);
  try {
    collect::start_recording(config);
    s.graphs.attach();
    s.flusher = std::make_unique<session::PeriodicTask>(s.options.flush_interval, [&s] { s.flush(); });
  } catch (...) {
    s.graphs.detach();
    collect::stop_recording();
    collect::set_gradient_step(-1);
    stop_gpu();
    s.sink.reset();
    throw;
  }
  s.phase = Phase::Recording;
  g_active = true;
  g_yield = s.options.on_yield;
  const int64_t start_ns = d.start_ns;
  active.unlock();
  lk.unlock();
  // Listed once this session's lock is released: the registry takes its own mutex, then a session's
  // (list(), retire()), never the other way round (ThreadSanitizer's lock-order check holds us to it).
  SessionRegistry::instance().add(*this, start_ns);
}

void Session::stop() {
  State& s = *state_;
  std::unique_lock<std::mutex> lk(s.mu);
  s.require_recording("stop");
  collect::stop_recording();
  collect::set_gradient_step(-1);
  s.graphs.detach();
  SessionData& d = s.data;
  d.end_ns = rt::now_ns();
  s.batch.steps.push_back({s.step_index, s.step_start, d.end_ns});
  s.drain();
  s.batch.end_ns = d.end_ns;
  if (s.gpu) {
    s.take_batch();
    for (const ThreadRecord& t : d.threads) s.batch.threads.push_back({t.thread, t.os_tid, 0});
    s.gpu->stop(s.batch);  // maps CUDA API records to threads by OS id
    s.gpu.reset();
    s.batch.threads.clear();
    s.batch.end_ns = d.end_ns;
  }
  s.graphs.take_first(s.batch.graphs);
  s.graphs.take_latest(s.batch.graphs);
  s.take_batch();
  s.phase = Phase::Stopping;
  lk.unlock();

  // The flush thread takes mu; it must be joined with mu released.
  s.flusher->stop();
  std::exception_ptr store_failure;
  if (s.sink) {
    std::vector<SessionData> ready;
    {
      std::lock_guard<std::mutex> relock(s.mu);
      ready.swap(s.outbox);
    }
    for (const SessionData& b : ready) s.sink->write(b);
    try {
      s.sink->finish();
    } catch (...) {
      store_failure = std::current_exception();
    }
  }

  lk.lock();
  s.flusher.reset();
  if (s.options.sort_at_stop) {
    sort_records(d);
    ++s.layout;  // Note [Delta cursor]
  }
  d.complete = true;
  s.phase = Phase::Stopped;
  {
    std::lock_guard<std::mutex> active(g_active_mu);
    g_active = false;
    g_yield = nullptr;
  }
  g_active_cv.notify_all();
  lk.unlock();
  if (store_failure) std::rethrow_exception(store_failure);
  if (!s.flush_error.empty())
    throw rt::Error("Session::stop: draining the thread buffers failed while recording (" + s.flush_error +
                    "); records drained after the failure may be missing");
}

void Session::step() {
  State& s = *state_;
  std::lock_guard<std::mutex> lk(s.mu);
  s.require_recording("step");
  const int64_t now = rt::now_ns();
  s.batch.steps.push_back({s.step_index, s.step_start, now});
  ++s.step_index;
  s.step_start = now;
  s.graphs.set_step(s.step_index);
  collect::set_gradient_step(s.step_index);
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
  std::lock_guard<std::mutex> lk(state_->mu);
  return state_->snapshot_locked();
}

SessionDelta Session::snapshot_since(const SnapshotCursor& cursor) const {
  State& s = *state_;
  std::lock_guard<std::mutex> lk(s.mu);
  if (cursor.session != 0 && cursor.session != s.serial)
    throw rt::ValueError(
        "Session::snapshot_since: the cursor belongs to another session; pass a default "
        "SnapshotCursor to read this one from the start");
  SessionDelta out;
  if (cursor.session == 0 || cursor.layout != s.layout) {  // Note [Delta cursor]
    out.reset = true;
    uint64_t version = 0;
    out.records = s.snapshot_locked(&version);
    out.cursor = s.cursor_at_end(s.shows_open_step(), version);
    return out;
  }

  if (s.phase == Phase::Recording) {
    s.drain();
    s.take_batch();
  }
  const SessionData& d = s.data;
  const std::pair<const char*, std::pair<uint64_t, size_t>> counts[] = {
      {"ops", {cursor.ops, d.ops.size()}},
      {"GPU activities", {cursor.gpu, d.gpu.size()}},
      {"collectives", {cursor.collectives, d.collectives.size()}},
      {"memory events", {cursor.memory, d.memory.size()}},
      {"counter samples", {cursor.counters, d.counters.size()}},
      {"closed steps", {cursor.closed_steps, d.steps.size()}},
      {"strings", {cursor.strings, d.strings.size()}},
      {"kept graphs", {cursor.graphs_kept, d.graphs.size()}},
      {"gradient histograms", {cursor.gradient_histograms, d.gradient_histograms.size()}}};
  for (const auto& [what, seen] : counts)
    if (seen.first > seen.second)
      throw rt::ValueError(
          fmt::format("Session::snapshot_since: the cursor is ahead of the session: it has read {} "
                      "{}, the session holds {}; pass the cursor this session's previous read "
                      "returned",
                      seen.first, what, seen.second));

  SessionData& r = out.records;
  copy_session_header(d, r);
  r.ops.assign(d.ops.begin() + ptrdiff_t(cursor.ops), d.ops.end());
  r.gpu.assign(d.gpu.begin() + ptrdiff_t(cursor.gpu), d.gpu.end());
  r.collectives.assign(d.collectives.begin() + ptrdiff_t(cursor.collectives), d.collectives.end());
  r.memory.assign(d.memory.begin() + ptrdiff_t(cursor.memory), d.memory.end());
  r.counters.assign(d.counters.begin() + ptrdiff_t(cursor.counters), d.counters.end());
  r.gradient_histograms.assign(d.gradient_histograms.begin() + ptrdiff_t(cursor.gradient_histograms),
                               d.gradient_histograms.end());
  sort_records(r);
  r.steps.assign(d.steps.begin() + ptrdiff_t(cursor.closed_steps), d.steps.end());
  out.replaces_open_step = cursor.open_step;
  if (s.shows_open_step()) r.steps.push_back(s.open_step());
  out.first_new_string = StringId(cursor.strings);
  out.new_strings.assign(d.strings.all().begin() + ptrdiff_t(cursor.strings), d.strings.all().end());

  uint64_t version = s.graphs.latest_version();
  if (d.graphs.size() != cursor.graphs_kept || (s.shows_open_step() && version != cursor.latest_graph)) {
    out.graphs_changed = true;
    r.graphs = d.graphs;
    if (s.shows_open_step())
      if (auto latest = s.graphs.peek_latest(&version)) r.graphs.push_back(std::move(*latest));
  }
  out.cursor = s.cursor_at_end(s.shows_open_step(), version);
  return out;
}

const SessionData& Session::data() const {
  std::lock_guard<std::mutex> lk(state_->mu);
  if (state_->phase != Phase::Stopped)
    throw rt::Error(state_->phase == Phase::Recording || state_->phase == Phase::Stopping
                        ? "Session::data: the session is still recording; call stop() first, or snapshot() for "
                          "what was recorded so far"
                        : "Session::data: the session was never started; call start() and stop() first");
  return state_->data;
}

RecordCounts Session::counts() const {
  std::lock_guard<std::mutex> lk(state_->mu);
  return state_->counts;
}

int64_t Session::store_session_id() const {
  std::lock_guard<std::mutex> lk(state_->mu);
  return state_->sink ? state_->sink->session_id() : 0;
}

}  // namespace rt::prof
