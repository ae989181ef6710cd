// Running cells: results by IPython's rules, output capture (Python and C level), errors with tracebacks
// into the cell, rustytorch, matplotlib figures, display(). One kernel per process (kernel_recorder.h).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "kernel_recorder.h"
#include "rt/prof/session_registry.h"

using namespace rt::studio;
using namespace rt::studio::testing;

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

TEST_CASE("starting the kernel leaves the environment alone on the interpreter thread", "[studio][kernel]") {
  // Note [Environment races]: in the C locale CPython would coerce it with setenv("LC_CTYPE") from the
  // interpreter thread while the GUI thread reads the environment (a crash in getenv). It must run in
  // UTF-8 mode instead; MPLBACKEND is set before the interpreter thread starts.
  ::unsetenv("LC_ALL");
  ::unsetenv("LC_CTYPE");
  ::unsetenv("LANG");
  CellRecord r = run_cell("import os, sys\n(sys.flags.utf8_mode, os.environ.get('LC_CTYPE'), os.environ.get('MPLBACKEND'))");
  CHECK(r.result_text() == "(1, None, 'Agg')");
  CHECK(std::getenv("LC_CTYPE") == nullptr);
}

TEST_CASE("the last expression is the execute result and None or a trailing semicolon show nothing", "[studio][kernel]") {
  const int first = test_kernel().next_execution_count();  // 1 under ctest (a process per test case)
  CellRecord r = run_cell("x = 40\nx + 2");
  REQUIRE(r.summary);
  CHECK(r.summary->status == ExecutionStatus::ok);
  CHECK(r.result_text() == "42");
  CHECK(r.summary->execution_count == first);
  CHECK(r.started_count == first);
  CHECK(r.order == std::vector<std::string>{"started", "result", "finished"});

  CellRecord none = run_cell("None");
  CHECK_FALSE(none.result);
  CHECK(none.summary->execution_count == first + 1);

  CellRecord suppressed = run_cell("x * 2;  # a comment after the semicolon");
  CHECK_FALSE(suppressed.result);
  CellRecord statement = run_cell("y = x * 2");
  CHECK_FALSE(statement.result);
  CHECK(run_cell("_").result_text() == "42");  // `_` is the last result
  CHECK(run_cell("'text'").result_text() == "'text'");
  CHECK(test_kernel().next_execution_count() == first + 6);
}

TEST_CASE("rich representations go into the bundle next to text/plain", "[studio][kernel]") {
  CellRecord r = run_cell(
      "class Rich:\n"
      "    def _repr_html_(self): return '<b>rich</b>'\n"
      "    def _repr_png_(self): return b'\\x89PNG fake'\n"
      "    def __repr__(self): return 'Rich()'\n"
      "Rich()");
  REQUIRE(r.result);
  CHECK(r.result->data.at("text/plain") == "Rich()");
  CHECK(r.result->data.at("text/html") == "<b>rich</b>");
  CHECK(r.result->data.at("image/png") == "iVBORyBmYWtl");  // base64 of b'\x89PNG fake'

  CellRecord bundle = run_cell(
      "class Bundle:\n"
      "    def _repr_mimebundle_(self, include=None, exclude=None):\n"
      "        return {'text/markdown': '**md**', 'application/json': {'a': 1}}\n"
      "Bundle()");
  REQUIRE(bundle.result);
  CHECK(bundle.result->data.at("text/markdown") == "**md**");
  CHECK(bundle.result->data.at("application/json") == "{\"a\": 1}");
  CHECK(bundle.result->data.count("text/plain") == 1);

  CellRecord klass = run_cell("Bundle");  // a class is shown by repr, not by its unbound _repr_ methods
  REQUIRE(klass.result);
  CHECK(klass.result->data.size() == 1);
}

TEST_CASE("stdout and stderr arrive in the order written with C-level printf included", "[studio][kernel]") {
  CellRecord r = run_cell(
      "import sys, ctypes\n"
      "libc = ctypes.CDLL(None)\n"
      "print('one')\n"
      "print('two', file=sys.stderr)\n"
      "libc.printf(b'three from C\\n')\n"
      "print('four')\n"
      "libc.fprintf(ctypes.c_void_p.in_dll(libc, 'stderr'), b'five from C\\n')\n"
      "_ = sys.stdout.write('six\\n')\n");
  REQUIRE(r.summary);
  CHECK(r.summary->status == ExecutionStatus::ok);
  CHECK(r.stdout_text == "one\nthree from C\nfour\nsix\n");
  CHECK(r.stderr_text == "two\nfive from C\n");
  CHECK(r.order == std::vector<std::string>{"started", "stdout", "stderr", "stdout", "stderr", "stdout", "finished"});

  // A printf without newline is flushed when the cell ends, not lost or given to the next cell.
  CellRecord partial = run_cell("libc.printf(b'no newline')");
  CHECK(partial.stdout_text == "no newline");
  CellRecord next = run_cell("print('next')");
  CHECK(next.stdout_text == "next\n");
}

