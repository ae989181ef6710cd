// The submodule _C._cuda (rt/cuda.h: devices, memory, streams, events, TF32) and Tensor._to_device, the
// copy across devices behind Tensor.to/cuda/cpu. rustytorch/cuda.py builds torch.cuda's API on
// these; calls that need a device raise RuntimeError with the engine's reason (errors.cpp).
#include <fmt/core.h>

#include <cstdint>
#include <optional>

#include <pybind11/operators.h>

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
        d["pending_events"] = s.pending_events;  // ours: freed blocks waiting for other streams (record_stream)
        return d;
      },
      py::arg("device") = -1);
  m.def("mem_get_info", &rt::cuda::mem_get_info, py::arg("device") = -1);
}

// A `device` argument of the stream API: None (the current device), an int, "cuda:N" or an
// rt.device of type cuda, as an index (-1 for the current device).
int cuda_index(py::handle device, const char* what) {
  if (device.is_none()) return -1;
  if (PyLong_Check(device.ptr())) return device.cast<int>();
  const rt::Device d = to_device(device);
  if (!d.is_cuda()) throw py::value_error(fmt::format("{}: expected a CUDA device, got {}", what, d.str()));
  return d.index;
}

std::string stream_repr(const rt::cuda::Stream& s) {
  return fmt::format("<rustytorch.cuda.Stream device=cuda:{} cuda_stream={:#x}>", s.device(),
                     reinterpret_cast<uintptr_t>(s.handle()));
}

// Waiting on the GPU can take long: other Python threads run meanwhile.
void bind_sync_and_events(py::module_& m) {
  using rt::cuda::Event;
  using rt::cuda::Stream;
  m.def("synchronize", &rt::cuda::synchronize, py::arg("device") = -1, py::call_guard<py::gil_scoped_release>());
  m.def("set_allow_tf32", &rt::cuda::set_allow_tf32, py::arg("allow"));
  m.def("allow_tf32", &rt::cuda::allow_tf32);

  py::class_<Event>(m, "Event")
      .def(py::init<bool, bool>(), py::arg("enable_timing") = false, py::arg("blocking") = false)
      .def(
          "record",
          [](Event& e, std::optional<Stream> stream) { e.record(stream ? *stream : Stream::current()); },
          py::arg("stream") = py::none())
      .def(
          "wait",
          [](const Event& e, std::optional<Stream> stream) { e.wait(stream ? *stream : Stream::current()); },
          py::arg("stream") = py::none())
      .def("synchronize", &Event::synchronize, py::call_guard<py::gil_scoped_release>())
      .def("query", &Event::query)
      .def("elapsed_time", &Event::elapsed_ms, py::arg("end_event"))
      .def_property_readonly("cuda_event", [](const Event& e) { return reinterpret_cast<uintptr_t>(e.handle()); });

  py::class_<Stream>(m, "Stream")
      .def(py::init([](py::handle device, int priority) { return Stream::create(cuda_index(device, "Stream"), priority); }),
           py::arg("device") = py::none(), py::arg("priority") = 0)
      .def_property_readonly("device_index", &Stream::device)
      .def_property_readonly("device", [](const Stream& s) { return rt::Device::cuda(s.device()); })
      .def_property_readonly("cuda_stream", [](const Stream& s) { return reinterpret_cast<uintptr_t>(s.handle()); })
      .def_property_readonly("priority", &Stream::priority)
      .def("synchronize", &Stream::synchronize, py::call_guard<py::gil_scoped_release>())
      .def("query", &Stream::query)
      .def("wait_event", &Stream::wait_event, py::arg("event"))
      .def("wait_stream", &Stream::wait_stream, py::arg("stream"))
      .def(
          "record_event",
          [](const Stream& s, py::object event) {
            if (event.is_none()) event = py::cast(Event(false));
            event.cast<Event&>().record(s);
            return event;
          },
          py::arg("event") = py::none())
      .def(py::self == py::self)
      .def(py::self != py::self)
      .def("__hash__", [](const Stream& s) { return py::hash(py::make_tuple(s.device(), reinterpret_cast<uintptr_t>(s.handle()))); })
      .def("__repr__", &stream_repr);
  m.def("current_stream", [](py::handle device) { return Stream::current(cuda_index(device, "current_stream")); },
        py::arg("device") = py::none());
  m.def("default_stream", [](py::handle device) { return Stream::default_stream(cuda_index(device, "default_stream")); },
        py::arg("device") = py::none());
  m.def("set_stream", &rt::cuda::set_current_stream, py::arg("stream"));
}

// Tensor._to_device(device, copy=False): the same Python object when it is already there (unless
// `copy`), otherwise a differentiable copy (rt::to_device) made with the GIL released; and
// Tensor.record_stream(stream), pin_memory(), is_pinned().
void bind_to_device(py::module_& parent) {
  TensorClass cls = tensor_class(parent);
  cls.def(
      "_to_device",
      [](py::handle self, py::handle device, bool copy, bool non_blocking) -> py::object {
        const rt::Tensor t = unwrap(self);
        const rt::Device target = to_device(device);
        if (t.device() == target) return copy ? wrap(rt::clone(t)) : same(self);
        return wrap(run_sized(t.numel(), [&] { return rt::to_device(t, target, non_blocking); }));
      },
      py::arg("device"), py::arg("copy") = false, py::arg("non_blocking") = false);
  cls.def(
      "pin_memory",
      [](py::handle self) -> py::object {
        const rt::Tensor t = unwrap(self);
        if (rt::cuda::is_pinned(t)) return same(self);
        return wrap(run_sized(t.numel(), [&] { return rt::cuda::pin_memory(t); }));
      },
      "A copy in page-locked host memory (self when already pinned): copies from it to a GPU with\n"
      "non_blocking=True are queued on the current stream instead of waited for. Needs a usable GPU.");
  cls.def(
      "is_pinned", [](py::handle self) { return rt::cuda::is_pinned(unwrap(self)); },
      "True when this CPU tensor lives in pinned memory (pin_memory()); False for GPU tensors and without CUDA.");
  cls.def(
      "record_stream", [](py::handle self, const rt::cuda::Stream& stream) { rt::cuda::record_stream(unwrap(self), stream); },
      py::arg("stream"));
}

}  // namespace

void bind_cuda(py::module_& parent, py::module_& m) {
  bind_device_queries(m);
  bind_memory(m);
  bind_sync_and_events(m);
  bind_to_device(parent);
}

}  // namespace rtpy
