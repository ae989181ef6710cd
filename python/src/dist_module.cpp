// rustytorch._C._dist: the distributed engine (rt_dist) for rustytorch.distributed. Its exceptions are
// PyTorch's: DistError derives from RuntimeError, and DistBackendError, DistNetworkError and
// DistStoreError from DistError; a store timeout is also a TimeoutError, as in torch 2.x where
// DistStoreError and DistNetworkError name what timed out.
#include "bind.h"
#include "rt/dist/errors.h"

namespace rtpy {

namespace {
PyObject* g_dist_error = nullptr;
PyObject* g_dist_backend_error = nullptr;
PyObject* g_dist_network_error = nullptr;
PyObject* g_dist_store_error = nullptr;

PyObject* new_exception(py::module_& m, const char* name, py::tuple bases) {
  PyObject* type = PyErr_NewException((std::string("rustytorch.distributed.") + name).c_str(), bases.ptr(), nullptr);
  if (!type) throw py::error_already_set();
  m.attr(name) = py::handle(type);
  return type;
}
}  // namespace

void bind_dist(py::module_& m) {
  py::module_ dist = m.def_submodule("_dist", "distributed engine bindings (use rustytorch.distributed)");
  g_dist_error = new_exception(dist, "DistError", py::make_tuple(py::handle(PyExc_RuntimeError)));
  g_dist_backend_error = new_exception(dist, "DistBackendError", py::make_tuple(py::handle(g_dist_error)));
  g_dist_network_error = new_exception(dist, "DistNetworkError", py::make_tuple(py::handle(g_dist_error)));
  g_dist_store_error = new_exception(dist, "DistStoreError", py::make_tuple(py::handle(g_dist_error)));
  // Registered after bind_errors' translator, so it is tried first.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const rt::dist::DistStoreError& e) {
      PyErr_SetString(g_dist_store_error, e.what());
    } catch (const rt::dist::DistNetworkError& e) {
      PyErr_SetString(g_dist_network_error, e.what());
    } catch (const rt::dist::DistBackendError& e) {
      PyErr_SetString(g_dist_backend_error, e.what());
    } catch (const rt::dist::DistError& e) {
      PyErr_SetString(g_dist_error, e.what());
    }
  });
  bind_dist_store(dist);
  bind_process_groups(dist);
}

}  // namespace rtpy
