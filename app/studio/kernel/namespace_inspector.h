// app/studio/kernel/namespace_inspector.h — the kernel's inspector thread: answers variables snapshots
// and tensor statistics by taking the GIL briefly (python/namespace_inspector.py does the reading), so
// answers come while a cell runs. Internal to rt_kernel; see Note [Kernel threads] in python_kernel.h.
//
//   NamespaceInspector inspector([&] { return CellProgress{count, running}; });
//   inspector.python_ready();                   // from the interpreter thread, once CPython runs
//   inspector.request_variables([](VariablesSnapshot s) { ... });   // called on the inspector thread
//
// Contracts: requests made before python_ready()/python_failed() wait; after python_failed() (or when the
// inspector stops) they are answered with `error` set. Every request is answered exactly once.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "python_kernel.h"

namespace rt::studio {

struct CellProgress {
  int execution_count = 0;
  bool running = false;
};

class NamespaceInspector {
 public:
  explicit NamespaceInspector(std::function<CellProgress()> progress);
  ~NamespaceInspector();  // answers what is pending with an error, joins the thread
  NamespaceInspector(const NamespaceInspector&) = delete;
  NamespaceInspector& operator=(const NamespaceInspector&) = delete;

  void python_ready();
  void python_failed(std::string why);
  void request_variables(std::function<void(VariablesSnapshot)> done);
  void request_tensor_stats(std::string name, std::function<void(TensorStats)> done);

 private:
  struct Request {
    std::string stats_of;  // the variable, for a tensor-stats request (variables_done is empty then)
    std::function<void(VariablesSnapshot)> variables_done;
    std::function<void(TensorStats)> stats_done;
  };
  void loop();
  void answer(Request& r);
  void refuse(Request& r, const std::string& why);

  std::function<CellProgress()> progress_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Request> pending_;
  bool ready_ = false, stopping_ = false;
  std::string failure_;
  std::thread thread_;
};

}  // namespace rt::studio
