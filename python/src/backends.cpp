// The submodule _C._backends: switches of rt/backends.h, which rustytorch.backends exposes under
// torch.backends' names (python/rustytorch/backends/mkldnn.py, cpu.py).
#include "bind.h"
#include "rt/backends.h"

namespace rtpy {

void bind_backends(py::module_& m) {
  m.def("mkldnn_is_available", &rt::backends::mkldnn::is_available);
  m.def("mkldnn_enabled", &rt::backends::mkldnn::enabled);
  m.def("set_mkldnn_enabled", &rt::backends::mkldnn::set_enabled, py::arg("enabled"));
  m.def("mkldnn_version", &rt::backends::mkldnn::version);
  m.def("fuse_linear_activation", &rt::backends::cpu::fuse_linear_activation);
  m.def("set_fuse_linear_activation", &rt::backends::cpu::set_fuse_linear_activation, py::arg("on"));
}

}  // namespace rtpy
