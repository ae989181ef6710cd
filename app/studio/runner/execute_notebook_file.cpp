#include "notebook/ipynb.h"
#include "runner/notebook_runner.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

namespace rt::studio {

int execute_notebook_file(PythonKernel& kernel, const std::filesystem::path& input,
                          const std::filesystem::path& output, const RunOptions& options, std::ostream& log) {
  Notebook nb;
  try {
    nb = read_ipynb(input);
  } catch (const std::exception& e) {  // NotebookFormatError, NotebookFileError
    fmt::print(log, "error: {}\n", e.what());
    return kExecuteFileError;
  }
  std::error_code ec;
  const std::filesystem::path folder = std::filesystem::absolute(input, ec).parent_path();
  if (!folder.empty()) kernel.set_working_directory(folder);

  NotebookRunner runner(kernel, options);
  std::size_t done = 0;
  std::size_t total = 0;
  for (const auto& cell : nb.cells)
    if (cell.is_code() && cell.source.find_first_not_of(" \t\r\n\f\v") != std::string::npos) ++total;
  fmt::print(log, "executing {} ({} code cells)\n", input.string(), total);
  const NotebookRunReport report = runner.run(nb, [&](const CellRunReport& cell) {
    ++done;
    const char* status = cell.timed_out ? "timed out" : to_string(cell.status);
    fmt::print(log, "[{}/{}] cell {} (id {}): {}, {:.2f} s{}\n", done, total, cell.cell_index + 1, cell.cell_id, status,
               cell.seconds, cell.error.empty() ? "" : " - " + cell.error);
  });

  try {
    write_ipynb(output, nb);
  } catch (const NotebookFileError& e) {
    fmt::print(log, "error: {}\n", e.what());
    return kExecuteFileError;
  }

  bool any_timeout = false;
  for (const auto& cell : report.cells) any_timeout = any_timeout || cell.timed_out;
  const CellRunReport* failure = report.first_failure();
  if (!failure) {
    fmt::print(log, "ok: {} cells in {:.2f} s, written to {}\n", report.cells.size(), report.seconds, output.string());
    return kExecuteOk;
  }
  if (options.allow_errors && !any_timeout) {
    std::size_t errors = 0;
    for (const auto& cell : report.cells) errors += cell.status != ExecutionStatus::ok;
    fmt::print(log, "done with {} failing cell(s) (allowed): {} cells in {:.2f} s, written to {}\n", errors,
               report.cells.size(), report.seconds, output.string());
    return kExecuteOk;
  }
  fmt::print(log, "error: cell {} (id {}) failed: {}\n", failure->cell_index + 1, failure->cell_id, failure->error);
  for (const auto& line : failure->traceback) fmt::print(log, "  {}\n", line);
  fmt::print(log, "The executed notebook, with this error in cell {}, was written to {}. {}\n", failure->cell_index + 1,
             output.string(),
             failure->timed_out ? "Make the cell faster, or pass a larger --timeout."
                                : "Fix the cell, or pass --allow-errors to run every cell regardless.");
  return kExecuteCellFailed;
}

int execute_notebook_file(const std::filesystem::path& input, const std::filesystem::path& output,
                          const RunOptions& options, std::ostream& log) {
  // Reading first: a bad input never starts Python.
  try {
    (void)read_ipynb(input);
  } catch (const std::exception& e) {
    fmt::print(log, "error: {}\n", e.what());
    return kExecuteFileError;
  }
  KernelOptions kernel_options;
  kernel_options.echo_output = false;  // cell output goes into the notebook, the log stays readable
  PythonKernel kernel(kernel_options);
  return execute_notebook_file(kernel, input, output, options, log);
}

}  // namespace rt::studio
