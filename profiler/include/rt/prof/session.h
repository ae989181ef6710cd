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
// Contracts
// - One session records at a time per process: start() throws rt::Error while another
//   session (or another rt::EventRecorder) records. A Session records once: start, stop, read.
// - Recorded between start() and stop(): every engine op that both begins and ends in that
//   window, on every thread; backward nodes (OpKind::BackwardNode, sequence_nr = the node's,
//   so they link to the forward op with the same sequence_nr); user ranges; allocator events
//   (profile_memory); counters; steps. Ops still running at stop() are not recorded.
// - Ops of one thread nest strictly; `depth` counts the recorded ranges (ops, nodes, user
//   ranges) enclosing an op. data() and snapshot() list ops by start time (ties: outer first),
//   memory events and counters by time.
// - Steps: step 0 starts at start(); each step() ends the current step and starts the next;
//   stop() ends the last one.
// - with_stack records the module scope (rt::ModuleScope path, "net.encoder.0"). Python call
//   stacks are not recorded (out of scope for this profiler).
// - snapshot() may be called from any thread while recording (a live view at frame time): it
//   drains every thread's buffer into the session and returns a copy of everything so far.
// - Cost: while no session records, ops pay the dispatcher's one relaxed atomic check.
//   Recording costs a few tens of ns per op, with no lock and no allocation per event
//   (see Note [Thread buffers] in profiler/src/collect/thread_buffer.h). Events that cannot
//   be kept (nesting deeper than 512, out of memory) count in SessionData::dropped_records.
#pragma once
#include <memory>
#include <string>
#include <string_view>

#include "rt/prof/events.h"

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
};

class Session {
 public:
  explicit Session(SessionOptions options = {});
  ~Session();  // stops a session that is still recording
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void start();  // throws rt::Error: already started, or another session records
  void stop();   // throws rt::Error when not recording
  bool recording() const;

  void step();                                       // throws rt::Error when not recording
  void counter(std::string_view name, double value); // throws rt::Error when not recording

  // Everything recorded so far; thread-safe; while recording, data is incomplete (end_ns 0).
  SessionData snapshot() const;
  // The finished session; throws rt::Error before stop().
  const SessionData& data() const;
  const SessionOptions& options() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Names the calling thread in the sessions it records into ("dataloader 0"); default names
// are "main" for the process's main thread and "thread <os tid>" for the others.
void set_thread_name(std::string_view name);

// Whether a session is recording now (any thread may ask).
bool profiling_active();

}  // namespace rt::prof
