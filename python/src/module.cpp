// The rustytorch._C extension: engine bindings. The pure-Python package (rustytorch/) builds
// PyTorch's API surface on top of these names.
#include "bind.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "RustyTorch++ engine bindings (use the rustytorch package, not _C directly)";
  rtpy::bind_errors(m);
  rtpy::bind_dtypes(m);
  rtpy::bind_tensor_class(m);
  rtpy::bind_interrupt(m);
  rtpy::bind_creation(m);
  rtpy::bind_numpy(m);
  rtpy::bind_operators(m);
  rtpy::bind_pointwise(m);
  rtpy::bind_reductions(m);
  rtpy::bind_shape_ops(m);
  rtpy::bind_sorting(m);
  rtpy::bind_selection(m);
  rtpy::bind_scans(m);
  rtpy::bind_nn_ops(m);
  rtpy::bind_indexing(m);
  rtpy::bind_autograd(m);
  rtpy::bind_amp(m);
  rtpy::bind_io(m);
  rtpy::bind_optim_steps(m);
  rtpy::bind_profiler(m);
  rtpy::bind_threads(m);
  auto backends = m.def_submodule("_backends", "compute backend switches (use rustytorch.backends)");
  rtpy::bind_backends(backends);
  auto debug = m.def_submodule("_debug", "backward debugger bindings (use rustytorch.debug)");
  rtpy::bind_debug(debug);
  auto cuda = m.def_submodule("_cuda", "CUDA device bindings (use rustytorch.cuda)");
  rtpy::bind_cuda(m, cuda);
  rtpy::bind_dist(m);
  auto remote = m.def_submodule("_remote", "remote attach bindings (use rustytorch.remote)");
  rtpy::bind_remote(remote);
  auto ops = m.def_submodule("_ops", "plugin op bindings (use rustytorch.ops)");
  rtpy::bind_plugin_ops(ops);
}
