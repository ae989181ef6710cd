// app/studio/runner/notebook_runner.h — runs a notebook's code cells through the kernel and fills in their
// outputs, like `jupyter nbconvert --execute` (nbclient). Qt-free; `rtorch-studio --execute` is
// execute_notebook_file().
//
//   rt::studio::PythonKernel kernel({.working_directory = "samples/notebooks"});
//   rt::studio::Notebook nb = rt::studio::read_ipynb("samples/notebooks/digits_mlp.ipynb");
//   rt::studio::NotebookRunner runner(kernel, {.allow_errors = false, .timeout_seconds = 600});
//   rt::studio::NotebookRunReport report = runner.run(nb, [](const rt::studio::CellRunReport& cell) {
//     fmt::print(stderr, "cell {} {} in {:.2f} s\n", cell.cell_index, to_string(cell.status), cell.seconds);
//   });
//   rt::studio::write_ipynb("out.ipynb", nb);
//   return report.succeeded() ? 0 : 1;
//
//   // Or all of it, with the exit status of `rtorch-studio --execute`:
//   int status = rt::studio::execute_notebook_file("in.ipynb", "out.ipynb", {}, std::cerr);
//
// Contracts (nbclient's rules unless said otherwise):
// - Code cells run in order, each as one kernel request labelled by its execution count (tracebacks show
//   `File "<cell 3>", line 2`). Before a cell runs its outputs and execution count are cleared; afterwards
//   they hold what the cell printed, displayed, returned and raised, and the count the kernel gave it.
//   Markdown and raw cells, and code cells whose source is only whitespace, are left untouched.
// - The first cell that raises stops the run (later cells keep what they had) unless allow_errors; then every
//   cell runs and the report lists each error.
// - timeout_seconds (per cell): when a cell runs longer, the kernel is interrupted (KeyboardInterrupt in the
//   cell), the cell is reported as timed out ("Cell 4 timed out after 2 s"), and an error output with that
//   message follows the cell's own. If the interrupt does not stop the cell within 10 s the kernel is
//   restarted and the run stops. A timeout always makes the run fail, even with allow_errors (it then goes on
//   with the next cell).
// - record_timing puts nbclient's `metadata.execution` timestamps ("iopub.execute_input",
//   "shell.execute_reply", ISO 8601 UTC) on each run cell. Off by default: they change the file on every run
//   (notebook churn); each cell's run time is in the report either way.
// - run() blocks the calling thread; it must not be the thread of a kernel listener callback. One run at a
//   time per runner. The notebook must not be touched by anyone else during run().
#pragma once
#include "kernel/python_kernel.h"
#include "notebook/notebook.h"
#include "notebook/stream_accumulator.h"

#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace rt::studio {

struct RunOptions {
  bool allow_errors = false;
  std::optional<double> timeout_seconds;  // per cell; none: wait as long as it takes
  bool record_timing = false;
  StreamLimits stream_limits;             // output cap per cell
};

struct CellRunReport {
  std::size_t cell_index = 0;  // index in Notebook::cells
  std::string cell_id;
  ExecutionStatus status = ExecutionStatus::ok;
  bool timed_out = false;
  int execution_count = 0;
  double seconds = 0.0;
  std::string error;  // "ZeroDivisionError: division by zero", "Cell 4 timed out after 2 s"; empty when ok
  std::vector<std::string> traceback;
};

struct NotebookRunReport {
  std::vector<CellRunReport> cells;  // the cells that ran (or were attempted), in order
  std::size_t code_cells = 0;        // code cells with source in the notebook
  bool stopped_early = false;        // a failure stopped the run before the last code cell
  double seconds = 0.0;
  // True when no cell raised, timed out or was aborted (allow_errors still counts errors here; see
  // exit_status for what --allow-errors tolerates).
  bool all_ok() const;
  // The first cell that failed, if any.
  const CellRunReport* first_failure() const;
};

class NotebookRunner {
 public:
  NotebookRunner(PythonKernel& kernel, RunOptions options = {});
  ~NotebookRunner();
  NotebookRunner(const NotebookRunner&) = delete;
  NotebookRunner& operator=(const NotebookRunner&) = delete;

  // Runs every code cell (see the contracts). `on_cell` is called on the calling thread after each cell.
  NotebookRunReport run(Notebook& nb, const std::function<void(const CellRunReport&)>& on_cell = {});
  // Runs the one code cell at `index` (std::out_of_range / std::invalid_argument for a bad index or a
  // non-code cell).
  CellRunReport run_cell(Notebook& nb, std::size_t index);

  const RunOptions& options() const { return options_; }

 private:
  class Collector;
  PythonKernel& kernel_;
  RunOptions options_;
  std::unique_ptr<Collector> collector_;
};

// Exit statuses of execute_notebook_file (and `rtorch-studio --execute`).
enum ExecuteExitStatus : int {
  kExecuteOk = 0,          // every cell ran; or errors happened and allow_errors was set (no timeouts)
  kExecuteCellFailed = 1,  // a cell raised (without allow_errors), timed out, or the kernel failed to start
  kExecuteFileError = 2,   // the input could not be read / is not a notebook, or the output could not be written
};

// Reads `input`, runs it in a new PythonKernel (working directory: the input's folder, as Jupyter does;
// C-level output captured into the cells, not echoed), writes the executed notebook to `output` (which may be
// `input`) and returns an ExecuteExitStatus. The output is written also when a cell failed, so its traceback
// can be read there (nbconvert writes nothing then). `log` gets one line per cell
// ("[3/12] cell 5 (id 1a2b3c4d): ok, 0.01 s") and, on failure, the error with its traceback and what to do.
// Needs the process's one PythonKernel: throws std::logic_error if one already exists (see python_kernel.h).
int execute_notebook_file(const std::filesystem::path& input, const std::filesystem::path& output,
                          const RunOptions& options, std::ostream& log);

// The same with a kernel the caller owns (for tests and for callers that already have a kernel).
int execute_notebook_file(PythonKernel& kernel, const std::filesystem::path& input,
                          const std::filesystem::path& output, const RunOptions& options, std::ostream& log);

}  // namespace rt::studio
