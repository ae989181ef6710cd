// Autocast state and the loss-scaling steps, for rustytorch.amp (autocast, GradScaler).
#include <fmt/format.h>

#include "bind.h"
#include "rt/amp/autocast.h"
#include "rt/amp/grad_scaling.h"

namespace rtpy {

namespace {
rt::DeviceType device_type_arg(const std::string& s) {
  if (s == "cuda") return rt::DeviceType::CUDA;
  if (s == "cpu") return rt::DeviceType::CPU;
  throw py::value_error(
      fmt::format("autocast: device_type '{}' is not supported; rustytorch autocasts on 'cuda' and 'cpu'", s));
}
}  // namespace

void bind_amp(py::module_& m) {
  m.def("is_autocast_enabled", [](const std::string& t) { return rt::amp::is_autocast_enabled(device_type_arg(t)); },
        py::arg("device_type") = "cuda");
  m.def("_set_autocast_enabled",
        [](const std::string& t, bool on) { rt::amp::set_autocast_enabled(device_type_arg(t), on); },
        py::arg("device_type"), py::arg("enabled"));
  m.def("get_autocast_dtype", [](const std::string& t) { return rt::amp::autocast_dtype(device_type_arg(t)); },
        py::arg("device_type"));
  m.def("_set_autocast_dtype",
        [](const std::string& t, rt::ScalarType d) { rt::amp::set_autocast_dtype(device_type_arg(t), d); },
        py::arg("device_type"), py::arg("dtype"));
  m.def("is_autocast_cache_enabled", &rt::amp::is_autocast_cache_enabled);
  m.def("_set_autocast_cache_enabled", &rt::amp::set_autocast_cache_enabled, py::arg("enabled"));
  m.def("clear_autocast_cache", &rt::amp::clear_autocast_cache);
  m.def("_autocast_increment_nesting", &rt::amp::increment_autocast_nesting);
  m.def("_autocast_decrement_nesting", &rt::amp::decrement_autocast_nesting);
  m.def(
      "_amp_foreach_non_finite_check_and_unscale_",
      [](const rt::TensorList& grads, const rt::Tensor& found_inf, const rt::Tensor& inv_scale) {
        run_long([&] { rt::amp::non_finite_check_and_unscale_(grads, found_inf, inv_scale); });
      },
      py::arg("grads"), py::arg("found_inf"), py::arg("inv_scale"));
  m.def("_amp_update_scale_", &rt::amp::update_scale_, py::arg("scale"), py::arg("growth_tracker"),
        py::arg("found_inf"), py::arg("growth_factor"), py::arg("backoff_factor"), py::arg("growth_interval"));
}

}  // namespace rtpy
