#include "runner/notebook_runner.h"

#include "notebook/outputs.h"
#include "runner/cell_output_builder.h"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <ctime>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>

namespace rt::studio {

// Collects the kernel's events per request, on the kernel's threads, into outputs of its own; the runner takes
// them when the request has finished. Keeping them per request id (instead of pointing at "the current cell")
// means no event can land in the wrong cell, even one that arrives before execute() has returned its id.
class NotebookRunner::Collector final : public KernelListener {
 public:
  explicit Collector(StreamLimits limits) : limits_(limits) {}

  struct Result {
    std::vector<nlohmann::json> outputs;
    ExecutionSummary summary;
    std::vector<ExecutionError> errors;
  };

  void on_stream(RequestId id, Stream stream, const std::string& text) override {
    std::lock_guard lock(mutex_);
    if (Pending* p = pending(id)) p->builder.add_stream(stream, text);
  }
  void on_display(RequestId id, const DisplayData& data) override {
    std::lock_guard lock(mutex_);
    if (Pending* p = pending(id)) p->builder.add_display(data);
  }
  void on_result(RequestId id, int execution_count, const DisplayData& data) override {
    std::lock_guard lock(mutex_);
    if (Pending* p = pending(id)) p->builder.add_result(execution_count, data);
  }
  void on_error(RequestId id, const ExecutionError& error) override {
    std::lock_guard lock(mutex_);
    if (Pending* p = pending(id)) {
      p->builder.add_error(error);
      p->errors.push_back(error);
    }
  }
  void on_finished(const ExecutionSummary& summary) override {
    {
      std::lock_guard lock(mutex_);
      if (Pending* p = pending(summary.id)) {
        p->summary = summary;
        p->finished = true;
      }
    }
    finished_.notify_all();
  }

  // Waits until request `id` finished or `deadline` passed; true if it finished.
  bool wait(RequestId id, std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    return finished_.wait_until(lock, deadline, [&] {
      Pending* p = pending(id);
      return p && p->finished;
    });
  }

  // The request's outputs and summary; forgets the request (later events for it are dropped).
  Result take(RequestId id) {
    std::lock_guard lock(mutex_);
    Result result;
    if (auto it = requests_.find(id); it != requests_.end()) {
      result.outputs = std::move(it->second->outputs);
      result.summary = it->second->summary;
      result.errors = std::move(it->second->errors);
      requests_.erase(it);
    }
    done_.insert(id);
    // Finished requests older than this one were not ours (someone else used the kernel meanwhile): drop them.
    for (auto it = requests_.begin(); it != requests_.end() && it->first < id;)
      it = it->second->finished ? requests_.erase(it) : std::next(it);
    return result;
  }

 private:
  struct Pending {
    explicit Pending(StreamLimits limits) : builder(outputs, limits) {}
    std::vector<nlohmann::json> outputs;
    CellOutputBuilder builder;
    ExecutionSummary summary;
    std::vector<ExecutionError> errors;
    bool finished = false;
  };

  Pending* pending(RequestId id) {
    if (done_.count(id)) return nullptr;
    auto& slot = requests_[id];
    if (!slot) slot = std::make_unique<Pending>(limits_);
    return slot.get();
  }

  StreamLimits limits_;
  std::mutex mutex_;
  std::condition_variable finished_;
  std::map<RequestId, std::unique_ptr<Pending>> requests_;
  std::set<RequestId> done_;
};

namespace {

bool is_blank(const std::string& source) {
  return source.find_first_not_of(" \t\r\n\f\v") == std::string::npos;
}

std::string iso_utc_now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1'000'000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  return fmt::format("{}.{:06d}Z", text, micros);
}

std::string format_seconds(double seconds) {
  return seconds == static_cast<double>(static_cast<long long>(seconds)) ? fmt::format("{}", static_cast<long long>(seconds))
                                                                          : fmt::format("{:g}", seconds);
}

}  // namespace

bool NotebookRunReport::all_ok() const { return first_failure() == nullptr; }

const CellRunReport* NotebookRunReport::first_failure() const {
  for (const auto& cell : cells)
    if (cell.status != ExecutionStatus::ok || cell.timed_out) return &cell;
  return nullptr;
}

