// app/studio/notebook_view/notebook_execution.h — runs a document's cells on the kernel and writes what comes
// back into the document: the part of NotebookView that needs no widgets.
//
//   rt::studio::NotebookExecution execution;
//   execution.set_document(&doc);
//   execution.set_kernel(kernel_client);
//   connect(&execution, &NotebookExecution::cellStateChanged, view, ...);   // [*]: on and off
//   execution.run({doc.cell(0).id, doc.cell(1).id});                        // "run all" is every id
//   execution.interrupt();                                                  // stops the cell, drops the rest
//
// Contracts:
// - Only code cells run; other ids are ignored. Cells run in the order given, after anything already queued.
// - A cell reaches the kernel only after the previous one finished (ExecutionQueue), so an error or an
//   interrupt stops everything queued behind it, as Jupyter's "run all" does. Dropped cells keep their old
//   outputs: a cell's outputs and execution count are cleared when it is sent to the kernel, not when queued.
// - Outputs go into the DOCUMENT (NotebookDocument::edit_outputs / set_execution_count), not only the screen:
//   streams through a StreamAccumulator per run ('\r' overwrites, size cap with a marker), display data and
//   execute results as nbformat mime bundles (application/json parsed into JSON), errors with their traceback.
//   The execution count is written when the cell starts; a cell that never ran (aborted) keeps none.
// - Outputs of a cell deleted while it runs are dropped; the run itself finishes normally.
// - interrupt(): waiting cells are dropped and the running one is interrupted (KernelClient::interrupt).
//   restart(): the same, then KernelClient::restart() (fresh namespace, counts from 1).
// - Without a kernel (or with no document) run() does nothing, returns false and emits message().
// - The run time of a cell is the kernel's own measure when it reports one, else the time between the
//   kernel's started and finished signals. It is shown, not saved (no notebook churn from re-runs).
#pragma once
#include "execution_queue.h"
#include "kernel/qt/kernel_client.h"
#include "notebook/notebook_document.h"
#include "notebook/stream_accumulator.h"

#include <QObject>
#include <QPointer>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rt::studio {

class NotebookExecution : public QObject {
  Q_OBJECT

 public:
  explicit NotebookExecution(QObject* parent = nullptr);
  ~NotebookExecution() override;

  void set_document(NotebookDocument* document);  // not owned; nullptr detaches (queued cells are dropped)
  void set_kernel(KernelClient* kernel);          // not owned
  KernelClient* kernel() const { return kernel_; }
  void set_stream_limits(StreamLimits limits) { limits_ = limits; }

  bool run(const std::vector<std::string>& cell_ids);
  void interrupt();
  void restart();

  bool busy() const { return !queue_.empty(); }
  std::optional<ExecutionQueue::State> state_of_cell(const std::string& cell_id) const {
    return queue_.state_of_cell(cell_id);
  }
  std::size_t queued_count() const { return queue_.size(); }

 signals:
  // The cell's queue state changed (waiting, running, finished or dropped): re-read state_of_cell().
  void cellStateChanged(const std::string& cell_id);
  // A cell the kernel had finished. `seconds` is its run time (0 if it never started).
  void cellFinished(const std::string& cell_id, rt::studio::ExecutionStatus status, double seconds);
  // A traceback named line `line` (1-based) of this cell as where the error happened.
  void cellErrorLine(const std::string& cell_id, int line);
  void busyChanged(bool busy);
  void message(const QString& text);

 private:
  void submit_next();
  void drop_waiting();
  std::optional<std::size_t> cell_index_for(quint64 request) const;
  void append_output(quint64 request, nlohmann::json output);
  void set_busy(bool busy);

  void on_started(quint64 id, int execution_count);
  void on_stream(quint64 id, rt::studio::Stream stream, const QString& text);
  void on_display(quint64 id, const rt::studio::DisplayData& data);
  void on_result(quint64 id, int execution_count, const rt::studio::DisplayData& data);
  void on_error(quint64 id, const rt::studio::ExecutionError& error);
  void on_finished(const rt::studio::ExecutionSummary& summary);

  NotebookDocument* document_ = nullptr;
  QPointer<KernelClient> kernel_;
  ExecutionQueue queue_;
  StreamLimits limits_;
  std::map<quint64, StreamAccumulator> streams_;  // per request
  std::map<quint64, int> execution_counts_;       // per request, from started
  bool busy_ = false;
};

// The 1-based line of cell `label` ("<cell LABEL>") where the traceback's innermost frame in that cell is, or 0.
int traceback_line_in_cell(const std::vector<std::string>& traceback, const std::string& label);

}  // namespace rt::studio