TEST_CASE("os.write to fd 1 and the output of a subprocess are captured", "[studio][kernel]") {
  CellRecord r = run_cell(
      "import os, subprocess\n"
      "os.write(1, b'raw fd\\n')\n"
      "subprocess.run(['/bin/echo', 'from a child'])\n");
  CHECK(r.stdout_text == "raw fd\nfrom a child\n");
}

TEST_CASE("output of a forked child process shows under the cell", "[studio][kernel]") {
  CellRecord r = run_cell(
      "import os\n"
      "pid = os.fork()\n"
      "if pid == 0:\n"
      "    print('from the child', flush=True)\n"
      "    os._exit(0)\n"
      "os.waitpid(pid, 0)\n"
      "print('parent done')\n");
  INFO(r.traceback_text());
  CHECK(r.stdout_text == "from the child\nparent done\n");
}

TEST_CASE("an error names the cell and shows the failing line", "[studio][kernel]") {
  const int first = test_kernel().next_execution_count();
  CellRecord r = run_cell("a = 1\n\ndef f(n):\n    return n / 0\n\nf(a)", "3");
  REQUIRE(r.summary);
  CHECK(r.summary->status == ExecutionStatus::error);
  CHECK(r.summary->execution_count == first);  // errors consume a count too
  REQUIRE(r.error);
  CHECK(r.error->ename == "ZeroDivisionError");
  CHECK(r.error->evalue == "division by zero");
  const std::string tb = r.traceback_text();
  INFO(tb);
  CHECK(tb.find("File \"<cell 3>\", line 6, in <module>") != std::string::npos);
  CHECK(tb.find("    f(a)") != std::string::npos);
  CHECK(tb.find("File \"<cell 3>\", line 4, in f") != std::string::npos);
  CHECK(tb.find("    return n / 0") != std::string::npos);
  CHECK(tb.find("cell_runner") == std::string::npos);  // no kernel frames
  CHECK(r.error->traceback.front() == "Traceback (most recent call last):");
  CHECK(r.error->traceback.back() == "ZeroDivisionError: division by zero");

  // Output before the error is kept, and the kernel carries on.
  CellRecord partial = run_cell("print('before')\nraise ValueError('bad value')");
  CHECK(partial.stdout_text == "before\n");
  CHECK(partial.order == std::vector<std::string>{"started", "stdout", "error", "finished"});
  CHECK(run_cell("a + 1").result_text() == "2");

  // Without a label the execution count names the cell.
  CellRecord unlabeled = run_cell("undefined_name");
  CHECK(unlabeled.error->ename == "NameError");
  const std::string named = "File \"<cell " + std::to_string(first + 3) + ">\", line 1";
  CHECK(unlabeled.traceback_text().find(named) != std::string::npos);
}

TEST_CASE("a SyntaxError points at the line of the cell", "[studio][kernel]") {
  CellRecord r = run_cell("never_assigned = 1\ny = (2 +\n", "syntax");
  REQUIRE(r.error);
  CHECK(r.summary->status == ExecutionStatus::error);
  CHECK(r.error->ename == "SyntaxError");
  const std::string tb = r.traceback_text();
  INFO(tb);
  CHECK(tb.find("File \"<cell syntax>\", line 2") != std::string::npos);
  CHECK(tb.find("y = (2 +") != std::string::npos);
  CHECK(tb.find("ast.py") == std::string::npos);  // only the cell's own lines
  CHECK(run_cell("never_assigned").error);  // nothing of the cell ran
  CHECK(run_cell("1 +* 2").error->ename == "SyntaxError");
  CHECK(run_cell("if True:\nprint(1)").error->ename == "IndentationError");
}

TEST_CASE("rustytorch imports and a tensor shows its repr", "[studio][kernel]") {
  CellRecord r = run_cell("import rustytorch as rt\nt = rt.ones(2, 3)\nt.sum()");
  INFO(r.traceback_text());
  REQUIRE(r.summary->status == ExecutionStatus::ok);
  CHECK(r.result_text() == "tensor(6.)");
  CellRecord error = run_cell("rt.ones(2, 3) @ rt.ones(2, 3)");
  REQUIRE(error.error);
  CHECK(error.error->ename == "RuntimeError");
  CHECK(error.error->evalue.find("[2, 3]") != std::string::npos);
}

