// rt/prof/session.h — record what a program does: ops, autograd nodes, user ranges, memory,
// steps, counters and (with CUPTI) GPU activity.
//
//   rt::prof::Session s({.record_shapes = true, .profile_memory = true, .with_stack = true});
//   s.start();
//   for (auto& batch : loader) {
//     rt::prof::RecordFunction r("train_step");      // a user range (record_function.h)
//     auto loss = train_step(batch);
//     s.counter("loss", loss.item<double>());
//     s.step();                                     // closes step n, opens step n + 1
//   }
//   s.stop();
//   const rt::prof::SessionData& d = s.data();      // events.h: ops, memory, steps, ...
//
//   // A long headless run that streams into the store and keeps little in memory:
//   rt::prof::Session run({.profile_memory = true, .name = "train",
//                          .store_path = "runs.sqlite", .keep_in_memory = false});
//   run.start();                                    // opens the store: throws StoreError
//   ...                                             // readers see the session grow
//   run.stop();                                     // last records, then complete = 1
//   int64_t id = run.store_session_id();            // Store::load_session(id)
//
// Contracts
// - One session records at a time per process: start() throws rt::Error while another
//   session (or another rt::EventRecorder) records, unless that one gives way (SessionOptions::on_yield).
//   A Session records once: start, stop, read.
// - Recorded between start() and stop(): every engine op that both begins and ends in that
//   window, on every thread; backward nodes (OpKind::BackwardNode, sequence_nr = the node's,
//   so they link to the forward op with the same sequence_nr); user ranges; allocator events
//   (profile_memory); counters; steps; gradient histograms (rt/prof/gradient_histograms.h, stamped with the
//   step open when they were recorded). Ops still running at stop() are not recorded.
// - Autograd graphs: each backward call that runs while the session records has its graph captured
//   (rt::autograd::snapshot_graph of its roots: op names, output shapes, module paths, sequence
//   numbers) before its first node runs; the session keeps the first backward's graph and the latest
//   one (SessionData::graphs, at most two; Note [Graphs a session keeps] in
//   profiler/src/session/backward_graphs.h). The first reaches the store with the next flush, the
//   latest at stop() (an interrupted capture keeps only the first); snapshot() includes the latest so
//   far.
// - Ops of one thread nest strictly; `depth` counts the recorded ranges (ops, nodes, user
//   ranges) enclosing an op. data() and snapshot() list ops by start time (ties: outer first),
//   memory events, counters and gradient histograms by time (data(): in drain order when sort_at_stop is false).
// - Steps: step 0 starts at start(); each step() ends the current step and starts the next;
//   stop() ends the last one.
// - with_stack records the module scope (rt::ModuleScope path, "net.encoder.0"). Python call
//   stacks are not recorded (out of scope for this profiler).
// - snapshot() may be called from any thread while recording (a live view at frame time): it
//   drains every thread's buffer into the session and returns a copy of everything so far.
//   snapshot_since(cursor) drains the same way but copies only what the cursor has not seen (a live
//   view's refresh; rt/prof/session_delta.h has the contract and an example).
// - Draining: a flush thread owned by the session (started by start(), joined by stop())
//   moves every thread's records into the session each flush_interval, so thread buffers stay
//   small (their chunks are reused) and memory is what the session keeps. See
//   Note [Session memory].
// - Metadata: "device", "clock", "record_shapes", "profile_memory", "with_stack", "cupti", "host" (the
//   machine's name, gethostname), then SessionOptions::metadata over them.
// - Store: with store_path set, start() opens the store (Store::open, creating or migrating
//   it) and begins a session there with the metadata; it throws StoreError (store.h) with
//   the store's message when it cannot. Each flush then appends the records drained since the previous
//   one (one transaction, on the flush thread: never on a recording thread nor under a lock
//   a recording thread takes), so other connections read a growing session with complete = 0,
//   and a process killed mid-capture leaves every flushed record readable. stop() writes the
//   rest, then finishes the stored session (complete = 1, indexes, op statistics). After
//   stop() the stored session equals data() (keep_in_memory) except for record order: the
//   store keeps flush order, data() sorts. A thread keeps the name it had when its first
//   records were flushed. GPU activity (CUPTI) is delivered at stop(), so an interrupted
//   capture holds CPU records only. When a write fails, recording goes on in memory and
//   stop() throws StoreError naming the failure, after the session has stopped (data()
//   then works); the stored session stays incomplete.
// - Cost: while no session records, ops pay the dispatcher's one relaxed atomic check.
//   Recording costs a few tens of ns per op, with no lock and no allocation per event
//   (see Note [Thread buffers] in profiler/src/collect/thread_buffer.h). Events that cannot
//   be kept (nesting deeper than 512, out of memory) count in SessionData::dropped_records.
//
// Note [Session memory]
// With keep_in_memory (the default) the session holds every record, as data() and snapshot()
// return them: 64 bytes per op, 112 per GPU activity, 56 per memory event, 24 per counter or
// step, 120 plus 8 per bin per gradient histogram, plus each distinct string once; snapshot() copies all of it, snapshot_since() what is new.
// Each recording thread's buffer takes about 300 KiB, more only while the thread records faster than the flush thread
// drains; batches waiting for a store that cannot keep up (bench/prof_live_bench measures its
// rate) also stay in memory until written. With keep_in_memory = false (requires store_path)
// each flush drops what it queued for the store: data() and snapshot() then hold the header,
// metadata, threads and dropped_records but no op, GPU, memory, counter, step or gradient histogram records
// (counts() says how many were recorded), and memory stays bounded by one flush interval's
// records.
// Note [Sessions that give way]
// The remote agent records for its subscribers when nothing else does. A program that then starts its own
// profile must not fail because someone attached: the agent's session sets on_yield, and start() asks it to
// stop (the agent stops it on its own thread, which owns it) and waits for that, then records as usual. The
// wait is bounded (5 s) so a stuck owner gives the old error instead of a hang.
#pragma once
#include <chrono>
#include <functional>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "rt/export.h"
#include "rt/prof/events.h"
#include "rt/prof/session_delta.h"

