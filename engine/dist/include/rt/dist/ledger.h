// rt/dist/ledger.h — the collective ledger: every collective and point-to-point operation this process
// issued, always on, in a ring buffer of the most recent kLedgerCapacity, with enough to tell two ranks'
// sequences apart and to see who waits for whom.
//
//   for (const rt::dist::CollectiveRecord& r : rt::dist::ledger_snapshot())
//     std::printf("%s #%llu %s %s at %s\n", rt::dist::ledger_group_name(r.group).c_str(),
//                 (unsigned long long)r.seq, r.op, rt::dist::describe_tensor(r).c_str(),
//                 rt::dist::ledger_site(r.site).c_str());       // "default #683 all_reduce [20, 10] float32 at train.py:91"
//   rt::dist::write_ledger_trace("rank0.ledger.json", 0);       // self-describing JSON that loads as a Chrome trace
//
//   { rt::dist::CallSiteScope site(rt::dist::intern_call_site("train.py:91")); rt::dist::all_reduce(t); }
//
// Contracts:
// - Recording costs a few stores into a preallocated slot under an uncontended lock (no allocation, no
//   collective): the ProcessGroup's public methods record every call before the backend runs it, and the
//   backend marks it started and finished (Note [Ledger slots]). While a profiler records
//   (rt::EventRecorder), each finished call is also handed to it as an rt::CollectiveEvent.
// - The call site is what the innermost CallSiteScope on the calling thread names (rustytorch's bindings
//   open one with the user's Python file and line); 0 when none.
// - Every rank of a job publishes a summary of its ledger through the rendezvous store about twice a
//   second, and rank 0 compares them: a desync (two ranks' collectives with the same sequence number in
//   a group that differ in op, dtype or shape) or a suspected hang (ranks waiting in a collective for
//   longer than the hang threshold while a member has not issued it) is printed to stderr once, naming
//   the ranks, the collectives, their call sites and sequence numbers, followed for a hang by the Python
//   stacks of the ranks waited for (rt/dist/distributed.h starts it; RT_DISTRIBUTED_HANG_SECONDS, default
//   30, sets the threshold; RT_DISTRIBUTED_LEDGER=0 turns the monitor off).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "rt/dtype.h"
#include "rt/export.h"

RT_API_BEGIN

namespace rt::dist {

inline constexpr size_t kLedgerCapacity = 4096;

struct CollectiveRecord {
  uint64_t id = 0;          // position in this process's ledger (1, 2, ...); 0 for an empty slot
  uint64_t seq = 0;         // sequence number in its group (point-to-point operations: their own count)
  uint32_t group = 0;       // ledger_group_name(group)
  uint32_t site = 0;        // ledger_site(site); 0: unknown
  const char* op = "";      // "all_reduce", "send", ... (a string literal)
  ScalarType dtype = kFloat32;
  uint8_t ndim = 0;         // of the first tensor; sizes[] holds up to 4 of its dims
  bool point_to_point = false;
  int64_t sizes[4] = {0, 0, 0, 0};
  int64_t numel = 0;        // elements of every tensor the call sends or receives
  int32_t peer = -1;        // root, source or destination (group rank); -1 when none
  uint64_t shapes_hash = 0; // every tensor's shape and dtype
  int64_t enqueue_ns = 0;   // steady clock (rt::now_ns): when the caller issued it
  int64_t start_ns = 0;     // when the backend started it: gloo's worker took it up (collectives); the
                            // non-blocking call was made (mpi, nccl, gloo's send and recv)
  int64_t end_ns = 0;       // 0 while running
  uint64_t thread = 0;      // the engine thread that issued it (rt::current_thread_id())
};

// The records still in the ring, oldest first.
std::vector<CollectiveRecord> ledger_snapshot();
std::string ledger_group_name(uint32_t group);
std::string ledger_site(uint32_t site);  // "train.py:91", or "" for 0
// "[20, 10] float32" (the first tensor's shape, "..." past 4 dims) plus "(+N elements)" for lists.
std::string describe_tensor(const CollectiveRecord& r);
// One line: "all_reduce([20, 10] float32, root 1) at train.py:91, sequence 683 in group 'default'".
std::string describe_record(const CollectiveRecord& r);

uint32_t intern_call_site(const std::string& site);  // the same id for the same text
class CallSiteScope {
 public:
  explicit CallSiteScope(uint32_t site);
  ~CallSiteScope();
  CallSiteScope(const CallSiteScope&) = delete;
  CallSiteScope& operator=(const CallSiteScope&) = delete;

 private:
  uint32_t saved_;
};

// What a hang report shows of the rank everyone waits for: its threads' Python stacks. The Python package
// installs a provider (it takes the GIL); none installed: the report says so. Called from the monitor
// thread, only when rank 0 asks for this rank's stack.
using StackProvider = std::string (*)();
void set_stack_provider(StackProvider provider);
// Stops this process's ledger monitor (publishing summaries, and on rank 0 comparing them); the Python
// package calls it at interpreter exit, before the stack provider could no longer take the GIL.
void stop_ledger_monitor();

// Writes the ledger as JSON: {"rt_ledger": {"rank", "groups", "records": [...]}, "traceEvents": [...]} —
// Perfetto and chrome://tracing show one row per group with each collective from enqueue to end.
void write_ledger_trace(const std::string& path, int rank);
std::string ledger_trace_json(int rank);

}  // namespace rt::dist

RT_API_END
