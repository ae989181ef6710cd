// tests/studio/kernel/kernel_recorder.h — records a PythonKernel's events per request so tests can run a
// cell and look at everything it produced.
//
//   PythonKernel& k = test_kernel();           // the process's one kernel (see Note below)
//   CellRecord r = run_cell("print(1); 2");    // waits for on_finished (30 s at most)
//   CHECK(r.stdout_text == "1\n");  CHECK(r.result_text() == "2");
//
// Note [One kernel per test process]: CPython initialises once per process, so every test binary uses
// the kernel test_kernel() creates on first use; catch_discover_tests runs each TEST_CASE in its own
// process, so test cases do not see each other's namespaces.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "python_kernel.h"

namespace rt::studio::testing {

struct CellRecord {
  RequestId id = 0;
  bool started = false;
  int started_count = 0;
  std::vector<std::string> order;  // "started", "stdout", "stderr", "display", "result", "error", "finished"
  std::string stdout_text, stderr_text;
  std::vector<std::pair<Stream, std::string>> chunks;
  std::vector<DisplayData> displays;
  std::optional<DisplayData> result;
  std::optional<ExecutionError> error;
  std::optional<ExecutionSummary> summary;

  std::string result_text() const { return result ? result->data.at("text/plain") : std::string(); }
  std::string traceback_text() const;
};

class KernelRecorder : public KernelListener {
 public:
  void on_started(RequestId id, int count) override;
  void on_stream(RequestId id, Stream s, const std::string& text) override;
  void on_display(RequestId id, const DisplayData& d) override;
  void on_result(RequestId id, int count, const DisplayData& d) override;
  void on_error(RequestId id, const ExecutionError& e) override;
  void on_finished(const ExecutionSummary& s) override;
  void on_state(KernelState s) override;

  // Blocks until `id` finished (or the timeout passed: then the record has no summary).
  CellRecord wait_finished(RequestId id, std::chrono::milliseconds timeout = std::chrono::seconds(60));
  // Blocks until `id` started; false on timeout.
  bool wait_started(RequestId id, std::chrono::milliseconds timeout = std::chrono::seconds(60));
  // Blocks until `id` wrote `text` to stdout; false on timeout.
  bool wait_stdout(RequestId id, const std::string& text, std::chrono::milliseconds timeout = std::chrono::seconds(60));
  CellRecord snapshot(RequestId id);
  std::vector<KernelState> states();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<RequestId, CellRecord> records_;
  std::vector<KernelState> states_;
};

PythonKernel& test_kernel();     // created with the build's python dir, echo on (the test runner writes to fd 1 too); recorder attached
KernelRecorder& test_recorder();
void shut_down_test_kernel();  // main() calls it after the tests: the destructor runs in every binary
CellRecord run_cell(const std::string& code, const std::string& label = {});
double seconds_since(std::chrono::steady_clock::time_point t0);

}  // namespace rt::studio::testing