TEST_CASE("a profile run in the kernel shows its ops on a thread named \"kernel\"", "[studio][kernel]") {
  // As the studio's panels do (register_visualizer_panels): the cell's profile object is gone when it ends.
  rt::prof::SessionRegistry::instance().keep_finished(rt::prof::SessionRegistry::kCapacity);
  CellRecord r = run_cell(
      "import rustytorch as rt\n"
      "import rustytorch.profiler as profiler\n"
      "with profiler.profile(name='kernel thread test'):\n"
      "    (rt.ones(4, 4) @ rt.ones(4, 4)).sum()\n");
  INFO(r.traceback_text());
  REQUIRE(r.summary->status == ExecutionStatus::ok);
  // The session the cell recorded, from the registry of this process's sessions (what the studio's panels read).
  std::shared_ptr<const rt::prof::SessionData> session;
  for (const rt::prof::RegisteredSession& s : rt::prof::SessionRegistry::instance().list())
    if (s.name == "kernel thread test") session = rt::prof::SessionRegistry::instance().snapshot(s.id);
  REQUIRE(session);
  std::vector<std::string> names;
  uint64_t kernel_thread = 0;
  for (const rt::prof::ThreadRecord& t : session->threads) {
    names.push_back(session->strings.at(t.name));
    if (names.back() == "kernel") kernel_thread = t.thread;
  }
  INFO("threads: " << join(names));
  REQUIRE(kernel_thread != 0);
  // Every op of the cell ran on it: the matmul and the sum are on the "kernel" track.
  std::vector<std::string> ops_on_kernel;
  for (const rt::prof::OpRecord& op : session->ops)
    if (op.thread == kernel_thread) ops_on_kernel.push_back(session->strings.at(op.name));
  INFO("ops on the kernel thread: " << join(ops_on_kernel));
  CHECK(ops_on_kernel.size() == session->ops.size());
  CHECK(std::count(ops_on_kernel.begin(), ops_on_kernel.end(), "sum") == 1);
}

TEST_CASE("display() emits display data in order with prints", "[studio][kernel]") {
  CellRecord r = run_cell("print('a')\ndisplay(1, 'two')\nprint('b')");
  REQUIRE(r.displays.size() == 2);
  CHECK(r.displays[0].data.at("text/plain") == "1");
  CHECK(r.displays[1].data.at("text/plain") == "'two'");
  CHECK(r.order == std::vector<std::string>{"started", "stdout", "display", "display", "stdout", "finished"});
}

TEST_CASE("matplotlib figures become image/png display data and are closed", "[studio][kernel]") {
  CellRecord r = run_cell(
      "import matplotlib.pyplot as plt\n"
      "fig, ax = plt.subplots(figsize=(4, 3))\n"
      "ax.plot([1, 3, 2])\n"
      "'drawn'");
  INFO(r.traceback_text());
  REQUIRE(r.summary->status == ExecutionStatus::ok);
  REQUIRE(r.displays.size() == 1);
  const std::string& png = r.displays[0].data.at("image/png");
  CHECK(png.rfind("iVBORw0KGgo", 0) == 0);  // base64 of the PNG signature
  CHECK(png.find('\n') == std::string::npos);
  CHECK(r.displays[0].data.at("text/plain").find("Figure size") != std::string::npos);
  CHECK(r.displays[0].metadata_json.find("\"width\"") != std::string::npos);
  CHECK(r.order == std::vector<std::string>{"started", "result", "display", "finished"});
  CHECK(run_cell("len(plt.get_fignums())").result_text() == "0");

  // plt.show() shows at once, does not block, and the figure is not shown twice.
  CellRecord shown = run_cell("plt.plot([1, 2])\nplt.show()\nprint('after show')");
  CHECK(shown.displays.size() == 1);
  CHECK(shown.order == std::vector<std::string>{"started", "display", "stdout", "finished"});
  CHECK(run_cell("import matplotlib\nmatplotlib.get_backend()").result_text() == "'module://_rtstudio_inline'");
}

TEST_CASE("input() says the kernel has no standard input", "[studio][kernel]") {
  CellRecord r = run_cell("input('name? ')");
  REQUIRE(r.error);
  CHECK(r.error->ename == "RuntimeError");
  CHECK(r.error->evalue.find("no standard input") != std::string::npos);
}

TEST_CASE("%matplotlib inline is accepted and __name__ is __main__", "[studio][kernel]") {
  CellRecord r = run_cell("%matplotlib inline\n__name__");
  INFO(r.traceback_text());
  CHECK(r.result_text() == "'__main__'");
}

TEST_CASE("a second kernel in the process is a clear error", "[studio][kernel]") {
  test_kernel();
  try {
    PythonKernel second;
    FAIL("a second PythonKernel was created");
  } catch (const std::logic_error& e) {
    CHECK(std::string(e.what()).find("restart()") != std::string::npos);
  }
}

TEST_CASE("kernel states go starting -> idle -> busy -> idle", "[studio][kernel]") {
  PythonKernel& k = test_kernel();
  REQUIRE(k.wait_until_idle(std::chrono::seconds(60)));
  CHECK(k.state() == KernelState::idle);
  run_cell("1");
  CHECK(k.wait_until_idle(std::chrono::seconds(10)));
  auto states = test_recorder().states();
  for (int i = 0; i < 200 && (states.empty() || states.back() != KernelState::idle); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // on_state(idle) follows on_finished
    states = test_recorder().states();
  }
  REQUIRE(states.size() >= 2);
  CHECK(states[states.size() - 2] == KernelState::busy);
  CHECK(states.back() == KernelState::idle);
  CHECK(std::string(to_string(KernelState::paused)) == "paused");
}
