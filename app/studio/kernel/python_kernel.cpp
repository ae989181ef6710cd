// PythonKernel: the request queue and the interpreter thread's loop. See the Notes in python_kernel.h.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "python_kernel.h"

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <deque>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "event_hub.h"
#include "namespace_inspector.h"
#include "output_capture.h"
#include "python_runtime.h"
#include "rt/prof/session.h"

namespace rt::studio {

namespace {

std::atomic<bool> g_kernel_created{false};

struct WorkItem {
  enum class Kind { cell, restart, change_directory };
  Kind kind = Kind::cell;
  RequestId id = 0;
  std::string code;
  std::string label;  // cells; the directory for change_directory
  bool aborted = false;
};

using Clock = std::chrono::steady_clock;

}  // namespace

struct PythonKernel::Impl {
  KernelOptions options;
  EventHub hub;

  mutable std::mutex mu;
  std::condition_variable work_cv;          // the interpreter thread waits for work
  mutable std::condition_variable idle_cv;  // wait_until_idle and the destructor wait here
  std::deque<WorkItem> queue;
  RequestId next_id = 1;
  bool stopping = false;
  bool in_progress = false;    // an item was popped and is not finished
  bool abort_current = false;  // interrupt() came between popping a cell and running it
  RequestId running = 0;       // the cell that may receive SIGINT (Note [Kernel interrupt])
  int running_count = 0;
  int next_count = 1;
  bool thread_done = false;
  std::string startup_error;
  KernelState state = KernelState::starting;  // written by the interpreter thread under mu

  std::atomic<RequestId> output_request{0};  // who gets stream/display output (Note [Kernel output order])
  std::string pending_notice;                // interpreter thread only: shown on the next cell's stderr
  pthread_t interpreter_handle{};
  std::unique_ptr<NamespaceInspector> inspector;
  std::thread interpreter;

  // Note [Interrupt retry] (python_runtime.cpp): re-sends a SIGINT that Python has not acted on.
  std::condition_variable watch_cv;
  std::thread interrupt_watch;
  bool watch_stop = false;
  RequestId interrupt_target = 0;
  int interrupt_retries = 0;
  Clock::time_point interrupt_sent_at{};

  void send_interrupt_locked() {
    pthread_kill(interpreter_handle, SIGINT);
    interrupt_target = running;
    interrupt_retries = 0;
    interrupt_sent_at = Clock::now();
    watch_cv.notify_all();
  }

  void watch_interrupts() {
    std::unique_lock<std::mutex> lock(mu);
    while (!watch_stop) {
      if (!interrupt_target) {
        watch_cv.wait(lock, [&] { return watch_stop || interrupt_target != 0; });
        continue;
      }
      const auto due = interrupt_sent_at + std::chrono::milliseconds(250);
      if (Clock::now() < due) {
        watch_cv.wait_until(lock, due);
        continue;  // re-evaluate: a new interrupt() may have moved the deadline
      }
      const InterruptCounts counts = sigint_counts();
      if (running != interrupt_target || counts.delivered <= counts.handled || interrupt_retries >= 8) {
        interrupt_target = 0;  // finished, or Python (or an engine op) took it, or a cell swallows SIGINT
      } else {
        pthread_kill(interpreter_handle, SIGINT);
        ++interrupt_retries;
        interrupt_sent_at = Clock::now();
      }
    }
  }

  // Interpreter thread only.
  std::unique_ptr<OutputCapture> capture;
  std::unique_ptr<PythonRuntime> runtime;

  void set_state(KernelState s) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (state == s) return;
      state = s;
    }
    idle_cv.notify_all();
    hub.deliver([s](KernelListener& l) { l.on_state(s); });
  }

  void flush_output() {
    if (capture) capture->flush();
  }

  void deliver_stream(Stream stream, std::string_view text) {
    const RequestId id = output_request.load();
    if (id == 0) return;  // before any cell: echoed only
    const std::string copy(text);
    hub.deliver([&](KernelListener& l) { l.on_stream(id, stream, copy); });
  }

  void deliver_display(const DisplayData& data) {
    flush_output();
    const RequestId id = output_request.load();
    if (id == 0) return;
    hub.deliver([&](KernelListener& l) { l.on_display(id, data); });
  }

  bool is_stopping() {
    std::lock_guard<std::mutex> lock(mu);
    return stopping;
  }
  void interpreter_main();
  bool start_python();
  void run_loop();
  void run_cell(const WorkItem& item, int count);
  void finish_unrun(const WorkItem& item, ExecutionStatus status, const std::string& why);
  void shut_down_python();
};

// ---- interpreter thread -----------------------------------------------------------------------------------
void PythonKernel::Impl::interpreter_main() {
  sigset_t unblock;
  sigemptyset(&unblock);
  sigaddset(&unblock, SIGINT);
  pthread_sigmask(SIG_UNBLOCK, &unblock, nullptr);
  prof::set_thread_name("kernel");  // the timeline's name for the thread every cell runs on
  const bool started = start_python();
  run_loop();
  if (started) shut_down_python();
  capture.reset();  // fd 1/2 back to what they were
  std::lock_guard<std::mutex> lock(mu);
  thread_done = true;
  idle_cv.notify_all();
}

