// _C._dist's groups and collectives (rt/dist/distributed.h). rustytorch/distributed/ gives them
// torch.distributed's signatures (None groups, async_op returning None or Work, timedelta timeouts).
// Every call that can block releases the GIL, so other Python threads (a data loader, the studio's
// kernel) keep running while a rank waits for its peers.
#include <pybind11/chrono.h>

#include <fmt/core.h>
#include <frameobject.h>

#include <cstring>

#include "bind.h"
#include "rt/dist/distributed.h"
#include "rt/dist/ledger.h"

namespace rtpy {

namespace {
using rt::dist::GroupPtr;
using rt::dist::Milliseconds;
using rt::dist::ReduceOp;
using rt::dist::WorkPtr;

Milliseconds or_zero(const std::optional<Milliseconds>& t) { return t ? *t : Milliseconds(0); }

// The user's line that called a collective: the innermost Python frame outside the rustytorch package,
// as "train.py:91" (the collective ledger's call site). Runs with the GIL held.
uint32_t python_call_site() {
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  Py_XINCREF(frame);
  uint32_t site = 0;
  while (frame) {
    PyCodeObject* code = PyFrame_GetCode(frame);
    const char* file = PyUnicode_AsUTF8(code->co_filename);
    Py_DECREF(code);
    if (!file) {
      PyErr_Clear();
    } else if (!std::strstr(file, "/rustytorch/")) {
      const char* base = std::strrchr(file, '/');
      site = rt::dist::intern_call_site(fmt::format("{}:{}", base ? base + 1 : file, PyFrame_GetLineNumber(frame)));
      break;
    }
    PyFrameObject* back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
  }
  Py_XDECREF(frame);
  return site;
}

// The ledger's hang report asks the rank everyone waits for for its Python stacks: every thread's, as
// traceback.format_stack gives them. Runs on the ledger monitor's thread, so it takes the GIL.
std::string python_stacks() {
  if (!Py_IsInitialized() || _Py_IsFinalizing()) return {};
  py::gil_scoped_acquire gil;
  try {
    py::object format_stack = py::module_::import("traceback").attr("format_stack");
    py::dict frames = py::module_::import("sys").attr("_current_frames")();
    py::dict names;
    for (py::handle t : py::module_::import("threading").attr("enumerate")())
      names[t.attr("ident")] = t.attr("name");
    std::string out;
    for (auto [ident, frame] : frames) {
      std::string name = names.contains(ident) ? py::str(names[ident]).cast<std::string>() : "thread";
      out += fmt::format("  {} ({}):\n", name, py::str(ident).cast<std::string>());
      for (py::handle line : format_stack(frame)) out += "  " + py::str(line).cast<std::string>();
    }
    return out;
  } catch (const py::error_already_set& e) {
    return std::string("(could not format the Python stacks: ") + e.what() + ")\n";
  }
}

// Opens the call site for the collective it guards; constructed before the GIL is released.
struct PythonCallSite {
  rt::dist::CallSiteScope scope{python_call_site()};
};
}  // namespace

void bind_process_groups(py::module_& dist) {
  py::enum_<ReduceOp>(dist, "ReduceOp")
      .value("SUM", ReduceOp::Sum)
      .value("AVG", ReduceOp::Avg)
      .value("PRODUCT", ReduceOp::Product)
      .value("MIN", ReduceOp::Min)
      .value("MAX", ReduceOp::Max);

  py::class_<rt::dist::Work, WorkPtr>(dist, "Work")
      .def("is_completed", &rt::dist::Work::is_completed)
      .def("is_success", &rt::dist::Work::is_success)
      .def(
          "wait",
          [](rt::dist::Work& w, std::optional<Milliseconds> timeout) {
            py::gil_scoped_release release;
            w.wait(or_zero(timeout));
            return true;
          },
          py::arg("timeout") = py::none())
      .def("exception",
           [](rt::dist::Work& w) -> py::object {
             std::exception_ptr e = w.exception();
             if (!e) return py::none();
             try {
               std::rethrow_exception(e);
             } catch (...) {
               // Build the Python exception the translators would raise, without raising it.
               py::detail::translate_exception(std::current_exception());
               py::error_already_set err;
               return err.value();
             }
           })
      .def("result", [](rt::dist::Work& w) { return w.result(); })
      .def_property_readonly("description", &rt::dist::Work::description)
      .def("__repr__", [](rt::dist::Work& w) {
        return "<rustytorch.distributed.Work " + w.description() + (w.is_completed() ? ", completed>" : ", running>");
      });

  py::class_<rt::dist::Group, GroupPtr>(dist, "ProcessGroup")
      .def("rank", &rt::dist::Group::rank)
      .def("size", &rt::dist::Group::size)
      .def("name", &rt::dist::Group::name)
      .def("backend", &rt::dist::Group::backend)
      .def_property_readonly("global_ranks", &rt::dist::Group::global_ranks)
      .def("__repr__", [](const rt::dist::Group& g) {
        return "<rustytorch.distributed.ProcessGroup '" + g.name() + "' (" + g.backend() + ", rank " +
               std::to_string(g.rank()) + " of " + std::to_string(g.size()) + ")>";
      });

  dist.def("is_gloo_available", &rt::dist::is_gloo_available);
  dist.def("is_mpi_available", &rt::dist::is_mpi_available);
  dist.def("is_nccl_available", &rt::dist::is_nccl_available);
  dist.def(
      "init_process_group",
      [](const std::string& backend, const std::string& init_method, Milliseconds timeout, int world_size, int rank,
         std::shared_ptr<rt::dist::Store> store, const std::string& group_name) {
        rt::dist::InitOptions o;
        o.backend = backend;
        o.init_method = init_method;
        o.timeout = timeout;
        o.world_size = world_size;
        o.rank = rank;
        o.store = std::move(store);
        o.group_name = group_name;
        py::gil_scoped_release release;
        rt::dist::init_process_group(o);
      },
      py::arg("backend"), py::arg("init_method"), py::arg("timeout"), py::arg("world_size"), py::arg("rank"),
      py::arg("store"), py::arg("group_name"));
  dist.def("destroy_process_group", &rt::dist::destroy_process_group, py::arg("group") = nullptr,
           py::call_guard<py::gil_scoped_release>());
  dist.def("is_initialized", &rt::dist::is_initialized);
  dist.def("default_group", &rt::dist::default_group);
  dist.def("get_rank", &rt::dist::get_rank, py::arg("group") = nullptr);
  dist.def("get_world_size", &rt::dist::get_world_size, py::arg("group") = nullptr);
  dist.def("get_backend", &rt::dist::get_backend, py::arg("group") = nullptr);
  dist.def(
      "new_group",
      [](std::vector<int> ranks, std::optional<Milliseconds> timeout, const std::string& backend) {
        py::gil_scoped_release release;
        return rt::dist::new_group(std::move(ranks), or_zero(timeout), backend);
      },
      py::arg("ranks"), py::arg("timeout"), py::arg("backend"));

  auto blocking = py::call_guard<PythonCallSite, py::gil_scoped_release>();
  dist.def("all_reduce", &rt::dist::all_reduce, py::arg("tensor"), py::arg("op"), py::arg("group"),
           py::arg("async_op"), blocking);
  dist.def("broadcast", &rt::dist::broadcast, py::arg("tensor"), py::arg("src"), py::arg("group"),
           py::arg("async_op"), blocking);
  dist.def("reduce", &rt::dist::reduce, py::arg("tensor"), py::arg("dst"), py::arg("op"), py::arg("group"),
           py::arg("async_op"), blocking);
  dist.def("all_gather", &rt::dist::all_gather, py::arg("tensor_list"), py::arg("tensor"), py::arg("group"),
           py::arg("async_op"), blocking);
  dist.def("all_gather_into_tensor", &rt::dist::all_gather_into_tensor, py::arg("output_tensor"),
           py::arg("input_tensor"), py::arg("group"), py::arg("async_op"), blocking);
  dist.def("reduce_scatter_tensor", &rt::dist::reduce_scatter_tensor, py::arg("output"), py::arg("input"),
           py::arg("op"), py::arg("group"), py::arg("async_op"), blocking);
  dist.def("gather", &rt::dist::gather, py::arg("tensor"), py::arg("gather_list"), py::arg("dst"), py::arg("group"),
           py::arg("async_op"), blocking);
  dist.def("scatter", &rt::dist::scatter, py::arg("tensor"), py::arg("scatter_list"), py::arg("src"),
           py::arg("group"), py::arg("async_op"), blocking);
  dist.def("all_to_all_single", &rt::dist::all_to_all_single, py::arg("output"), py::arg("input"),
           py::arg("output_split_sizes"), py::arg("input_split_sizes"), py::arg("group"), py::arg("async_op"),
           blocking);
  dist.def("isend", &rt::dist::isend, py::arg("tensor"), py::arg("dst"), py::arg("group"), py::arg("tag"), blocking);
  dist.def("irecv", &rt::dist::irecv, py::arg("tensor"), py::arg("src"), py::arg("group"), py::arg("tag"), blocking);
  dist.def("barrier", &rt::dist::barrier, py::arg("group"), py::arg("async_op"), blocking);
  dist.def(
      "monitored_barrier",
      [](GroupPtr group, std::optional<Milliseconds> timeout, bool wait_all_ranks) {
        PythonCallSite site;
        py::gil_scoped_release release;
        rt::dist::monitored_barrier(group, or_zero(timeout), wait_all_ranks);
      },
      py::arg("group"), py::arg("timeout"), py::arg("wait_all_ranks"));

  rt::dist::set_stack_provider(&python_stacks);
  dist.def("_stop_ledger_monitor", &rt::dist::stop_ledger_monitor, py::call_guard<py::gil_scoped_release>());
  dist.def(
      "ledger_trace_json", [](int rank) { return rt::dist::ledger_trace_json(rank); }, py::arg("rank"));
  dist.def(
      "write_ledger_trace", [](const std::string& path, int rank) { rt::dist::write_ledger_trace(path, rank); },
      py::arg("path"), py::arg("rank"));
}

}  // namespace rtpy
