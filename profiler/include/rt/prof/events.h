// rt/prof/events.h — the records a profiling session holds. Every collector produces them,
// the store persists them, exporters and views read them. Plain data, no behaviour.
//
//   rt::prof::SessionData s;
//   rt::prof::StringId relu = s.strings.intern("relu");
//   s.ops.push_back({.start_ns = 10, .end_ns = 42, .thread = 1, .name = relu, .kind = rt::prof::OpKind::Op});
//
// Contracts
// - Times are steady-clock nanoseconds (rt::now_ns()); SessionData::clock_offset_ns converts
//   them to Unix-epoch nanoseconds (epoch = steady + offset), so sessions can be compared.
// - Strings (op names, modules, kernel names, shape lists) are interned once per session:
//   records carry a StringId, 0 is the empty string.
// - `correlation_id` links a CPU op to the GPU activity it launched (CUPTI external
//   correlation); 0 means none. `sequence_nr` links a forward op to the backward node that
//   autograd created for it (-1 when none), exactly as PyTorch's profiler does ("Sequence number").
// - Ops on one thread nest strictly: a child starts at or after its parent's start and ends at
//   or before its parent's end; `depth` is 0 for ops called from user code.
// - `graphs` are autograd graphs captured when a backward ran during the session (a Session keeps the
//   first and the latest; see Note [Graphs a session keeps] in session.h). Their nodes' sequence_nr match
//   the OpRecords of that forward and backward, which is how views annotate them with time and memory.
// - `gradient_histograms` summarise parameters' gradients (Note [Gradient histograms]), by time.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rt/autograd/graph_snapshot.h"
#include "rt/export.h"

RT_API_BEGIN

namespace rt::prof {

using StringId = uint32_t;

// Interns strings: intern("relu") returns the same id every time; id 0 is "".
class StringTable {
 public:
  StringTable() { strings_.emplace_back(); index_.emplace(std::string(), 0); }
  StringId intern(std::string_view s) {
    auto it = index_.find(std::string(s));
    if (it != index_.end()) return it->second;
    const auto id = StringId(strings_.size());
    strings_.emplace_back(s);
    index_.emplace(strings_.back(), id);
    return id;
  }
  const std::string& at(StringId id) const { return strings_.at(id); }
  size_t size() const { return strings_.size(); }
  const std::vector<std::string>& all() const { return strings_; }

