// execute_notebook_file: what `rtorch-studio --execute IN --output OUT` does, file to file, with exit codes.
#include "notebook/ipynb.h"
#include "notebook/outputs.h"
#include "runner/notebook_runner.h"
#include "runner_test_kernel.h"

#include <catch2/catch.hpp>

#include <fstream>

#include <random>
#include <sstream>

using namespace rt::studio;
using rt::studio::test::allowing_errors;
using rt::studio::test::fresh_test_kernel;
using rt::studio::test::notebook_of;

namespace {
struct Folder {
  Folder() {
    path = std::filesystem::temp_directory_path() / ("rt-runner-test-" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(path);
  }
  ~Folder() { std::filesystem::remove_all(path); }
  std::filesystem::path path;
};
}  // namespace

TEST_CASE("a notebook runs file to file and the result passes nbformat", "[studio][runner]") {
  PythonKernel& kernel = fresh_test_kernel();
  Folder folder;
  write_ipynb(folder.path / "in.ipynb",
              notebook_of({"import os\nos.getcwd()", "import rustytorch as rt\nprint(rt.arange(3).tolist())"}));
  std::ostringstream log;
  const int status = execute_notebook_file(kernel, folder.path / "in.ipynb", folder.path / "out.ipynb", {}, log);
  INFO(log.str());
  CHECK(status == kExecuteOk);
  CHECK(log.str().find("[2/2] cell 3") != std::string::npos);
  const Notebook out = read_ipynb(folder.path / "out.ipynb");
  // Cells run in the notebook's folder, as in Jupyter.
  CHECK(mime_text(out.cells[1].outputs.at(0), "text/plain") ==
        std::string("'").append(std::filesystem::canonical(folder.path).string()).append("'"));
  CHECK(stream_text(out.cells[2].outputs.at(0)) == "[0, 1, 2]\n");
  CHECK(rt::studio::test::nbformat_problems(folder.path / "out.ipynb").empty());
  CHECK(read_ipynb(folder.path / "in.ipynb").cells[1].outputs.empty());  // input untouched
}

TEST_CASE("exit status: 1 for a failing cell, 0 when errors are allowed, 2 for file problems", "[studio][runner]") {
  PythonKernel& kernel = fresh_test_kernel();
  Folder folder;
  const auto in = folder.path / "fails.ipynb";
  write_ipynb(in, notebook_of({"x = 1", "assert x == 2, 'x is not 2'", "print('later')"}));
  std::ostringstream log;
  CHECK(execute_notebook_file(kernel, in, folder.path / "out.ipynb", {}, log) == kExecuteCellFailed);
  CHECK(log.str().find("cell 3") != std::string::npos);
  CHECK(log.str().find("AssertionError: x is not 2") != std::string::npos);
  CHECK(log.str().find("--allow-errors") != std::string::npos);
  Notebook out = read_ipynb(folder.path / "out.ipynb");  // written, with the traceback in it
  CHECK(output_kind(out.cells[2].outputs.at(0)) == OutputKind::error);
  CHECK(out.cells[3].outputs.empty());

  std::ostringstream allowed_log;
  CHECK(execute_notebook_file(kernel, in, folder.path / "out.ipynb", allowing_errors(), allowed_log) == kExecuteOk);
  out = read_ipynb(folder.path / "out.ipynb");
  CHECK(stream_text(out.cells[3].outputs.at(0)) == "later\n");

  std::ostringstream missing_log;
  CHECK(execute_notebook_file(kernel, folder.path / "missing.ipynb", folder.path / "o.ipynb", {}, missing_log) ==
        kExecuteFileError);
  CHECK(missing_log.str().find("missing.ipynb") != std::string::npos);

  std::ofstream(folder.path / "corrupt.ipynb") << "{\"cells\": [";
  std::ostringstream corrupt_log;
  CHECK(execute_notebook_file(kernel, folder.path / "corrupt.ipynb", folder.path / "o.ipynb", {}, corrupt_log) ==
        kExecuteFileError);
  CHECK(corrupt_log.str().find("truncated") != std::string::npos);

  std::ostringstream unwritable_log;
  CHECK(execute_notebook_file(kernel, in, folder.path / "no-such-dir" / "o.ipynb", allowing_errors(),
                              unwritable_log) == kExecuteFileError);
  CHECK(unwritable_log.str().find("cannot save") != std::string::npos);
}

TEST_CASE("a timeout fails the run even with allow_errors", "[studio][runner]") {
  PythonKernel& kernel = fresh_test_kernel();
  Folder folder;
  write_ipynb(folder.path / "slow.ipynb", notebook_of({"while True:\n    pass", "'next'"}));
  std::ostringstream log;
  RunOptions options;
  options.allow_errors = true;
  options.timeout_seconds = 0.5;
  CHECK(execute_notebook_file(kernel, folder.path / "slow.ipynb", folder.path / "out.ipynb", options, log) ==
        kExecuteCellFailed);
  CHECK(log.str().find("timed out after 0.5 s") != std::string::npos);
  CHECK(log.str().find("--timeout") != std::string::npos);
  const Notebook out = read_ipynb(folder.path / "out.ipynb");
  CHECK(mime_text(out.cells[2].outputs.at(0), "text/plain") == "'next'");
}