bool PythonKernel::Impl::start_python() {
  try {
    capture = std::make_unique<OutputCapture>(
        OutputCapture::Options{options.capture_fd_output, options.echo_output},
        [this](Stream s, std::string_view text) { deliver_stream(s, text); });
    PythonRuntime::Hooks hooks;
    hooks.write = [this](Stream s, std::string_view text) { capture->write_in_order(s, text); };
    hooks.display = [this](const DisplayData& d) { deliver_display(d); };
    runtime = std::make_unique<PythonRuntime>(options, std::move(hooks));
  } catch (const std::exception& e) {
    if (Py_IsInitialized() && PyGILState_Check()) PyEval_SaveThread();
    {
      std::lock_guard<std::mutex> lock(mu);
      startup_error = e.what();
    }
    inspector->python_failed(e.what());
    set_state(KernelState::failed);
    return false;
  }
  if (!options.working_directory.empty())
    if (auto problem = runtime->change_directory(options.working_directory.string())) pending_notice += *problem;
  PyEval_SaveThread();  // the GIL is free whenever no cell runs
  inspector->python_ready();
  std::lock_guard<std::mutex> lock(mu);
  if (queue.empty()) {
    state = KernelState::idle;
  } else {
    state = KernelState::busy;
  }
  const KernelState s = state;
  idle_cv.notify_all();
  hub.deliver([s](KernelListener& l) { l.on_state(s); });
  return true;
}

void PythonKernel::Impl::run_loop() {
  for (;;) {
    WorkItem item;
    {
      std::unique_lock<std::mutex> lock(mu);
      work_cv.wait(lock, [&] { return stopping || !queue.empty(); });
      if (queue.empty()) return;  // stopping, nothing left
      item = std::move(queue.front());
      queue.pop_front();
      if (stopping && item.kind == WorkItem::Kind::cell) item.aborted = true;
      in_progress = true;
      abort_current = false;
    }
    const bool failed = !runtime;
    if (item.kind == WorkItem::Kind::cell) {
      if (item.aborted) {
        finish_unrun(item, ExecutionStatus::aborted, {});
      } else if (failed) {
        finish_unrun(item, ExecutionStatus::error, startup_error);
      } else {
        set_state(KernelState::busy);
        PyGILState_STATE gil = PyGILState_Ensure();
        runtime->discard_pending_interrupt();  // a SIGINT meant for an earlier cell
        int count = 0;
        {
          std::lock_guard<std::mutex> lock(mu);
          if (!abort_current && !stopping) {
            running = item.id;
            count = running_count = next_count++;
          }
        }
        if (count == 0) {
          PyGILState_Release(gil);
          finish_unrun(item, ExecutionStatus::aborted, {});
        } else {
          run_cell(item, count);
          PyGILState_Release(gil);
        }
      }
    } else if (!failed && !is_stopping()) {
      const PyGILState_STATE gil = PyGILState_Ensure();
      if (item.kind == WorkItem::Kind::restart) {
        set_state(KernelState::starting);
        runtime->reset();
        runtime->discard_pending_interrupt();
        std::lock_guard<std::mutex> lock(mu);
        next_count = 1;
        running_count = 0;
      } else if (auto problem = runtime->change_directory(item.label)) {
        pending_notice += *problem;
      }
      PyGILState_Release(gil);
    }
    KernelState next = KernelState::idle;
    {
      std::lock_guard<std::mutex> lock(mu);
      in_progress = false;
      next = failed ? KernelState::failed : queue.empty() ? KernelState::idle : KernelState::busy;
    }
    set_state(next);
    idle_cv.notify_all();
  }
}

void PythonKernel::Impl::run_cell(const WorkItem& item, int count) {
  const RequestId id = item.id;
  flush_output();  // output of earlier background writes stays with the earlier request
  hub.deliver([&](KernelListener& l) { l.on_started(id, count); });
  output_request.store(id);
  if (!pending_notice.empty()) {
    capture->write_in_order(Stream::err, pending_notice);
    pending_notice.clear();
  }
  const std::string filename = "<cell " + (item.label.empty() ? std::to_string(count) : item.label) + ">";
  const auto t0 = Clock::now();
  CellOutcome outcome = runtime->run_cell(item.code, filename);
  if (outcome.result) {
    flush_output();
    hub.deliver([&](KernelListener& l) { l.on_result(id, count, *outcome.result); });
  }
  std::optional<ExecutionError> figures = runtime->after_cell();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  {
    std::lock_guard<std::mutex> lock(mu);
    running = 0;
  }
  runtime->discard_pending_interrupt();  // an interrupt that arrived as the cell ended
  const std::optional<ExecutionError>& error = outcome.error ? outcome.error : figures;
  flush_output();
  if (error) hub.deliver([&](KernelListener& l) { l.on_error(id, *error); });
  const ExecutionSummary summary{id, error ? ExecutionStatus::error : ExecutionStatus::ok, count, seconds};
  hub.deliver([&](KernelListener& l) { l.on_finished(summary); });
}