RT_API_BEGIN

namespace rt::prof {

enum class CuptiMode : uint8_t {
  Auto,  // record GPU activity when CUPTI was built and a GPU is usable; else note why in metadata["cupti"]
  On,    // as Auto, but start() throws when it cannot
  Off,
};

struct SessionOptions {
  bool record_shapes = false;   // inputs' shapes and dtypes (PyTorch's "Input Dims")
  bool profile_memory = false;  // allocator events with category and owning op
  bool with_stack = false;      // module scope of each op and user range
  CuptiMode cupti = CuptiMode::Auto;
  std::string name;             // SessionData::name
  std::string store_path;       // a SQLite store to stream into while recording; "" = none
  std::chrono::milliseconds flush_interval{200};  // how often buffers drain (and the store grows); > 0
  bool keep_in_memory = true;   // false: drop records once written to the store (needs store_path)
  // A session that gives way (Note [Sessions that give way]): when another Session starts while this one
  // records, that start() calls on_yield (on its own thread, under the profiler's lock: it must only signal,
  // never block or start or stop a session) and waits up to 5 s for this one to stop. The remote agent's own
  // session uses it, so attaching never makes a program's rt.profiler.profile fail. Empty: a second start throws.
  std::function<void()> on_yield;
  // false: stop() leaves the records in drain order instead of sorting them by time, so it is quick and a
  // reader's cursor stays valid across it (the read after stop() is an increment, not a reset; session_delta.h).
  // snapshot() and resets still return sorted copies; data() is in drain order. The remote agent's own sessions
  // use it: their subscribers already hold everything, and recording resumes in the next session sooner.
  bool sort_at_stop = true;
  // Extra SessionData::metadata (stored with the session), e.g. a launched rank's "job_id" and "rank";
  // they override the session's own keys ("device", "host", ...) of the same name.
  std::unordered_map<std::string, std::string> metadata;
};

// How many records a session has recorded so far, kept or not (Note [Session memory]).
struct RecordCounts {
  uint64_t ops = 0;  // ops, backward nodes and user ranges
  uint64_t gpu = 0;
  uint64_t collectives = 0;
  uint64_t memory = 0;
  uint64_t counters = 0;
  uint64_t steps = 0;
  uint64_t graphs = 0;  // autograd graphs kept: at most 2 (the first and the latest backward's)
  uint64_t gradient_histograms = 0;
};

class Session {
 public:
  explicit Session(SessionOptions options = {});
  ~Session();  // stops a session that is still recording
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Throws rt::Error: already started, another session records, or bad options; StoreError
  // when store_path cannot be opened or written.
  void start();
  // Throws rt::Error when not recording; StoreError when the store could not take everything
  // (the session is stopped all the same).
  void stop();
  bool recording() const;

  void step();                                       // throws rt::Error when not recording
  void counter(std::string_view name, double value); // throws rt::Error when not recording

  // Everything recorded so far; thread-safe; while recording, data is incomplete (end_ns 0).
  SessionData snapshot() const;
  // What was recorded since `cursor` (rt/prof/session_delta.h); thread-safe. Throws rt::ValueError for a
  // cursor of another session or one ahead of this session.
  SessionDelta snapshot_since(const SnapshotCursor& cursor) const;
  // The finished session; throws rt::Error before stop().
  const SessionData& data() const;
  const SessionOptions& options() const;
  RecordCounts counts() const;        // drained so far; complete after stop()
  int64_t store_session_id() const;   // the session's id in store_path once started; 0 without a store

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Names the calling thread in the sessions it records into ("dataloader 0"); default names
// are "main" for the process's main thread and "thread <os tid>" for the others.
void set_thread_name(std::string_view name);

// Whether a session is recording now (any thread may ask).
bool profiling_active();
// Whether the session recording now gives way to a new one (SessionOptions::on_yield: the remote agent's),
// so that starting a session would succeed; false when none records.
bool recording_session_gives_way();

}  // namespace rt::prof

RT_API_END
