// rustytorch._C._profiler: the engine's profiler (rt::prof) for the rustytorch.profiler package.
// A private submodule: the package builds PyTorch's torch.profiler API on top of these names.
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <set>

#include "bind.h"
#include "rt/allocator.h"
#include "rt/autograd/node.h"
#include "rt/prof/chrome_trace.h"
#include "rt/prof/counters.h"
#include "rt/prof/gradient_histograms.h"
#include "rt/prof/record_function.h"
#include "rt/prof/session.h"
#include "rt/prof/store.h"
#include "rt/prof/summary.h"

namespace rtpy {

namespace {

namespace prof = rt::prof;
using DataPtr = std::shared_ptr<prof::SessionData>;

prof::CuptiMode cupti_mode(std::string_view mode) {
  if (mode == "auto") return prof::CuptiMode::Auto;
  if (mode == "on") return prof::CuptiMode::On;
  if (mode == "off") return prof::CuptiMode::Off;
  throw py::value_error("profiler: cupti mode must be 'auto', 'on' or 'off', got '" + std::string(mode) + "'");
}

// A Session whose finished data outlives it: the package keeps the data after stop().
class RecordingSession {
 public:
  explicit RecordingSession(prof::SessionOptions options) : session_(std::move(options)) {}

  void start() { session_.start(); }
  // (data, None), or (data, message) when the store could not take everything: the session has
  // stopped all the same and its data is complete in memory.
  std::pair<DataPtr, std::optional<std::string>> stop() {
    std::optional<std::string> store_error;
    try {
      session_.stop();
    } catch (const prof::StoreError& e) {
      store_error = e.what();
    }
    return {std::make_shared<prof::SessionData>(session_.data()), store_error};
  }
  DataPtr snapshot() const { return std::make_shared<prof::SessionData>(session_.snapshot()); }
  bool recording() const { return session_.recording(); }
  void step() { session_.step(); }
  void counter(std::string_view name, double value) { session_.counter(name, value); }
  int64_t store_session_id() const { return session_.store_session_id(); }

 private:
  prof::Session session_;
};

// One open record_function range. Ranges close on their own thread, innermost first: the
// package checks that before calling close().
class OpenRange {
 public:
  explicit OpenRange(std::string_view name) : range_(std::make_unique<prof::RecordFunction>(name)) {}
  bool recording() const { return range_ && range_->recording(); }
  void close() { range_.reset(); }

 private:
  std::unique_ptr<prof::RecordFunction> range_;
};

// A module scope (rt::ModuleScope) held across Python calls, for nn.Module.__call__: ops run
// while it is open carry the dotted module path (profile(with_stack=True)). LIFO per thread.
class OpenModuleScope {
 public:
  explicit OpenModuleScope(std::string name) : scope_(std::make_unique<rt::ModuleScope>(std::move(name))) {}
  void close() { scope_.reset(); }

 private:
  std::unique_ptr<rt::ModuleScope> scope_;
};

// The memory category (rt::MemoryCategoryGuard) of this thread's allocations while open, for
// Python code that creates parameters or optimizer state. LIFO per thread.
class OpenMemoryCategory {
 public:
  explicit OpenMemoryCategory(std::string_view name)
      : guard_(std::make_unique<rt::MemoryCategoryGuard>(category(name))) {}
  void close() { guard_.reset(); }

 private:
  static rt::MemoryCategory category(std::string_view name) {
    for (int c = 0; c <= int(rt::MemoryCategory::Other); ++c)
      if (name == rt::category_name(rt::MemoryCategory(c))) return rt::MemoryCategory(c);
    throw py::value_error("memory category must be parameter, gradient, activation, optimizer_state, temporary "
                          "or other, got '" + std::string(name) + "'");
  }
  std::unique_ptr<rt::MemoryCategoryGuard> guard_;
};

// A parameter's gradient histogram recorded after every accumulation into its .grad (profile(record_gradients=
// model)): a C++ post-accumulate hook on the parameter's AccumulateGrad node, so the backward never takes the GIL
// for it. remove() disarms it (hooks cannot be taken off a node); the node itself is kept alive by the package.
class GradientHistogramHook {
 public:
  GradientHistogramHook(const std::shared_ptr<rt::autograd::Node>& node, std::string name, int bins) {
    auto* acc = dynamic_cast<rt::autograd::AccumulateGrad*>(node.get());
    if (!acc)
      throw py::type_error("gradient histograms hook the parameter's AccumulateGrad node (p.expand_as(p).grad_fn."
                           "next_functions[0][0]); got " + (node ? node->name() : std::string("None")));
    if (bins < 1 || bins > prof::kMaxGradientBins)
      throw py::value_error("record_gradients: bins is " + std::to_string(bins) + "; it must be 1 to " +
                            std::to_string(prof::kMaxGradientBins));
    if (name.empty()) throw py::value_error("record_gradients: a parameter name is empty");
    acc->add_post_accumulate_hook([name = std::move(name), bins, armed = armed_](const rt::Tensor& leaf) {
      if (armed->load(std::memory_order_relaxed)) prof::record_gradient_histogram(name, leaf.grad(), bins);
    });
  }
  void remove() { armed_->store(false, std::memory_order_relaxed); }