void PythonKernel::Impl::finish_unrun(const WorkItem& item, ExecutionStatus status, const std::string& why) {
  if (status == ExecutionStatus::error) {
    const ExecutionError error{"KernelStartupError", why, {"KernelStartupError: " + why}};
    hub.deliver([&](KernelListener& l) { l.on_error(item.id, error); });
  }
  const ExecutionSummary summary{item.id, status, 0, 0.0};
  hub.deliver([&](KernelListener& l) { l.on_finished(summary); });
}

void PythonKernel::Impl::shut_down_python() {
  PyGILState_STATE gil = PyGILState_Ensure();
  runtime->discard_pending_interrupt();
  runtime->shutdown();
  runtime.reset();
  flush_output();
  PyGILState_Release(gil);  // the interpreter stays initialised (Note [Kernel restart]), the GIL free
}

// ---- public API --------------------------------------------------------------------------------------------
PythonKernel::PythonKernel(KernelOptions options) {
  if (g_kernel_created.exchange(true))
    throw std::logic_error(
        "rt::studio::PythonKernel: a kernel was already created in this process; CPython can only be "
        "initialised once per process, so keep one kernel and call restart() for a fresh namespace");
  PythonRuntime::prepare_process();  // before any kernel thread exists (Note [Environment races])
  impl_ = std::make_unique<Impl>();
  impl_->options = std::move(options);
  Impl* impl = impl_.get();
  impl->inspector = std::make_unique<NamespaceInspector>([impl] {
    std::lock_guard<std::mutex> lock(impl->mu);
    return CellProgress{impl->running_count, impl->running != 0};
  });
  impl->interpreter = std::thread([impl] { impl->interpreter_main(); });
  impl->interpreter_handle = impl->interpreter.native_handle();
  sigset_t block, previous;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  pthread_sigmask(SIG_BLOCK, &block, &previous);
  impl->interrupt_watch = std::thread([impl] { impl->watch_interrupts(); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

PythonKernel::~PythonKernel() {
  Impl& k = *impl_;
  {
    std::lock_guard<std::mutex> lock(k.mu);
    k.watch_stop = true;
  }
  k.watch_cv.notify_all();
  k.interrupt_watch.join();
  std::unique_lock<std::mutex> lock(k.mu);
  k.stopping = true;
  for (auto& item : k.queue)
    if (item.kind == WorkItem::Kind::cell) item.aborted = true;
  k.work_cv.notify_all();
  while (!k.thread_done) {
    if (k.running) pthread_kill(k.interpreter_handle, SIGINT);
    k.idle_cv.wait_for(lock, std::chrono::seconds(1));
  }
  lock.unlock();
  k.interpreter.join();
  k.inspector.reset();  // answers what still waits
}

void PythonKernel::add_listener(KernelListener* l) { impl_->hub.add(l); }
void PythonKernel::remove_listener(KernelListener* l) { impl_->hub.remove(l); }

RequestId PythonKernel::execute(std::string code, std::string cell_label) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  const RequestId id = impl_->next_id++;
  impl_->queue.push_back({WorkItem::Kind::cell, id, std::move(code), std::move(cell_label), impl_->stopping});
  impl_->work_cv.notify_all();
  return id;
}

void PythonKernel::interrupt() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (auto& item : impl_->queue)
    if (item.kind == WorkItem::Kind::cell) item.aborted = true;
  if (impl_->running)
    impl_->send_interrupt_locked();
  else if (impl_->in_progress)
    impl_->abort_current = true;
}

void PythonKernel::restart() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (auto& item : impl_->queue)
    if (item.kind == WorkItem::Kind::cell) item.aborted = true;
  if (impl_->running)
    impl_->send_interrupt_locked();
  else if (impl_->in_progress)
    impl_->abort_current = true;
  impl_->queue.push_back({WorkItem::Kind::restart, 0, {}, {}, false});
  impl_->work_cv.notify_all();
}

void PythonKernel::set_working_directory(std::filesystem::path dir) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->queue.push_back({WorkItem::Kind::change_directory, 0, {}, dir.string(), false});
  impl_->work_cv.notify_all();
}

KernelState PythonKernel::state() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->state;
}

std::string PythonKernel::startup_error() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->startup_error;
}

int PythonKernel::next_execution_count() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->next_count;
}

std::size_t PythonKernel::queued_count() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::size_t n = 0;
  for (const auto& item : impl_->queue) n += item.kind == WorkItem::Kind::cell && !item.aborted;
  return n;
}

bool PythonKernel::wait_until_idle(std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(impl_->mu);
  return impl_->idle_cv.wait_for(lock, timeout, [&] {
    const Impl& k = *impl_;
    return k.state == KernelState::failed ||
           (k.state == KernelState::idle && k.queue.empty() && !k.in_progress);
  });
}

void PythonKernel::request_variables(std::function<void(VariablesSnapshot)> done) {
  impl_->inspector->request_variables(std::move(done));
}

void PythonKernel::request_tensor_stats(std::string name, std::function<void(TensorStats)> done) {
  impl_->inspector->request_tensor_stats(std::move(name), std::move(done));
}

}  // namespace rt::studio
