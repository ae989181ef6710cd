// Captures the autograd graph of the backward calls that run while a session records, and keeps the
// first and the latest of them (GraphRecord, events.h).
//
//   session::BackwardGraphs graphs;
//   graphs.attach();                      // start(): an AutogradObserver from now on
//   ...                                   // loss.backward() on any thread: one snapshot_graph per call
//   graphs.set_step(3);                   // Session::step()
//   graphs.take_first(batch.graphs);      // a flush: the first graph, once
//   graphs.detach();                      // stop()
//   graphs.take_latest(batch.graphs);     // the latest, when it is not the first
//
// Note [Graphs a session keeps]
// TensorBoard's graph dashboard shows one graph per run, and a profiler's user asks "what did my step
// compute" about the step they are looking at, usually the last. Training loops rebuild the same graph
// every step, so keeping every backward's graph would store the same picture thousands of times. A
// session therefore keeps two: the first backward's (what the model computed when the run started, the
// one a crashed or interrupted run still has in its store) and the latest one (what it computed at the
// end, after any change of shapes, modules or control flow; the one `--render graph` draws by default).
// When only one backward ran, the session has one graph.
//
// Cost: one rt::autograd::snapshot_graph per backward call, on the thread that runs it, before its first
// node (a walk of the graph copying names and shapes; bench/RESULTS.md, "Autograd graph capture", gives
// its share of a real backward); nothing per node beyond a thread-local check, unless the backward has
// several roots, whose graphs are merged as their nodes come up. The latest graph replaces the previous one under a
// mutex that only backward threads and the session's flush take, never while walking.
//
// Contracts
// - A backward started inside another one on the same thread (a hook calling backward) is not captured
//   separately. A backward still running when detach() is called is not captured.
// - Graph node ids are node addresses (graph_snapshot.h): valid for matching within one GraphRecord.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "rt/autograd/engine.h"
#include "rt/prof/events.h"

namespace rt::prof::session {

class BackwardGraphs final : public autograd::AutogradObserver {
 public:
  BackwardGraphs() = default;
  ~BackwardGraphs() override;
  BackwardGraphs(const BackwardGraphs&) = delete;
  BackwardGraphs& operator=(const BackwardGraphs&) = delete;

  void attach();
  void detach();
  void set_step(int64_t step) { step_.store(step, std::memory_order_relaxed); }

  // Moves the first backward's graph into `out` the first time it is there to take.
  void take_first(std::vector<GraphRecord>& out);
  // Moves the latest graph into `out` when a backward after the first one was captured.
  void take_latest(std::vector<GraphRecord>& out);
  // Copies the latest graph not yet taken (a live snapshot of the session); with `version`, also the
  // version of that latest graph (it counts the graphs kept as the latest, so a reader that saw version v
  // has seen the latest graph exactly while latest_version() == v).
  std::optional<GraphRecord> peek_latest(uint64_t* version = nullptr) const;
  uint64_t latest_version() const;
  uint64_t backward_calls() const { return calls_.load(std::memory_order_relaxed); }

  void on_backward_start(size_t num_nodes) override;
  void before_node(const autograd::NodeEvent& event) override;
  void on_backward_end() override;

 private:
  void keep(GraphRecord record);

  std::atomic<bool> attached_{false};
  std::atomic<int64_t> step_{0};
  std::atomic<uint64_t> calls_{0};
  mutable std::mutex mu_;
  std::optional<GraphRecord> first_;  // until taken
  bool first_taken_ = false;
  std::optional<GraphRecord> latest_;
  uint64_t latest_version_ = 0;  // guarded by mu_
};

}  // namespace rt::prof::session