 private:
  std::shared_ptr<std::atomic<bool>> armed_ = std::make_shared<std::atomic<bool>>(true);  // read by backward threads
};

std::string text(const prof::SessionData& d, prof::StringId id) { return d.strings.at(id); }

const char* op_kind_name(prof::OpKind k) {
  switch (k) {
    case prof::OpKind::Op: return "op";
    case prof::OpKind::BackwardNode: return "backward";
    case prof::OpKind::UserRange: return "user_annotation";
  }
  return "op";
}

py::list ops_as_tuples(const prof::SessionData& d) {
  py::list out;
  for (const prof::OpRecord& op : d.ops)
    out.append(py::make_tuple(text(d, op.name), op.start_ns, op.end_ns, op.thread, text(d, op.module),
                              text(d, op.input_shapes), text(d, op.input_dtypes), op.sequence_nr, op.depth,
                              op_kind_name(op.kind), op.correlation_id));
  return out;
}

// Live bytes per category at every distinct event time: (times_ns, [[bytes per category]...], names).
py::tuple memory_timeline(const prof::SessionData& d, std::optional<int32_t> device) {
  std::vector<int64_t> times;
  std::vector<std::array<int64_t, prof::kMemoryCategoryCount>> sizes;
  int64_t peak_bytes = 0, peak_time = 0;
  {
    py::gil_scoped_release unlocked;
    const prof::MemoryTimeline timeline(d, device);
    for (const prof::MemoryPoint& p : timeline.total_series()) {
      times.push_back(p.time_ns);
      sizes.push_back(timeline.live_at(p.time_ns).bytes);
    }
    peak_bytes = timeline.peak_bytes();
    peak_time = timeline.peak_time_ns();
  }
  py::list names;
  for (size_t c = 0; c < prof::kMemoryCategoryCount; ++c)
    names.append(std::string(prof::memory_category_name(prof::MemoryCategoryId(c))));
  py::list rows;
  for (const auto& s : sizes) rows.append(py::cast(std::vector<int64_t>(s.begin(), s.end())));
  return py::make_tuple(py::cast(times), rows, names, peak_bytes, peak_time);
}

// GPU time (kernels, memcpys, memsets) per launching op's correlation id, as summary.h counts it.
std::unordered_map<uint64_t, int64_t> device_ns_by_correlation(const prof::SessionData& d) {
  std::unordered_map<uint64_t, int64_t> out;
  for (const prof::GpuActivityRecord& g : d.gpu) {
    const bool device_work = g.kind == prof::GpuActivityKind::Kernel || g.kind == prof::GpuActivityKind::Memcpy ||
                             g.kind == prof::GpuActivityKind::Memset;
    if (device_work && g.external_id != 0) out[g.external_id] += std::max<int64_t>(0, g.end_ns - g.start_ns);
  }
  return out;
}

std::vector<int32_t> memory_devices(const prof::SessionData& d) {
  std::set<int32_t> devices;
  for (const prof::MemoryRecord& m : d.memory) devices.insert(m.device);
  return {devices.begin(), devices.end()};
}

py::dict export_chrome(const prof::SessionData& d, const std::filesystem::path& path) {
  prof::ChromeExportStats stats;
  {
    py::gil_scoped_release unlocked;
    stats = prof::export_chrome_trace(d, path);
  }
  py::dict out;
  out["events"] = stats.events;
  out["bytes"] = stats.bytes;
  out["clamped_ops"] = stats.clamped_ops;
  return out;
}

// Step numbers continue across the recording windows of a schedule (ProfilerStep#N is global).
void renumber_steps(prof::SessionData& d, int64_t first) {
  for (prof::StepRecord& s : d.steps) s.step += first;
  for (prof::GradientHistogramRecord& h : d.gradient_histograms)
    if (h.step >= 0) h.step += first;
}

py::list gradient_histograms(const prof::SessionData& d) {
  py::list out;
  for (const prof::GradientHistogramRecord& h : d.gradient_histograms)
    out.append(py::make_tuple(h.step, h.time_ns, text(d, h.name), h.numel, h.norm, h.lo, h.hi, h.nan_count,
                              h.inf_count, h.counts));
  return out;
}

void bind_stats(py::module_& m) {
  py::class_<prof::OpStats>(m, "OpStats")
      .def(py::init([](std::string name, std::string input_shapes, int64_t calls, int64_t self_ns, int64_t total_ns,
                       int64_t self_device_ns, int64_t device_total_ns, int64_t self_cpu_memory_bytes,
                       int64_t cpu_memory_bytes, int64_t self_device_memory_bytes, int64_t device_memory_bytes) {
             return prof::OpStats{std::move(name),  std::move(input_shapes), calls,
                                  self_ns,          total_ns,                self_device_ns,
                                  device_total_ns,  self_cpu_memory_bytes,   cpu_memory_bytes,
                                  self_device_memory_bytes, device_memory_bytes};
           }),
           py::kw_only(), py::arg("name"), py::arg("input_shapes") = "", py::arg("calls") = 0,
           py::arg("self_ns") = 0, py::arg("total_ns") = 0, py::arg("self_device_ns") = 0,
           py::arg("device_total_ns") = 0, py::arg("self_cpu_memory_bytes") = 0, py::arg("cpu_memory_bytes") = 0,
           py::arg("self_device_memory_bytes") = 0, py::arg("device_memory_bytes") = 0)
      .def_readonly("name", &prof::OpStats::name)
      .def_readonly("input_shapes", &prof::OpStats::input_shapes)
      .def_readonly("calls", &prof::OpStats::calls)
      .def_readonly("self_ns", &prof::OpStats::self_ns)
      .def_readonly("total_ns", &prof::OpStats::total_ns)
      .def_readonly("self_device_ns", &prof::OpStats::self_device_ns)
      .def_readonly("device_total_ns", &prof::OpStats::device_total_ns)
      .def_readonly("self_cpu_memory_bytes", &prof::OpStats::self_cpu_memory_bytes)
      .def_readonly("cpu_memory_bytes", &prof::OpStats::cpu_memory_bytes)
      .def_readonly("self_device_memory_bytes", &prof::OpStats::self_device_memory_bytes)
      .def_readonly("device_memory_bytes", &prof::OpStats::device_memory_bytes)
      .def("__repr__", [](const prof::OpStats& s) {
        return "OpStats(" + s.name + ", calls=" + std::to_string(s.calls) + ", total=" +
               prof::format_time_ns(s.total_ns) + ")";
      });
  m.def("format_table", &prof::format_table, py::arg("rows"), py::arg("sort_by") = "cpu_time_total",
        py::arg("row_limit") = 100);
  m.def("format_time_ns", &prof::format_time_ns, py::arg("ns"));
}

void bind_session_data(py::module_& m) {
  py::class_<prof::SessionData, DataPtr>(m, "SessionData")
      .def_readonly("name", &prof::SessionData::name)
      .def_readonly("start_ns", &prof::SessionData::start_ns)
      .def_readonly("end_ns", &prof::SessionData::end_ns)
      .def_readonly("clock_offset_ns", &prof::SessionData::clock_offset_ns)
      .def_readonly("complete", &prof::SessionData::complete)
      .def_readonly("dropped_records", &prof::SessionData::dropped_records)
      .def_property_readonly("metadata", [](const prof::SessionData& d) { return d.metadata; })
      .def("set_metadata", [](prof::SessionData& d, const std::string& k, const std::string& v) { d.metadata[k] = v; })
      .def_property_readonly("op_count", [](const prof::SessionData& d) { return d.ops.size(); })
      .def_property_readonly("memory_count", [](const prof::SessionData& d) { return d.memory.size(); })
      .def_property_readonly("gpu_count", [](const prof::SessionData& d) { return d.gpu.size(); })
      .def("ops", &ops_as_tuples)
      .def("collectives",
           [](const prof::SessionData& d) {
             py::list out;
             for (const prof::CollectiveRecord& c : d.collectives)
               out.append(py::make_tuple(text(d, c.name), text(d, c.group), c.seq, text(d, c.shape), text(d, c.dtype),
                                         c.numel, c.bytes, c.peer, c.point_to_point, text(d, c.call_site),
                                         c.enqueue_ns, c.start_ns, c.end_ns, c.thread));
             return out;
           })
      .def("threads",
           [](const prof::SessionData& d) {
             py::list out;
             for (const prof::ThreadRecord& t : d.threads)
               out.append(py::make_tuple(t.thread, t.os_tid, text(d, t.name)));
             return out;
           })
      .def("steps",
           [](const prof::SessionData& d) {
             py::list out;
             for (const prof::StepRecord& s : d.steps) out.append(py::make_tuple(s.step, s.start_ns, s.end_ns));
             return out;
           })
      .def("counters",
           [](const prof::SessionData& d) {
             py::list out;
             for (const prof::CounterRecord& c : d.counters)
               out.append(py::make_tuple(c.time_ns, text(d, c.name), c.value));
             return out;
           })
      .def("gradient_histograms", &gradient_histograms)
      .def_property_readonly("gradient_histogram_count", [](const prof::SessionData& d) { return d.gradient_histograms.size(); })
      .def("renumber_steps", &renumber_steps, py::arg("first"))
      .def("key_averages",
           [](const prof::SessionData& d, bool by_shape) {
             py::gil_scoped_release unlocked;
             return prof::key_averages(d, by_shape);
           },
           py::arg("group_by_input_shape") = false)
      .def("memory_devices", &memory_devices)
      .def("device_ns_by_correlation", &device_ns_by_correlation)
      .def("memory_timeline", &memory_timeline, py::arg("device") = std::nullopt)
      .def("export_chrome_trace", &export_chrome, py::arg("path"))
      .def("chrome_trace_json", [](const prof::SessionData& d) { return prof::chrome_trace_json(d); });
}

}  // namespace

void bind_profiler(py::module_& parent) {
  py::module_ m = parent.def_submodule("_profiler", "rt::prof bindings for rustytorch.profiler");
  bind_stats(m);
  bind_session_data(m);

  py::class_<RecordingSession>(m, "Session")
      .def(py::init([](bool record_shapes, bool profile_memory, bool with_stack, std::string_view cupti,
                       std::string name, std::optional<std::filesystem::path> store) {
             return std::make_unique<RecordingSession>(prof::SessionOptions{
                 .record_shapes = record_shapes,
                 .profile_memory = profile_memory,
                 .with_stack = with_stack,
                 .cupti = cupti_mode(cupti),
                 .name = std::move(name),
                 .store_path = store ? store->string() : std::string()});
           }),
           py::kw_only(), py::arg("record_shapes") = false, py::arg("profile_memory") = false,
           py::arg("with_stack") = false, py::arg("cupti") = "auto", py::arg("name") = "",
           py::arg("store") = std::nullopt)
      .def("start", &RecordingSession::start, py::call_guard<py::gil_scoped_release>())
      .def("stop", &RecordingSession::stop, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("store_session_id", &RecordingSession::store_session_id)
      .def("snapshot", &RecordingSession::snapshot)
      .def_property_readonly("recording", &RecordingSession::recording)
      .def("step", &RecordingSession::step)
      .def("counter", &RecordingSession::counter, py::arg("name"), py::arg("value"));

  py::class_<OpenRange>(m, "OpenRange")
      .def(py::init<std::string_view>(), py::arg("name"))
      .def_property_readonly("recording", &OpenRange::recording)
      .def("close", &OpenRange::close);

  py::class_<OpenModuleScope>(m, "OpenModuleScope")
      .def(py::init<std::string>(), py::arg("name"))
      .def("close", &OpenModuleScope::close);
  m.def("current_module_path", &rt::current_module_path);
  py::class_<OpenMemoryCategory>(m, "OpenMemoryCategory")
      .def(py::init<std::string_view>(), py::arg("name"))
      .def("close", &OpenMemoryCategory::close);
  m.def("current_memory_category", [] { return std::string(rt::category_name(rt::current_memory_category())); });

  m.def("counter", &prof::counter, py::arg("name"), py::arg("value"));
  m.def("record_gradient_histogram", &prof::record_gradient_histogram, py::arg("name"), py::arg("grad"),
        py::arg("bins") = 32, py::call_guard<py::gil_scoped_release>());
  py::class_<GradientHistogramHook>(m, "GradientHistogramHook")
      .def(py::init<const std::shared_ptr<rt::autograd::Node>&, std::string, int>(), py::arg("node"),
           py::arg("name"), py::arg("bins"))
      .def("remove", &GradientHistogramHook::remove);
  m.def("profiling_active", &prof::profiling_active);
  m.def("recording_session_gives_way", &prof::recording_session_gives_way);
  m.def("set_thread_name", &prof::set_thread_name, py::arg("name"));
  m.def("default_store_path", &prof::Store::default_path);
}

}  // namespace rtpy
