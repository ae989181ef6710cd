#include "python_values.h"  // first: Python.h before the standard headers

#include "namespace_inspector.h"

#include <pthread.h>

#include <csignal>

namespace rt::studio {

namespace {

using pyvalue::Ref;

VariableKind kind_of(const std::string& name) {
  if (name == "tensor") return VariableKind::tensor;
  if (name == "module") return VariableKind::module;
  if (name == "array") return VariableKind::array;
  if (name == "scalar") return VariableKind::scalar;
  if (name == "text") return VariableKind::text;
  if (name == "collection") return VariableKind::collection;
  return VariableKind::other;
}

int64_t as_int(PyObject* o) {
  const long long v = PyLong_AsLongLong(o);
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return -1;
  }
  return v;
}

double as_double(PyObject* o) {
  const double v = PyFloat_AsDouble(o);
  if (PyErr_Occurred()) PyErr_Clear();
  return v;
}

std::string error_text(const char* context) {
  const ExecutionError e = pyvalue::take_exception(context);
  return e.evalue.empty() ? e.ename : e.evalue;
}

// Needs the GIL.
PyObject* inspector_module() {
  Ref name(PyUnicode_FromString("_rtstudio_inspector"));
  return PyImport_GetModule(name.get());  // new reference or nullptr
}

VariableInfo row_to_info(PyObject* row) {
  VariableInfo v;
  if (!PyTuple_Check(row) || PyTuple_GET_SIZE(row) != 10) return v;
  v.name = pyvalue::str(PyTuple_GET_ITEM(row, 0));
  v.kind = kind_of(pyvalue::str(PyTuple_GET_ITEM(row, 1)));
  v.type_name = pyvalue::str(PyTuple_GET_ITEM(row, 2));
  PyObject* shape = PyTuple_GET_ITEM(row, 3);
  if (PyList_Check(shape))
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(shape); ++i) v.shape.push_back(as_int(PyList_GET_ITEM(shape, i)));
  v.dtype = pyvalue::str(PyTuple_GET_ITEM(row, 4));
  v.device = pyvalue::str(PyTuple_GET_ITEM(row, 5));
  v.bytes = as_int(PyTuple_GET_ITEM(row, 6));
  v.requires_grad = PyObject_IsTrue(PyTuple_GET_ITEM(row, 7)) == 1;
  v.parameter_count = as_int(PyTuple_GET_ITEM(row, 8));
  v.value = pyvalue::str(PyTuple_GET_ITEM(row, 9));
  return v;
}

}  // namespace

NamespaceInspector::NamespaceInspector(std::function<CellProgress()> progress) : progress_(std::move(progress)) {
  sigset_t block, previous;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  pthread_sigmask(SIG_BLOCK, &block, &previous);  // SIGINT is for the interpreter thread only
  thread_ = std::thread([this] { loop(); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

NamespaceInspector::~NamespaceInspector() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void NamespaceInspector::python_ready() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ready_ = true;
  }
  cv_.notify_all();
}

void NamespaceInspector::python_failed(std::string why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    failure_ = std::move(why);
  }
  cv_.notify_all();
}

void NamespaceInspector::request_variables(std::function<void(VariablesSnapshot)> done) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.push_back({{}, std::move(done), {}});
  }
  cv_.notify_all();
}

void NamespaceInspector::request_tensor_stats(std::string name, std::function<void(TensorStats)> done) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.push_back({std::move(name), {}, std::move(done)});
  }
  cv_.notify_all();
}

void NamespaceInspector::loop() {
  for (;;) {
    Request r;
    std::string failure;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || (!pending_.empty() && (ready_ || !failure_.empty())); });
      if (stopping_) {
        std::deque<Request> left = std::move(pending_);
        lock.unlock();
        for (auto& waiting : left) refuse(waiting, "the kernel stopped");
        return;
      }
      r = std::move(pending_.front());
      pending_.pop_front();
      failure = failure_;
    }
    if (!failure.empty())
      refuse(r, "the kernel did not start: " + failure);
    else
      answer(r);
  }
}

void NamespaceInspector::refuse(Request& r, const std::string& why) {
  if (r.variables_done) {
    VariablesSnapshot s;
    s.error = why;
    r.variables_done(std::move(s));
  } else if (r.stats_done) {
    TensorStats s;
    s.name = r.stats_of;
    s.error = why;
    r.stats_done(std::move(s));
  }
}

void NamespaceInspector::answer(Request& r) {
  const CellProgress progress = progress_ ? progress_() : CellProgress{};
  if (r.variables_done) {
    VariablesSnapshot s;
    s.execution_count = progress.execution_count;
    s.cell_running = progress.running;
    const PyGILState_STATE gil = PyGILState_Ensure();
    {
      Ref module(inspector_module());
      Ref rows(module ? PyObject_CallMethod(module.get(), "snapshot", nullptr) : nullptr);
      if (rows && PyList_Check(rows.get())) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(rows.get()); ++i)
          s.variables.push_back(row_to_info(PyList_GET_ITEM(rows.get(), i)));
      } else {
        s.error = PyErr_Occurred() ? error_text("listed the variables") : "the namespace inspector is not loaded";
      }
    }
    PyGILState_Release(gil);
    r.variables_done(std::move(s));
    return;
  }
  TensorStats s;
  s.name = r.stats_of;
  const PyGILState_STATE gil = PyGILState_Ensure();
  {
    Ref module(inspector_module());
    Ref stats(module ? PyObject_CallMethod(module.get(), "tensor_stats", "s", r.stats_of.c_str()) : nullptr);
    if (stats && PyTuple_Check(stats.get()) && PyTuple_GET_SIZE(stats.get()) == 6) {
      s.numel = as_int(PyTuple_GET_ITEM(stats.get(), 0));
      s.min = as_double(PyTuple_GET_ITEM(stats.get(), 1));
      s.max = as_double(PyTuple_GET_ITEM(stats.get(), 2));
      s.mean = as_double(PyTuple_GET_ITEM(stats.get(), 3));
      s.nan_count = as_int(PyTuple_GET_ITEM(stats.get(), 4));
      s.inf_count = as_int(PyTuple_GET_ITEM(stats.get(), 5));
    } else {
      s.error = PyErr_Occurred() ? error_text("computed tensor statistics") : "the namespace inspector is not loaded";
    }
  }
  PyGILState_Release(gil);
  if (r.stats_done) r.stats_done(std::move(s));
}

}  // namespace rt::studio
