// NotebookRunner with a real kernel: outputs, errors, allow_errors, timeouts, caps, rustytorch, matplotlib.
#include "notebook/outputs.h"
#include "runner/notebook_runner.h"
#include "runner_test_kernel.h"

#include <catch2/catch.hpp>

#include <chrono>

using namespace rt::studio;
using rt::studio::test::allowing_errors;
using rt::studio::test::fresh_test_kernel;
using rt::studio::test::notebook_of;

TEST_CASE("run fills streams, results and execution counts like nbconvert", "[studio][runner]") {
  PythonKernel& kernel = fresh_test_kernel();
  Notebook nb = notebook_of({
      "import sys\nprint('hello')\nprint('careful', file=sys.stderr)",
      "x = 41\nx + 1",
      "   \n",  // blank: not run, keeps what it had
      "for i in range(5):\n    print(f'\\r{i * 25}%', end='')\nprint()",
      "print('no result');",
  });
  nb.cells[3].outputs.push_back(make_stream_output("stdout", "old"));
  nb.cells.push_back(Cell::new_raw(nb, "raw stays"));
  NotebookRunner runner(kernel);
  std::vector<std::size_t> seen;
  const NotebookRunReport report = runner.run(nb, [&](const CellRunReport& c) { seen.push_back(c.cell_index); });
  CHECK(report.all_ok());
  CHECK(report.code_cells == 4);
  CHECK(seen == std::vector<std::size_t>{1, 2, 4, 5});
  CHECK(!report.stopped_early);

  const Cell& first = nb.cells[1];
  CHECK(first.execution_count == 1);
  REQUIRE(first.outputs.size() == 2);
  CHECK(stream_name(first.outputs[0]) == "stdout");
  CHECK(stream_text(first.outputs[0]) == "hello\n");
  CHECK(stream_text(first.outputs[1]) == "careful\n");

  const Cell& second = nb.cells[2];
  CHECK(second.execution_count == 2);
  REQUIRE(second.outputs.size() == 1);
  CHECK(output_kind(second.outputs[0]) == OutputKind::execute_result);
  CHECK(second.outputs[0]["execution_count"] == 2);
  CHECK(mime_text(second.outputs[0], "text/plain") == "42");

  CHECK(stream_text(nb.cells[3].outputs.at(0)) == "old");
  CHECK(!nb.cells[3].execution_count);
  CHECK(stream_text(nb.cells[4].outputs.at(0)) == "100%\n");  // the progress line overwritten in place
  CHECK(nb.cells[4].execution_count == 3);
  REQUIRE(nb.cells[5].outputs.size() == 1);  // the ';' suppresses the (None) result
  CHECK(!nb.cells[5].metadata.contains("execution"));  // no timing churn by default
}

TEST_CASE("the first error stops the run, with a traceback into the cell's lines", "[studio][runner]") {
  PythonKernel& kernel = fresh_test_kernel();
  Notebook nb = notebook_of({"a = 1", "b = 2\nc = b / 0\nprint('never')", "a = 3"});
  nb.cells[3].outputs.push_back(make_stream_output("stdout", "from an earlier run\n"));
  NotebookRunner runner(kernel);
  const NotebookRunReport report = runner.run(nb);
  CHECK(!report.all_ok());
  CHECK(report.stopped_early);
  REQUIRE(report.cells.size() == 2);
  const CellRunReport* failure = report.first_failure();
  REQUIRE(failure);
  CHECK(failure->cell_index == 2);
  CHECK(failure->status == ExecutionStatus::error);
  CHECK(failure->error == "ZeroDivisionError: division by zero");
  const Cell& cell = nb.cells[2];
  REQUIRE(cell.outputs.size() == 1);
  CHECK(output_kind(cell.outputs[0]) == OutputKind::error);
  CHECK(cell.outputs[0]["ename"] == "ZeroDivisionError");
  const std::string traceback = error_traceback_text(cell.outputs[0]);
  CHECK(traceback.find("line 2") != std::string::npos);
  CHECK(traceback.find("c = b / 0") != std::string::npos);
  CHECK(cell.execution_count == 2);
  CHECK(stream_text(nb.cells[3].outputs.at(0)) == "from an earlier run\n");  // not run
}