 private:
  std::vector<std::string> strings_;
  std::unordered_map<std::string, StringId> index_;
};

enum class OpKind : uint8_t {
  Op,            // an engine op (rt::OpGuard)
  BackwardNode,  // an autograd node executed during backward ("AddmmBackward0")
  UserRange,     // rt.profiler.record_function / rt::prof::RecordFunction
};

struct ThreadRecord {
  uint64_t thread = 0;  // the engine's thread id (OpEvent::thread_id)
  uint32_t os_tid = 0;  // gettid(), what Perfetto shows
  StringId name = 0;    // "main", "autograd", "dataloader 0"...
  int32_t rank = -1;    // merged job sessions (rank_merge.h): the rank it ran in; -1 otherwise. Views only
};

// A display name for a GPU stream. Recorded sessions have none (views call a stream "cuda:D stream S");
// merge_rank_sessions (rank_merge.h) names each rank's streams. Views only: the store and the trace
// export do not keep them.
struct StreamRecord {
  int32_t device = 0;
  int32_t stream = 0;
  StringId name = 0;  // "rank 1 · cuda:0 stream 7"
};

struct OpRecord {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t thread = 0;
  StringId name = 0;
  StringId module = 0;       // "encoder.layer0"
  StringId input_shapes = 0; // "[[64, 784], [784, 10]]" (PyTorch's "Input Dims" text)
  StringId input_dtypes = 0; // "[float32, float32]"
  int64_t sequence_nr = -1;
  uint64_t correlation_id = 0;
  int32_t depth = 0;
  OpKind kind = OpKind::Op;
};

enum class GpuActivityKind : uint8_t { Kernel, Memcpy, Memset, Synchronization, Runtime, Driver };

// One GPU-side (or CUDA API) activity from CUPTI.
struct GpuActivityRecord {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  GpuActivityKind kind = GpuActivityKind::Kernel;
  int32_t device = 0;
  int32_t stream = 0;
  uint64_t thread = 0;          // Runtime/Driver: the CPU thread that called the API
  StringId name = 0;            // kernel name, "Memcpy HtoD", "cudaLaunchKernel"...
  uint64_t correlation_id = 0;  // CUPTI correlation id (API call <-> activity)
  uint64_t external_id = 0;     // our op's correlation id (OpRecord::correlation_id)
  uint64_t bytes = 0;           // memcpy/memset
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  int32_t registers = 0;
  int32_t shared_memory = 0;
  uint8_t copy_kind = 0;        // CUpti_ActivityMemcpyKind for memcpy
};

enum class MemoryCategoryId : uint8_t { Parameter, Gradient, Activation, OptimizerState, Temporary, Other };

struct MemoryRecord {
  int64_t time_ns = 0;
  uint64_t thread = 0;
  uint64_t address = 0;
  int64_t bytes = 0;             // > 0 allocation, < 0 free
  int64_t total_allocated = 0;   // on this device after the event
  int32_t device = -1;           // -1 CPU, else the CUDA device index
  MemoryCategoryId category = MemoryCategoryId::Other;
  StringId op = 0;               // the op that allocated the block
};

// One collective or point-to-point operation of a process group (rt/dist) that finished while the session
// recorded, as its ledger saw it: issued at enqueue_ns by `thread`, started by the backend at start_ns (gloo
// queues work for its workers; the other backends start a call as it is issued), finished at end_ns.
// Views show [start_ns, end_ns] on a communication track of the session; the op that issued it
// ("all_reduce") is an OpRecord on `thread` from enqueue_ns.
struct CollectiveRecord {
  int64_t enqueue_ns = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t thread = 0;       // the engine thread that issued it (ThreadRecord::thread)
  StringId name = 0;         // "all_reduce", "send", ...
  StringId group = 0;        // the process group: "default", "group 1"
  StringId shape = 0;        // the first tensor's: "[20, 10]" ("[]" for a barrier)
  StringId dtype = 0;        // "float32"
  StringId call_site = 0;    // "train.py:91"; 0 when not known
  uint64_t seq = 0;          // sequence number in its group (point-to-point: their own count)
  int64_t numel = 0;         // elements of every tensor it sends or receives
  int64_t bytes = 0;         // ... and their bytes
  int32_t peer = -1;         // root, source or destination (a rank of the group); -1 when none
  bool point_to_point = false;
  int32_t rank = -1;         // merged job sessions (rank_merge.h): the rank it ran in; -1 otherwise. Views only
};

struct CounterRecord {
  int64_t time_ns = 0;
  StringId name = 0;  // "loss", "lr", "samples/s"
  double value = 0.0;
};

struct StepRecord {
  int64_t step = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

// One parameter's gradient as an optimizer step saw it (Note [Gradient histograms]).
struct GradientHistogramRecord {
  int64_t step = -1;            // the session's step number (StepRecord::step) it belongs to; -1 when no step is open
  int64_t time_ns = 0;          // session clock, like every other record
  StringId name = 0;            // the parameter's qualified name: "encoder.0.weight"
  int64_t numel = 0;
  double norm = 0;              // L2 norm (NaN/inf as rt::debug::GradientStats says)
  double lo = 0, hi = 0;        // range of the finite values (0, 0 when there is none)
  int64_t nan_count = 0, inf_count = 0;
  std::vector<int64_t> counts;  // equal-width bins over [lo, hi] (rt/debug/gradient_stats.h's Histogram; 32 by default)
};

// Note [Gradient histograms]
// rt::prof::record_gradient_histogram (gradient_histograms.h) summarises one gradient with
// rt::debug::gradient_stats: bin i of `counts` holds lo + i*w <= v < lo + (i+1)*w with w = (hi - lo) / bins,
// the last bin also holds hi, and with lo == hi every finite value is in bin 0. The counts sum to
// numel - nan_count - inf_count; a gradient with no finite value has empty counts and lo == hi == 0.
// One record per parameter per call (rt.profiler records one per parameter per backward, or per
// record_gradients call), in the step that was open when it was recorded.

// The autograd graph of one backward call, captured before its first node ran.
struct GraphRecord {
  int64_t time_ns = 0;          // when the backward's first node was about to run
  int64_t step = -1;            // the session's step it ran in (StepRecord::step); -1 when not known
  uint64_t backward_index = 0;  // which backward of the session: 0 for the first
  uint64_t thread = 0;          // the engine thread that ran it (ThreadRecord::thread)
  autograd::GraphSnapshot graph;
};

// Everything one session recorded.
struct SessionData {
  std::string name;
  int64_t clock_offset_ns = 0;  // epoch = steady + offset
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  bool complete = false;        // stop() ran; false for a session cut short
  uint64_t dropped_records = 0; // records lost (full buffers, CUPTI drops)
  StringTable strings;
  std::vector<ThreadRecord> threads;
  std::vector<OpRecord> ops;
  std::vector<GpuActivityRecord> gpu;
  std::vector<CollectiveRecord> collectives;
  std::vector<MemoryRecord> memory;
  std::vector<CounterRecord> counters;
  std::vector<StepRecord> steps;
  std::vector<GraphRecord> graphs;  // by backward_index
  std::vector<GradientHistogramRecord> gradient_histograms;  // by time (Note [Gradient histograms])
  std::vector<StreamRecord> streams;  // GPU stream names, when something named them (views only)
  std::unordered_map<std::string, std::string> metadata;  // "device": "cpu", "rt_version"...
};

}  // namespace rt::prof

RT_API_END
