// app/studio/notebook_view/execution_queue.h — the cells waiting to run, the one the kernel has, and how long
// each ran: the notebook side of "run all".
//
//   rt::studio::ExecutionQueue queue;
//   for (auto& id : cellsToRun) queue.enqueue(id, now);           // each cell shows [*]:
//   while (const auto* next = queue.nextToSubmit())               // one cell at a time
//     queue.markSubmitted(kernel.execute(code(next->cellId)));
//   ...
//   queue.markStarted(request, now);                              // kernel's "started"
//   auto cellId = queue.cellFor(request);                         // route stream chunks and results
//   if (auto done = queue.finish(request, now)) {                 // kernel's "finished"
//     showRunTime(done->cellId, formatRunTime(done->runTime));    // "1.2 s"
//     if (failed) queue.dropWaiting();                            // an error stops "run all", as in Jupyter
//   }
//
// Contracts:
// - Cells are named by their stable nbformat id, so inserting, deleting or moving cells while they run or wait
//   does not misroute outputs; a deleted cell's request still finishes here (the caller drops its outputs).
// - Entries run in enqueue order; a cell may be queued more than once.
// - At most one entry is in flight (Submitted or Running): nextToSubmit() answers nullptr while one is, so
//   cells reach the kernel only after the previous one finished and an error or interrupt can still hold
//   back everything behind it.
// - markSubmitted() with no entry to submit, or with a request id already present, throws std::logic_error.
// - markStarted()/finish()/cellFor() of an unknown request answer nullopt (a late signal after a restart).
// - Plain class, no Qt: NotebookView owns one and feeds it the kernel client's signals.
#pragma once
#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace rt::studio {

class ExecutionQueue {
 public:
  using RequestId = std::uint64_t;
  using Clock = std::chrono::steady_clock;
  enum class State { Waiting, Submitted, Running };

  struct Entry {
    std::string cellId;
    State state = State::Waiting;
    std::optional<RequestId> request;  // set once submitted
    Clock::time_point queuedAt{};
    Clock::time_point startedAt{};     // set when Running
  };
  struct Finished {
    std::string cellId;
    std::chrono::duration<double> runTime{0};  // zero when the request never started (aborted while queued)
  };

  void enqueue(std::string cellId, Clock::time_point now);
  // The oldest waiting entry when nothing is in flight; else nullptr.
  const Entry* nextToSubmit() const;
  // Removes nextToSubmit()'s entry without running it (its cell was deleted); no-op when there is none.
  void dropNextToSubmit();
  // Records that nextToSubmit()'s entry was sent to the kernel as `request`.
  void markSubmitted(RequestId request);
  std::optional<std::string> cellFor(RequestId request) const;
  std::optional<std::string> markStarted(RequestId request, Clock::time_point now);
  std::optional<Finished> finish(RequestId request, Clock::time_point now);
  // Removes every entry not yet submitted (interrupt, an error, restart) and returns their cell ids.
  std::vector<std::string> dropWaiting();
  // Removes everything (the kernel is gone) and returns the entries, oldest first.
  std::vector<Entry> takeAll();

  // The most advanced state among the cell's entries (Running > Submitted > Waiting), nullopt if none.
  std::optional<State> stateOfCell(const std::string& cellId) const;
  // The entry the kernel has (Submitted or Running), if any.
  const Entry* inFlight() const;
  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }

 private:
  std::deque<Entry>::iterator findRequest(RequestId request);
  std::deque<Entry> entries_;
};

// "0.8 ms", "12 ms", "1.2 s", "2 min 5 s": JupyterLab's execute-time style.
std::string formatRunTime(std::chrono::duration<double> seconds);

}  // namespace rt::studio