TEST_CASE("allow_errors runs every cell", "[studio][runner]") {
  PythonKernel& kernel = fresh_test_kernel();
  Notebook nb = notebook_of({"raise ValueError('first')", "undefined_name", "'still runs'"});
  NotebookRunner runner(kernel, allowing_errors());
  const NotebookRunReport report = runner.run(nb);
  REQUIRE(report.cells.size() == 3);
  CHECK(!report.stopped_early);
  CHECK(report.cells[0].error == "ValueError: first");
  CHECK(report.cells[1].error.find("NameError") == 0);
  CHECK(report.cells[2].status == ExecutionStatus::ok);
  CHECK(mime_text(nb.cells[3].outputs.at(0), "text/plain") == "'still runs'");
  CHECK(nb.cells[3].execution_count == 3);
}

TEST_CASE("a cell over the timeout is interrupted and reported", "[studio][runner]") {
  PythonKernel& kernel = fresh_test_kernel();
  Notebook nb = notebook_of({"import time\nprint('sleeping', flush=True)\ntime.sleep(60)", "'after'"});
  RunOptions options = allowing_errors();
  options.timeout_seconds = 1.0;
  NotebookRunner runner(kernel, options);
  const auto start = std::chrono::steady_clock::now();
  const NotebookRunReport report = runner.run(nb);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(elapsed < 15.0);
  REQUIRE(report.cells.size() == 2);
  CHECK(report.cells[0].timed_out);
  CHECK(report.cells[0].error.starts_with("Cell 2 timed out after 1 s"));
  const auto& outputs = nb.cells[1].outputs;
  REQUIRE(outputs.size() >= 2);
  CHECK(stream_text(outputs.front()) == "sleeping\n");
  CHECK(outputs.back()["ename"] == "CellTimeoutError");
  bool interrupted = false;
  for (const auto& out : outputs) interrupted = interrupted || (out.value("ename", "") == "KeyboardInterrupt");
  CHECK(interrupted);
  CHECK(report.cells[1].status == ExecutionStatus::ok);  // the kernel is still usable
  CHECK(mime_text(nb.cells[2].outputs.at(0), "text/plain") == "'after'");
  CHECK(!report.all_ok());  // a timeout is a failure even with allow_errors
}

TEST_CASE("a flood of output is capped per cell", "[studio][runner]") {
  PythonKernel& kernel = fresh_test_kernel();
  Notebook nb = notebook_of({"for i in range(200):\n    print('x' * 999)"});
  RunOptions options;
  options.stream_limits.max_text_bytes = 20'000;
  NotebookRunner runner(kernel, options);
  const NotebookRunReport report = runner.run(nb);
  CHECK(report.all_ok());
  REQUIRE(nb.cells[1].outputs.size() == 1);
  const std::string text = stream_text(nb.cells[1].outputs[0]);
  CHECK(text.size() < 20'200);
  CHECK(text.find("... output truncated: 180000 bytes dropped (limit 20000 bytes per cell)") != std::string::npos);
}

TEST_CASE("cells use rustytorch and matplotlib figures become images", "[studio][runner]") {
  PythonKernel& kernel = fresh_test_kernel();
  Notebook nb = notebook_of({
      "import rustytorch as rt\nx = rt.ones(2, 3)\nx.sum()",
      "import matplotlib\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.title('t');",
  });
  RunOptions options;
  options.record_timing = true;
  NotebookRunner runner(kernel, options);
  const NotebookRunReport report = runner.run(nb);
  INFO((report.first_failure() ? report.first_failure()->error : std::string()));
  REQUIRE(report.all_ok());
  const auto value = mime_text(nb.cells[1].outputs.at(0), "text/plain");
  REQUIRE(value);
  CHECK(value->find("6.") != std::string::npos);
  bool has_png = false;
  for (const auto& out : nb.cells[2].outputs)
    if (auto png = mime_text(out, "image/png")) has_png = png->starts_with("iVBOR");
  CHECK(has_png);
  CHECK(nb.cells[1].metadata["execution"]["shell.execute_reply"].get<std::string>().ends_with("Z"));
}

TEST_CASE("run_cell refuses bad indices and non-code cells", "[studio][runner]") {
  PythonKernel& kernel = fresh_test_kernel();
  Notebook nb = notebook_of({"1"});
  NotebookRunner runner(kernel);
  CHECK_THROWS_AS(runner.run_cell(nb, 9), std::out_of_range);
  CHECK_THROWS_AS(runner.run_cell(nb, 0), std::invalid_argument);  // the markdown cell
  CHECK(runner.run_cell(nb, 1).status == ExecutionStatus::ok);
}
