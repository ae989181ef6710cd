#include "kernel_recorder.h"

#include <memory>

namespace rt::studio::testing {

std::string CellRecord::traceback_text() const {
  std::string out;
  if (error)
    for (const auto& line : error->traceback) out += line + "\n";
  return out;
}

void KernelRecorder::on_started(RequestId id, int count) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& r = records_[id];
  r.id = id;
  r.started = true;
  r.started_count = count;
  r.order.push_back("started");
  cv_.notify_all();
}

void KernelRecorder::on_stream(RequestId id, Stream s, const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& r = records_[id];
  (s == Stream::out ? r.stdout_text : r.stderr_text) += text;
  r.chunks.emplace_back(s, text);
  if (r.order.empty() || r.order.back() != nbformat_name(s)) r.order.push_back(nbformat_name(s));
  cv_.notify_all();
}

void KernelRecorder::on_display(RequestId id, const DisplayData& d) {
  std::lock_guard<std::mutex> lock(mu_);
  records_[id].displays.push_back(d);
  records_[id].order.push_back("display");
}

void KernelRecorder::on_result(RequestId id, int, const DisplayData& d) {
  std::lock_guard<std::mutex> lock(mu_);
  records_[id].result = d;
  records_[id].order.push_back("result");
}

void KernelRecorder::on_error(RequestId id, const ExecutionError& e) {
  std::lock_guard<std::mutex> lock(mu_);
  records_[id].error = e;
  records_[id].order.push_back("error");
}

void KernelRecorder::on_finished(const ExecutionSummary& s) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& r = records_[s.id];
  r.id = s.id;
  r.summary = s;
  r.order.push_back("finished");
  cv_.notify_all();
}

void KernelRecorder::on_state(KernelState s) {
  std::lock_guard<std::mutex> lock(mu_);
  states_.push_back(s);
}

CellRecord KernelRecorder::wait_finished(RequestId id, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return records_.count(id) && records_[id].summary.has_value(); });
  CellRecord r = records_[id];
  r.id = id;
  return r;
}

bool KernelRecorder::wait_started(RequestId id, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return records_.count(id) && records_[id].started; });
}

bool KernelRecorder::wait_stdout(RequestId id, const std::string& text, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] {
    return records_.count(id) && records_[id].stdout_text.find(text) != std::string::npos;
  });
}

CellRecord KernelRecorder::snapshot(RequestId id) {
  std::lock_guard<std::mutex> lock(mu_);
  return records_[id];
}

std::vector<KernelState> KernelRecorder::states() {
  std::lock_guard<std::mutex> lock(mu_);
  return states_;
}

KernelRecorder& test_recorder() {
  static KernelRecorder recorder;
  return recorder;
}

namespace {
std::unique_ptr<PythonKernel>& kernel_slot() {
  static std::unique_ptr<PythonKernel> kernel;
  return kernel;
}
}  // namespace

PythonKernel& test_kernel() {
  auto& kernel = kernel_slot();
  if (!kernel) {
    KernelOptions options;
    options.python_paths = {RT_TEST_PYTHON_DIR};
    options.echo_output = true;  // the test runner's own output goes through fd 1/2 too
    kernel = std::make_unique<PythonKernel>(options);
    kernel->add_listener(&test_recorder());
  }
  return *kernel;
}

void shut_down_test_kernel() { kernel_slot().reset(); }

CellRecord run_cell(const std::string& code, const std::string& label) {
  const RequestId id = test_kernel().execute(code, label);
  return test_recorder().wait_finished(id);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace rt::studio::testing
