// The submodule _C._cuda (rt/cuda.h: devices, memory, streams, events, TF32) and Tensor._to_device, the
// copy across devices behind Tensor.to/cuda/cpu. rustytorch/cuda.py builds torch.cuda's API on
// these; calls that need a device raise RuntimeError with the engine's reason (errors.cpp).
#include <fmt/core.h>

#include <cstdint>

#include "bind.h"
#include "rt/cuda.h"

namespace rtpy {

namespace {

std::string properties_repr(const rt::cuda::DeviceProperties& p) {
  return fmt::format("_CudaDeviceProperties(name='{}', major={}, minor={}, total_memory={}MB, multi_processor_count={})",
                     p.name, p.major, p.minor, p.total_memory >> 20, p.multiprocessors);
}

void bind_device_queries(py::module_& m) {
  m.def("is_built", &rt::cuda::is_built);
  m.def("device_count", &rt::cuda::device_count);
  m.def("is_available", &rt::cuda::is_available);
  m.def("unavailable_reason", &rt::cuda::unavailable_reason);
  m.def("version_string", &rt::cuda::version_string);
  m.def("current_device", &rt::cuda::current_device);
  m.def("set_device", &rt::cuda::set_device, py::arg("device"));

  py::class_<rt::cuda::DeviceProperties>(m, "_CudaDeviceProperties")
      .def_readonly("name", &rt::cuda::DeviceProperties::name)
      .def_readonly("major", &rt::cuda::DeviceProperties::major)
      .def_readonly("minor", &rt::cuda::DeviceProperties::minor)
      .def_readonly("total_memory", &rt::cuda::DeviceProperties::total_memory)
      .def_readonly("multi_processor_count", &rt::cuda::DeviceProperties::multiprocessors)
      .def("__repr__", &properties_repr);
  m.def("device_properties", &rt::cuda::device_properties, py::arg("device") = -1);
}

void bind_memory(py::module_& m) {
  m.def("memory_allocated", &rt::cuda::memory_allocated, py::arg("device") = -1);
  m.def("max_memory_allocated", &rt::cuda::max_memory_allocated, py::arg("device") = -1);
  m.def("memory_reserved", &rt::cuda::memory_reserved, py::arg("device") = -1);
  m.def("max_memory_reserved", &rt::cuda::max_memory_reserved, py::arg("device") = -1);
  m.def("reset_peak_memory_stats", &rt::cuda::reset_peak_memory_stats, py::arg("device") = -1);
  m.def("empty_cache", &rt::cuda::empty_cache);
  // torch.cuda.memory_stats()' key names for the counters the caching allocator keeps.
  m.def(
      "memory_stats",
      [](int device) {
        const rt::cuda::MemoryStats s = rt::cuda::memory_stats(device);
        py::dict d;
        d["allocated_bytes.all.current"] = s.allocated_bytes;
        d["allocated_bytes.all.peak"] = s.peak_allocated_bytes;
        d["reserved_bytes.all.current"] = s.reserved_bytes;
        d["reserved_bytes.all.peak"] = s.peak_reserved_bytes;
        d["segment.all.current"] = s.segments;
        d["allocation.all.current"] = s.allocations;
        d["num_alloc_retries"] = s.alloc_retries;
        d["num_ooms"] = s.ooms;
        return d;
      },
      py::arg("device") = -1);
  m.def("mem_get_info", &rt::cuda::mem_get_info, py::arg("device") = -1);
}

// Waiting on the GPU can take long: other Python threads run meanwhile.
void bind_sync_and_events(py::module_& m) {
  m.def("synchronize", &rt::cuda::synchronize, py::arg("device") = -1, py::call_guard<py::gil_scoped_release>());
  m.def("set_allow_tf32", &rt::cuda::set_allow_tf32, py::arg("allow"));
  m.def("allow_tf32", &rt::cuda::allow_tf32);

  py::class_<rt::cuda::Event>(m, "Event")
      .def(py::init<bool>(), py::arg("enable_timing") = false)
      .def("record", &rt::cuda::Event::record)
      .def("synchronize", &rt::cuda::Event::synchronize, py::call_guard<py::gil_scoped_release>())
      .def("query", &rt::cuda::Event::query)
      .def("elapsed_time", &rt::cuda::Event::elapsed_ms, py::arg("end_event"));

  py::class_<rt::cuda::Stream>(m, "Stream")
      .def_property_readonly("device_index", &rt::cuda::Stream::device)
      .def_property_readonly("cuda_stream", [](const rt::cuda::Stream& s) { return reinterpret_cast<uintptr_t>(s.handle()); })
      .def("synchronize", &rt::cuda::Stream::synchronize, py::call_guard<py::gil_scoped_release>())
      .def("query", &rt::cuda::Stream::query)
      .def("__repr__", [](const rt::cuda::Stream& s) {
        return fmt::format("<rustytorch.cuda.Stream device=cuda:{} cuda_stream={:#x}>", s.device(),
                           reinterpret_cast<uintptr_t>(s.handle()));
      });
  m.def("current_stream", &rt::cuda::Stream::current, py::arg("device") = -1);
}

// Tensor._to_device(device, copy=False): the same Python object when it is already there (unless
// `copy`), otherwise a differentiable copy (rt::to_device) made with the GIL released.
void bind_to_device(py::module_& parent) {
  TensorClass cls = tensor_class(parent);
  cls.def(
      "_to_device",
      [](py::handle self, py::handle device, bool copy) -> py::object {
        const rt::Tensor t = unwrap(self);
        const rt::Device target = to_device(device);
        if (t.device() == target) return copy ? wrap(rt::clone(t)) : same(self);
        return wrap(run_sized(t.numel(), [&] { return rt::to_device(t, target); }));
      },
      py::arg("device"), py::arg("copy") = false);
}

}  // namespace

void bind_cuda(py::module_& parent, py::module_& m) {
  bind_device_queries(m);
  bind_memory(m);
  bind_sync_and_events(m);
  bind_to_device(parent);
}

}  // namespace rtpy
