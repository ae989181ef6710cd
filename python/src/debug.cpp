// The backward debugger, gradient statistics, grad-norm history and graph snapshots for the
// rustytorch.debug package, bound as the submodule rustytorch._C._debug (rustytorch/debug.py re-exports it).
// The break handler runs on the backward thread (which released the GIL) and takes the GIL;
// calls that wait (wait_for_pause, detach) release it.
#include <fmt/format.h>

#include "bind.h"
#include "rt/autograd/graph_snapshot.h"
#include "rt/debug/backward_debugger.h"
#include "rt/debug/grad_norm_history.h"
#include "rt/debug/gradient_stats.h"

namespace rtpy {

namespace {

namespace dbg = rt::debug;
using rt::autograd::GraphEdgeInfo;
using rt::autograd::GraphNodeInfo;
using rt::autograd::GraphSnapshot;

// A Python object whose last reference may be dropped on any thread.
std::shared_ptr<py::object> share(py::object o) {
  return std::shared_ptr<py::object>(new py::object(std::move(o)), [](py::object* p) {
    if (!Py_IsInitialized()) return;
    py::gil_scoped_acquire gil;
    delete p;
  });
}

constexpr const char* kActions = "'step', 'step_over', 'continue' or 'stop' (None means 'continue'; "
                                 "rt.debug.Action.run_to(sequence_nr=...) runs to a node)";

dbg::Action to_action(py::handle r) {
  if (r.is_none()) return dbg::Action::resume();
  if (py::isinstance<dbg::Action>(r)) return r.cast<dbg::Action>();
  if (py::isinstance<py::str>(r)) {
    const std::string s = r.cast<std::string>();
    if (s == "step") return dbg::Action::step();
    if (s == "step_over") return dbg::Action::step_over_module();
    if (s == "continue") return dbg::Action::resume();
    if (s == "stop") return dbg::Action::stop();
    throw py::value_error(fmt::format("debugger: unknown action '{}'; valid actions are {}", s, kActions));
  }
  throw py::type_error(fmt::format("debugger: an on_break handler must return {}, got {}", kActions,
                                   Py_TYPE(r.ptr())->tp_name));
}

dbg::NodeTarget target_of(std::optional<uint64_t> sequence_nr, std::optional<uint64_t> node_id) {
  if (sequence_nr.has_value() == node_id.has_value())
    throw py::value_error("run_to: pass exactly one of sequence_nr= and node_id=");
  return sequence_nr ? dbg::NodeTarget::sequence_nr(*sequence_nr) : dbg::NodeTarget::id(*node_id);
}

std::string hex(uint64_t v) { return fmt::format("0x{:x}", v); }

std::string py_repr(py::handle h) { return py::repr(h).cast<std::string>(); }
std::string quoted(const std::string& s) { return py_repr(py::str(s)); }

std::string shape_text(const rt::Shape& s) { return py_repr(make_size(s)); }

py::list shapes(const std::vector<rt::Shape>& v) {
  py::list l;
  for (const auto& s : v) l.append(make_size(s));
  return l;
}

void bind_stats(py::module_& m) {
  py::class_<dbg::Histogram>(m, "Histogram")
      .def_readonly("lo", &dbg::Histogram::lo)
      .def_readonly("hi", &dbg::Histogram::hi)
      .def_readonly("counts", &dbg::Histogram::counts)
      .def_property_readonly("edges",
                             [](const dbg::Histogram& h) {
                               std::vector<double> e;
                               for (size_t i = 0; i < h.counts.size(); ++i) e.push_back(h.bin_lo(i));
                               if (!h.counts.empty()) e.push_back(h.hi);
                               return e;
                             })
      .def("__len__", [](const dbg::Histogram& h) { return h.counts.size(); })
      .def("__repr__", [](const dbg::Histogram& h) {
        return fmt::format("Histogram(lo={:.6g}, hi={:.6g}, counts=[{}])", h.lo, h.hi, fmt::join(h.counts, ", "));
      });

  py::class_<dbg::GradientStats>(m, "GradientStats")
      .def_readonly("defined", &dbg::GradientStats::defined)
      .def_property_readonly("shape", [](const dbg::GradientStats& s) { return make_size(s.shape); })
      .def_readonly("dtype", &dbg::GradientStats::dtype)
      .def_readonly("numel", &dbg::GradientStats::numel)
      .def_readonly("norm", &dbg::GradientStats::norm)
      .def_readonly("min", &dbg::GradientStats::min)
      .def_readonly("max", &dbg::GradientStats::max)
      .def_readonly("mean", &dbg::GradientStats::mean)
      .def_readonly("nan_count", &dbg::GradientStats::nan_count)
      .def_readonly("inf_count", &dbg::GradientStats::inf_count)
      .def_property_readonly("finite_count", &dbg::GradientStats::finite_count)
      .def_readonly("histogram", &dbg::GradientStats::histogram)
      .def("__repr__", [](const dbg::GradientStats& s) {
        if (!s.defined) return std::string("GradientStats(None)");
        return fmt::format("GradientStats(shape={}, dtype=rustytorch.{}, norm={:.6g}, min={:.6g}, max={:.6g}, "
                           "mean={:.6g}, nan_count={}, inf_count={})",
                           shape_text(s.shape), rt::dtype_name(s.dtype), s.norm, s.min, s.max, s.mean, s.nan_count,
                           s.inf_count);
      });

  m.def(
      "gradient_stats", [](const rt::Tensor& t, int bins) { return dbg::gradient_stats(t, bins); }, py::arg("tensor"),
      py::arg("bins") = 32);
}

void bind_paused_state(py::module_& m) {
  py::class_<dbg::NodeInfo>(m, "NodeInfo")
      .def_readonly("id", &dbg::NodeInfo::id)
      .def_readonly("name", &dbg::NodeInfo::name)
      .def_readonly("sequence_nr", &dbg::NodeInfo::sequence_nr)
      .def_readonly("forward_op", &dbg::NodeInfo::forward_op)
      .def_readonly("module", &dbg::NodeInfo::module)
      .def_readonly("is_leaf", &dbg::NodeInfo::is_leaf)
      .def("__str__", &dbg::NodeInfo::str)
      .def("__repr__", [](const dbg::NodeInfo& n) {
        return fmt::format("NodeInfo(name={}, sequence_nr={}, forward_op={}, module={}, id={})", quoted(n.name),
                           n.sequence_nr, quoted(n.forward_op), quoted(n.module), hex(n.id));
      });

  py::class_<dbg::PausedState>(m, "PausedState")
      .def_readonly("node", &dbg::PausedState::node)
      .def_readonly("index", &dbg::PausedState::index)
      .def_readonly("num_nodes", &dbg::PausedState::num_nodes)
      .def_readonly("backward", &dbg::PausedState::backward)
      .def_property_readonly("phase", [](const dbg::PausedState& s) { return std::string(dbg::phase_name(s.phase)); })
      .def_property_readonly("reason", [](const dbg::PausedState& s) { return std::string(dbg::reason_name(s.reason)); })
      .def_readonly("breakpoints", &dbg::PausedState::breakpoints)
      .def_readonly("description", &dbg::PausedState::description)
      .def_readonly("grad_outputs", &dbg::PausedState::grad_outputs)
      .def_readonly("grad_inputs", &dbg::PausedState::grad_inputs)
      .def_readonly("order", &dbg::PausedState::order)
      .def("__str__", &dbg::PausedState::str)
      .def("__repr__", [](const dbg::PausedState& s) {
        return fmt::format("PausedState(node={}, index={}, phase='{}', reason='{}', description={})",
                           quoted(s.node.str()), s.index, dbg::phase_name(s.phase), dbg::reason_name(s.reason),
                           quoted(s.description));
      });

  py::class_<dbg::Action>(m, "Action")
      .def_static("step", &dbg::Action::step)
      .def_static("step_over", &dbg::Action::step_over_module)
      .def_static("continue_", &dbg::Action::resume)
      .def_static("stop", &dbg::Action::stop)
      .def_static(
          "run_to",
          [](std::optional<uint64_t> sequence_nr, std::optional<uint64_t> node_id) {
            return dbg::Action::run_to(target_of(sequence_nr, node_id));
          },
          py::kw_only(), py::arg("sequence_nr") = py::none(), py::arg("node_id") = py::none())
      .def_property_readonly("kind", [](const dbg::Action& a) { return std::string(dbg::action_name(a.kind)); })
      .def("__repr__", [](const dbg::Action& a) {
        if (a.kind == dbg::Action::Kind::Continue) return std::string("Action.continue_()");
        if (a.kind != dbg::Action::Kind::RunToNode) return fmt::format("Action.{}()", dbg::action_name(a.kind));
        return a.target.by == dbg::NodeTarget::By::Id ? fmt::format("Action.run_to(node_id={})", hex(a.target.value))
                                                      : fmt::format("Action.run_to(sequence_nr={})", a.target.value);
      });

  py::class_<dbg::Breakpoint>(m, "Breakpoint")
      .def_readonly("id", &dbg::Breakpoint::id)
      .def_property_readonly("kind", [](const dbg::Breakpoint& b) { return std::string(dbg::kind_name(b.kind)); })
      .def_readonly("pattern", &dbg::Breakpoint::pattern)
      .def_readonly("threshold", &dbg::Breakpoint::threshold)
      .def_readonly("enabled", &dbg::Breakpoint::enabled)
      .def_readonly("hits", &dbg::Breakpoint::hits)
      .def("__str__", &dbg::Breakpoint::str)
      .def("__repr__", [](const dbg::Breakpoint& b) {
        std::string what = b.kind == dbg::BreakpointKind::GradNorm ? fmt::format(", threshold={:g}", b.threshold)
                           : b.pattern.empty()                     ? ""
                                                                   : ", pattern=" + quoted(b.pattern);
        return fmt::format("Breakpoint(id={}, kind='{}'{}, enabled={}, hits={})", b.id, dbg::kind_name(b.kind), what,
                           b.enabled ? "True" : "False", b.hits);
      });
}

void bind_debugger(py::module_& m) {
  using D = dbg::BackwardDebugger;
  using release = py::call_guard<py::gil_scoped_release>;
  py::register_exception<dbg::BackwardStopped>(m, "BackwardStopped", PyExc_RuntimeError);
  py::class_<D>(m, "BackwardDebugger")
      .def(py::init<>())
      .def("attach", &D::attach)
      .def("detach", &D::detach, release())
      .def_property_readonly("attached", &D::attached)
      .def("break_on_non_finite", &D::break_on_non_finite)
      .def("break_on_op", &D::break_on_op, py::arg("op"))
      .def("break_on_module", &D::break_on_module, py::arg("prefix"))
      .def("break_on_grad_norm", &D::break_on_grad_norm, py::arg("threshold"))
      .def("set_breakpoint_enabled", &D::set_breakpoint_enabled, py::arg("id"), py::arg("enabled"))
      .def("remove_breakpoint", &D::remove_breakpoint, py::arg("id"))
      .def("clear_breakpoints", &D::clear_breakpoints)
      .def_property_readonly("breakpoints", &D::breakpoints)
      .def("set_pause_at_start", &D::set_pause_at_start, py::arg("on"))
      .def(
          "on_break",
          [](D& d, py::object fn) {
            if (fn.is_none()) return d.on_break(nullptr);
            if (!PyCallable_Check(fn.ptr()))
              throw py::type_error(fmt::format("on_break: expected a callable, got {}", Py_TYPE(fn.ptr())->tp_name));
            d.on_break([f = share(std::move(fn))](const dbg::PausedState& s) {
              py::gil_scoped_acquire gil;
              py::object r = (*f)(dbg::PausedState(s));
              return to_action(r);
            });
          },
          py::arg("handler"))
      .def("step", &D::step)
      .def("step_over", &D::step_over_module)
      .def("resume", &D::resume)
      .def(
          "run_to",
          [](D& d, std::optional<uint64_t> sequence_nr, std::optional<uint64_t> node_id) {
            return d.run_to(target_of(sequence_nr, node_id));
          },
          py::kw_only(), py::arg("sequence_nr") = py::none(), py::arg("node_id") = py::none())
      .def("stop", &D::stop)
      .def("pause", &D::pause)
      .def_property_readonly("paused_state", &D::paused_state)
      .def_property_readonly("running", &D::running)
      .def(
          "wait_for_pause",
          [](D& d, std::optional<double> timeout) {
            const double seconds = timeout.value_or(365.0 * 24 * 3600);
            if (!(seconds >= 0)) throw py::value_error("wait_for_pause: timeout must be >= 0 seconds or None");
            py::gil_scoped_release nogil;
            return d.wait_for_pause(std::chrono::milliseconds(int64_t(seconds * 1000)));
          },
          py::arg("timeout") = py::none())
      .def_property_readonly("execution_order", &D::execution_order)
      .def_property_readonly("backward_count", &D::backward_count);
}

void bind_graph(py::module_& m) {
  py::class_<GraphNodeInfo>(m, "GraphNode")
      .def_readonly("id", &GraphNodeInfo::id)
      .def_readonly("name", &GraphNodeInfo::name)
      .def_readonly("sequence_nr", &GraphNodeInfo::sequence_nr)
      .def_readonly("forward_op", &GraphNodeInfo::forward_op)
      .def_readonly("module", &GraphNodeInfo::module)
      .def_property_readonly("output_shapes", [](const GraphNodeInfo& n) { return shapes(n.output_shapes); })
      .def_readonly("is_leaf", &GraphNodeInfo::is_leaf)
      .def_property_readonly("leaf_shape",
                             [](const GraphNodeInfo& n) -> py::object {
                               return n.is_leaf ? make_size(n.leaf_shape) : py::none();
                             })
      .def("__repr__", [](const GraphNodeInfo& n) {
        if (n.is_leaf) return fmt::format("GraphNode(AccumulateGrad, shape={}, id={})", shape_text(n.leaf_shape), hex(n.id));
        return fmt::format("GraphNode({}, sequence_nr={}, forward_op={}, module={}, id={})", n.name, n.sequence_nr,
                           quoted(n.forward_op), quoted(n.module), hex(n.id));
      });
  py::class_<GraphEdgeInfo>(m, "GraphEdge")
      .def_readonly("from_", &GraphEdgeInfo::from)
      .def_readonly("to", &GraphEdgeInfo::to)
      .def_readonly("input_nr", &GraphEdgeInfo::input_nr)
      .def_property_readonly("shape", [](const GraphEdgeInfo& e) { return make_size(e.shape); })
      .def("__repr__", [](const GraphEdgeInfo& e) {
        return fmt::format("GraphEdge({} -> {}, input_nr={}, shape={})", hex(e.from), hex(e.to), e.input_nr,
                           shape_text(e.shape));
      });
  py::class_<GraphSnapshot>(m, "GraphSnapshot")
      .def_readonly("nodes", &GraphSnapshot::nodes)
      .def_readonly("edges", &GraphSnapshot::edges)
      .def("__repr__", [](const GraphSnapshot& g) {
        return fmt::format("GraphSnapshot(nodes={}, edges={})", g.nodes.size(), g.edges.size());
      });
  m.def(
      "snapshot_graph",
      [](py::handle roots) {
        rt::TensorList list;
        if (is_tensor(roots)) {
          list.push_back(unwrap(roots));
        } else {
          for (py::handle h : py::reinterpret_borrow<py::iterable>(roots)) {
            if (!is_tensor(h))
              throw py::type_error(fmt::format("graph: expected a Tensor or Tensors, got {}", Py_TYPE(h.ptr())->tp_name));
            list.push_back(unwrap(h));
          }
        }
        return rt::autograd::snapshot_graph(list);
      },
      py::arg("tensors"));
}

void bind_history(py::module_& m) {
  py::class_<dbg::ParameterGradNorm>(m, "ParameterGradNorm")
      .def_readonly("name", &dbg::ParameterGradNorm::name)
      .def_readonly("has_grad", &dbg::ParameterGradNorm::has_grad)
      .def_readonly("norm", &dbg::ParameterGradNorm::norm)
      .def_readonly("running_median", &dbg::ParameterGradNorm::running_median)
      .def_readonly("vanishing", &dbg::ParameterGradNorm::vanishing)
      .def_readonly("exploding", &dbg::ParameterGradNorm::exploding)
      .def("__repr__", [](const dbg::ParameterGradNorm& p) {
        std::string flags = p.vanishing ? ", vanishing" : p.exploding ? ", exploding" : "";
        return fmt::format("ParameterGradNorm({}, norm={:.6g}{})", quoted(p.name), p.norm, flags);
      });
  py::class_<dbg::GradNormStep>(m, "GradNormStep")
      .def_readonly("step", &dbg::GradNormStep::step)
      .def_readonly("params", &dbg::GradNormStep::params)
      .def_property_readonly("vanishing", &dbg::GradNormStep::vanishing)
      .def_property_readonly("exploding", &dbg::GradNormStep::exploding)
      .def("__repr__", [](const dbg::GradNormStep& s) {
        return fmt::format("GradNormStep(step={}, params={}, vanishing=[{}], exploding=[{}])", s.step, s.params.size(),
                           fmt::join(s.vanishing(), ", "), fmt::join(s.exploding(), ", "));
      });
  py::class_<dbg::GradNormHistory>(m, "GradNormHistory")
      .def(py::init([](double vanishing_below, double exploding_above, double exploding_ratio, size_t median_window,
                       size_t min_history) {
             return dbg::GradNormHistory(
                 {vanishing_below, exploding_above, exploding_ratio, median_window, min_history});
           }),
           py::kw_only(), py::arg("vanishing_below") = 1e-7, py::arg("exploding_above") = 1e3,
           py::arg("exploding_ratio") = 10.0, py::arg("median_window") = 100, py::arg("min_history") = 3)
      .def(
          "record",
          [](dbg::GradNormHistory& h, py::iterable named) {
            std::vector<std::pair<std::string, rt::Tensor>> params;
            for (py::handle item : named) {
              auto pair = py::reinterpret_borrow<py::sequence>(item);
              if (pair.size() != 2 || !is_tensor(pair[1]))
                throw py::type_error("GradNormHistory.record: expected (name, Tensor) pairs, e.g. "
                                     "model.named_parameters()");
              params.emplace_back(py::str(pair[0]).cast<std::string>(), unwrap(pair[1]));
            }
            return h.record(params);
          },
          py::arg("named_parameters"))
      .def_property_readonly("steps", &dbg::GradNormHistory::steps)
      .def("series", &dbg::GradNormHistory::series, py::arg("name"))
      .def("clear", &dbg::GradNormHistory::clear)
      .def("__len__", [](const dbg::GradNormHistory& h) { return h.steps().size(); });
}

}  // namespace

void bind_debug(py::module_& m) {
  bind_stats(m);
  bind_paused_state(m);
  bind_debugger(m);
  bind_graph(m);
  bind_history(m);
}

}  // namespace rtpy