NotebookRunner::NotebookRunner(PythonKernel& kernel, RunOptions options)
    : kernel_(kernel), options_(options), collector_(std::make_unique<Collector>(options.stream_limits)) {
  kernel_.add_listener(collector_.get());
}

NotebookRunner::~NotebookRunner() { kernel_.remove_listener(collector_.get()); }

CellRunReport NotebookRunner::run_cell(Notebook& nb, std::size_t index) {
  if (index >= nb.cells.size())
    throw std::out_of_range(fmt::format("run_cell: cell index {} is out of range (the notebook has {} cells)", index,
                                        nb.cells.size()));
  Cell& cell = nb.cells[index];
  if (!cell.is_code())
    throw std::invalid_argument(fmt::format("run_cell: cell {} is a {} cell; only code cells run", index + 1,
                                            cell_type_name(cell.type)));
  CellRunReport report;
  report.cell_index = index;
  report.cell_id = cell.id;
  cell.clear_outputs();
  const std::string started_at = iso_utc_now();

  const RequestId id = kernel_.execute(cell.source);
  const auto start = std::chrono::steady_clock::now();
  const auto never = std::chrono::steady_clock::time_point::max();
  const auto deadline = options_.timeout_seconds
                            ? start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                          std::chrono::duration<double>(*options_.timeout_seconds))
                            : never;
  bool finished = collector_->wait(id, deadline);
  if (!finished) {
    // See the contracts: interrupt (again every second, in case the cell catches KeyboardInterrupt), then
    // restart the kernel, then give up on the cell.
    report.timed_out = true;
    for (int attempt = 0; attempt < 10 && !finished; ++attempt) {
      kernel_.interrupt();
      finished = collector_->wait(id, std::chrono::steady_clock::now() + std::chrono::seconds(1));
    }
    if (!finished) {
      kernel_.restart();
      finished = collector_->wait(id, std::chrono::steady_clock::now() + std::chrono::seconds(30));
    }
  }
  Collector::Result result = collector_->take(id);
  cell.outputs = std::move(result.outputs);
  report.status = finished ? result.summary.status : ExecutionStatus::aborted;
  report.execution_count = result.summary.execution_count;
  report.seconds = finished && result.summary.seconds > 0
                       ? result.summary.seconds
                       : std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (report.execution_count > 0) cell.execution_count = report.execution_count;
  if (!result.errors.empty()) {
    const ExecutionError& error = result.errors.front();
    report.error = error.evalue.empty() ? error.ename : error.ename + ": " + error.evalue;
    report.traceback = error.traceback;
  } else if (report.status == ExecutionStatus::aborted) {
    report.error = "the cell was aborted (the kernel was interrupted or restarted before it ran)";
  }
  if (report.timed_out) {
    const std::string message =
        fmt::format("Cell {} timed out after {} s", index + 1, format_seconds(*options_.timeout_seconds));
    report.error = message + (finished ? "" : "; the kernel was restarted because the interrupt did not stop it");
    cell.outputs.push_back(make_error_output("CellTimeoutError", report.error, {report.error}));
  }
  if (options_.record_timing) {
    const std::string ended_at = iso_utc_now();
    cell.metadata["execution"] = {{"iopub.execute_input", started_at},
                                  {"iopub.status.busy", started_at},
                                  {"iopub.status.idle", ended_at},
                                  {"shell.execute_reply", ended_at}};
  }
  return report;
}

NotebookRunReport NotebookRunner::run(Notebook& nb, const std::function<void(const CellRunReport&)>& on_cell) {
  NotebookRunReport report;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::size_t> to_run;
  for (std::size_t i = 0; i < nb.cells.size(); ++i)
    if (nb.cells[i].is_code() && !is_blank(nb.cells[i].source)) to_run.push_back(i);
  report.code_cells = to_run.size();
  for (std::size_t k = 0; k < to_run.size(); ++k) {
    CellRunReport cell = run_cell(nb, to_run[k]);
    const bool failed = cell.status != ExecutionStatus::ok || cell.timed_out;
    const bool kernel_lost = cell.timed_out && cell.status == ExecutionStatus::aborted;
    report.cells.push_back(cell);
    if (on_cell) on_cell(report.cells.back());
    if (failed && (!options_.allow_errors || kernel_lost) && k + 1 < to_run.size()) {
      report.stopped_early = true;
      break;
    }
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace rt::studio
