// app/studio/notebook_view/execution_queue.h — the cells waiting to run, the one the kernel has, and how long
// each ran: the notebook side of "run all".
//
//   rt::studio::ExecutionQueue queue;
//   for (auto& id : cells_to_run) queue.enqueue(id, now);             // each cell shows [*]:
//   while (const auto* next = queue.next_to_submit())                 // one cell at a time
//     queue.mark_submitted(kernel.execute(code(next->cell_id)));
//   ...
//   queue.mark_started(request, now);                                 // kernel's "started"
//   auto cell_id = queue.cell_for(request);                           // route stream chunks and results
//   if (auto done = queue.finish(request, now)) {                     // kernel's "finished"
//     show_run_time(done->cell_id, format_run_time(done->run_time));  // "1.2 s"
//     if (failed) queue.drop_waiting();                               // an error stops "run all", as in Jupyter
//   }
//
// Contracts:
// - Cells are named by their stable nbformat id, so inserting, deleting or moving cells while they run or wait
//   does not misroute outputs; a deleted cell's request still finishes here (the caller drops its outputs).
// - Entries run in enqueue order; a cell may be queued more than once.
// - At most one entry is in flight (Submitted or Running): next_to_submit() answers nullptr while one is, so
//   cells reach the kernel only after the previous one finished and an error or interrupt can still hold
//   back everything behind it.
// - mark_submitted() with no entry to submit, or with a request id already present, throws std::logic_error.
// - mark_started()/finish()/cell_for() of an unknown request answer nullopt (a late signal after a restart).
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
    std::string cell_id;
    State state = State::Waiting;
    std::optional<RequestId> request;  // set once submitted
    Clock::time_point queued_at{};
    Clock::time_point started_at{};  // set when Running
  };
  struct Finished {
    std::string cell_id;
    std::chrono::duration<double> run_time{0};  // zero when the request never started (aborted while queued)
  };

  void enqueue(std::string cell_id, Clock::time_point now);
  // The oldest waiting entry when nothing is in flight; else nullptr.
  const Entry* next_to_submit() const;
  // Removes next_to_submit()'s entry without running it (its cell was deleted); no-op when there is none.
  void drop_next_to_submit();
  // Records that next_to_submit()'s entry was sent to the kernel as `request`.
  void mark_submitted(RequestId request);
  std::optional<std::string> cell_for(RequestId request) const;
  std::optional<std::string> mark_started(RequestId request, Clock::time_point now);
  std::optional<Finished> finish(RequestId request, Clock::time_point now);
  // Removes every entry not yet submitted (interrupt, an error, restart) and returns their cell ids.
  std::vector<std::string> drop_waiting();
  // Removes everything (the kernel is gone) and returns the entries, oldest first.
  std::vector<Entry> take_all();

  // The most advanced state among the cell's entries (Running > Submitted > Waiting), nullopt if none.
  std::optional<State> state_of_cell(const std::string& cell_id) const;
  // The entry the kernel has (Submitted or Running), if any.
  const Entry* in_flight() const;
  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }

 private:
  std::deque<Entry>::iterator find_request(RequestId request);
  std::deque<Entry> entries_;
};

// "0.8 ms", "12 ms", "1.2 s", "2 min 5 s": JupyterLab's execute-time style.
std::string format_run_time(std::chrono::duration<double> seconds);

}  // namespace rt::studio
