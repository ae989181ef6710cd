// Grad mode, anomaly mode, backward/grad, tensor hooks and the grad_fn graph (Node).
// Hooks hold Python callables inside engine std::functions that may be copied or destroyed
// while the GIL is released (backward runs without it), so every touch takes the GIL.
#include <fmt/format.h>

#include "rt/autograd/custom_function.h"

#include "bind.h"

namespace rtpy {

namespace {
// A Python object whose last reference may be dropped on any thread.
std::shared_ptr<py::object> share(py::object o) {
  return std::shared_ptr<py::object>(new py::object(std::move(o)), [](py::object* p) {
    if (!Py_IsInitialized()) return;
    py::gil_scoped_acquire gil;
    delete p;
  });
}

rt::TensorList tensors_arg(py::handle h, const char* what) {
  rt::TensorList out;
  if (h.is_none()) return out;
  if (is_tensor(h)) return {unwrap(h)};
  for (py::handle e : py::reinterpret_borrow<py::sequence>(h)) {
    if (e.is_none()) out.emplace_back();
    else if (is_tensor(e)) out.push_back(unwrap(e));
    else throw py::type_error(fmt::format("{}: expected Tensors, got {}", what, Py_TYPE(e.ptr())->tp_name));
  }
  return out;
}

// What Node.register_hook / register_prehook return: remove() unhooks (the C++ hook stays, inert).
struct NodeHookHandle {
  std::shared_ptr<bool> removed = std::make_shared<bool>(false);
};

py::tuple as_tuple(const rt::TensorList& grads) {
  py::tuple t(grads.size());
  for (size_t i = 0; i < grads.size(); ++i) t[i] = wrap(grads[i]);
  return t;
}

// A node hook's result: None keeps `grads`; a sequence of as many Tensors/None replaces them.
void replace_from_hook(const rt::autograd::Node& node, const char* kind, const py::object& result,
                       rt::TensorList& grads) {
  if (result.is_none()) return;
  if (!py::isinstance<py::sequence>(result) || py::isinstance<py::str>(result))
    throw py::type_error(fmt::format("a {} of {} must return None or a tuple of gradients, got {}", kind, node.name(),
                                     Py_TYPE(result.ptr())->tp_name));
  rt::TensorList replaced = tensors_arg(result, kind);
  if (replaced.size() != grads.size())
    throw py::value_error(fmt::format("a {} of {} returned {} gradients; expected {}", kind, node.name(),
                                      replaced.size(), grads.size()));
  grads = std::move(replaced);
}

py::tuple next_functions(const rt::autograd::Node& n) {
  py::tuple t(n.next_edges().size());
  for (size_t i = 0; i < n.next_edges().size(); ++i) {
    const auto& e = n.next_edges()[i];
    t[i] = py::make_tuple(e.function ? py::cast(e.function) : py::none(), e.input_nr);
  }
  return t;
}
}  // namespace

void bind_autograd(py::module_& m) {
  m.def("is_grad_enabled", &rt::GradMode::is_enabled);
  m.def("_set_grad_enabled", &rt::GradMode::set_enabled, py::arg("mode"));
  m.def("is_anomaly_enabled", &rt::AnomalyMode::is_enabled);
  m.def("_set_anomaly_enabled", &rt::AnomalyMode::set_enabled, py::arg("mode"));

  m.def(
      "_backward",
      [](py::handle tensors, py::handle grad_tensors, bool retain_graph) {
        rt::TensorList roots = tensors_arg(tensors, "backward"), grads = tensors_arg(grad_tensors, "backward");
        run_long([&] { rt::autograd::backward(roots, grads, retain_graph); });
      },
      py::arg("tensors"), py::arg("grad_tensors") = py::none(), py::arg("retain_graph") = false);
  m.def(
      "_grad",
      [](py::handle outputs, py::handle inputs, py::handle grad_outputs, bool retain_graph, bool create_graph,
         bool allow_unused) {
        rt::TensorList outs = tensors_arg(outputs, "grad"), ins = tensors_arg(inputs, "grad"),
                       gouts = tensors_arg(grad_outputs, "grad");
        rt::TensorList r = run_long([&] {
          return rt::autograd::grad(outs, ins, gouts, retain_graph, create_graph, allow_unused);
        });
        py::tuple t(r.size());
        for (size_t i = 0; i < r.size(); ++i) t[i] = wrap(r[i]);
        return t;
      },
      py::arg("outputs"), py::arg("inputs"), py::arg("grad_outputs") = py::none(), py::arg("retain_graph") = false,
      py::arg("create_graph") = false, py::arg("allow_unused") = false);

  // rt.autograd.Function's node (function.py): `backward` takes one gradient per output (None where
  // there is none and materialize_grads is off) and returns one Tensor or None per input;
  // `release_saved` frees the saved tensors after a backward without retain_graph.
  m.def(
      "_record_custom_function",
      [](std::string name, py::handle inputs, py::handle outputs, py::function backward, bool materialize_grads,
         std::string forward_name, py::function release_saved, py::object ctx) {
        rt::TensorList ins = tensors_arg(inputs, "_record_custom_function"),
                       outs = tensors_arg(outputs, "_record_custom_function");
        auto fn = share(std::move(backward));
        const size_t n_inputs = ins.size();
        auto body = [fn, n_inputs, name](const rt::TensorList& grads) -> rt::TensorList {
          py::gil_scoped_acquire gil;
          py::object r = (*fn)(*as_tuple(grads));
          rt::TensorList out = tensors_arg(r, name.c_str());
          if (out.size() != n_inputs)
            throw rt::AutogradError(fmt::format("{} returned {} gradients; expected {}", name, out.size(), n_inputs));
          return out;
        };
        auto release = [f = share(std::move(release_saved))] {
          py::gil_scoped_acquire gil;
          (*f)();
        };
        return std::static_pointer_cast<rt::autograd::Node>(rt::autograd::record_custom_function(
            std::move(name), ins, outs, std::move(body),
            {materialize_grads, std::move(forward_name), std::move(release), share(std::move(ctx))}));
      },
      py::arg("name"), py::arg("inputs"), py::arg("outputs"), py::arg("backward"), py::arg("materialize_grads"),
      py::arg("forward_name"), py::arg("release_saved"), py::arg("ctx"));

  // A tensor saved for backward: unpack() raises if it was modified in place since (Note [Saved
  // tensor versions]) and names the running node.
  py::class_<rt::autograd::SavedTensor>(m, "_SavedTensor")
      .def(py::init([](py::handle t) { return rt::autograd::SavedTensor(t.is_none() ? rt::Tensor() : unwrap(t)); }),
           py::arg("tensor"))
      .def("unpack", [](const rt::autograd::SavedTensor& s) { return wrap(s.unpack()); })
      .def("reset", &rt::autograd::SavedTensor::reset);

  TensorClass cls = tensor_class(m);
  cls.def(
      "backward",
      [](const rt::Tensor& t, py::handle gradient, py::handle retain_graph, bool create_graph) {
        if (create_graph)
          throw rt::NotImplementedError("backward(create_graph=True): higher-order gradients are not supported");
        rt::Tensor g = gradient.is_none() ? rt::Tensor() : unwrap(gradient);
        const bool retain = retain_graph.is_none() ? false : retain_graph.cast<bool>();
        run_long([&] { t.backward(g, retain); });
      },
      py::arg("gradient") = py::none(), py::arg("retain_graph") = py::none(), py::arg("create_graph") = false);
  cls.def(
      "_register_hook",
      [](const rt::Tensor& t, py::function fn) {
        auto f = share(std::move(fn));
        return t.register_hook([f](const rt::Tensor& g) -> rt::Tensor {
          py::gil_scoped_acquire gil;
          py::object r = (*f)(wrap(g));
          if (r.is_none()) return {};
          if (!is_tensor(r))
            throw rt::ValueError(fmt::format("a tensor hook must return None or a Tensor, got {}",
                                             Py_TYPE(r.ptr())->tp_name));
          return unwrap(r);
        });
      },
      py::arg("hook"));
  cls.def("_remove_hook", [](const rt::Tensor& t, size_t handle) { t.remove_hook(handle); }, py::arg("handle"));

  py::class_<NodeHookHandle>(m, "_NodeHookHandle")
      .def("remove", [](NodeHookHandle& h) { *h.removed = true; })
      .def("__enter__", [](py::handle self) { return py::reinterpret_borrow<py::object>(self); })
      .def("__exit__", [](NodeHookHandle& h, py::args) { *h.removed = true; });

  py::class_<rt::autograd::Node, std::shared_ptr<rt::autograd::Node>>(m, "Node")
      .def("name", &rt::autograd::Node::name)
      .def(
          "register_prehook",
          [](rt::autograd::Node& n, py::function fn) {
            NodeHookHandle handle;
            n.add_pre_hook([f = share(std::move(fn)), removed = handle.removed](const rt::autograd::Node& node,
                                                                                   rt::TensorList& grad_outputs) {
              if (*removed) return;
              py::gil_scoped_acquire gil;
              replace_from_hook(node, "prehook", (*f)(as_tuple(grad_outputs)), grad_outputs);
            });
            return handle;
          },
          py::arg("hook"))
      .def(
          "register_hook",
          [](rt::autograd::Node& n, py::function fn) {
            NodeHookHandle handle;
            n.add_post_hook([f = share(std::move(fn)), removed = handle.removed](
                                const rt::autograd::Node& node, rt::TensorList& grad_inputs,
                                const rt::TensorList& grad_outputs) {
              if (*removed) return;
              py::gil_scoped_acquire gil;
              replace_from_hook(node, "hook", (*f)(as_tuple(grad_inputs), as_tuple(grad_outputs)), grad_inputs);
            });
            return handle;
          },
          py::arg("hook"))
      .def("__getattr__",
           [](const rt::autograd::Node& n, const std::string& attr) -> py::object {
             // A custom function's node answers for its ctx, as torch's: y.grad_fn.saved_tensors, y.grad_fn.k
             const auto* custom = dynamic_cast<const rt::autograd::CustomFunctionNode*>(&n);
             const auto* ctx = custom ? std::any_cast<std::shared_ptr<py::object>>(&custom->context()) : nullptr;
             if (ctx && *ctx && attr.rfind("__", 0) != 0) return py::getattr(**ctx, attr.c_str());
             throw py::attribute_error(fmt::format("'{}' object has no attribute '{}'", n.name(), attr));
           })
      .def(
          "_register_post_accumulate_hook",
          [](rt::autograd::Node& n, py::function fn) {
            // AccumulateGrad only: runs after the leaf's .grad was updated, with the leaf (DDP's trigger).
            auto* acc = dynamic_cast<rt::autograd::AccumulateGrad*>(&n);
            if (!acc)
              throw py::type_error(fmt::format("{} is not an AccumulateGrad node: post-accumulate hooks belong to "
                                               "leaves (p.expand_as(p).grad_fn.next_functions[0][0])",
                                               n.name()));
            NodeHookHandle handle;
            acc->add_post_accumulate_hook([f = share(std::move(fn)), removed = handle.removed](const rt::Tensor& leaf) {
              if (*removed) return;
              py::gil_scoped_acquire gil;
              (*f)(wrap(leaf));
            });
            return handle;
          },
          py::arg("hook"))
      .def_property_readonly("next_functions", &next_functions)
      .def_property_readonly("_sequence_nr", &rt::autograd::Node::sequence_nr)
      .def_property_readonly("_forward_op", &rt::autograd::Node::forward_op)
      .def_property_readonly("_forward_module", &rt::autograd::Node::forward_module)
      .def_property_readonly("variable",
                             [](const rt::autograd::Node& n) -> py::object {
                               if (auto* acc = dynamic_cast<const rt::autograd::AccumulateGrad*>(&n))
                                 return wrap(acc->variable());
                               throw py::attribute_error(fmt::format("'{}' object has no attribute 'variable'", n.name()));
                             })
      .def("__repr__", [](py::handle self) {
        return fmt::format("<{} object at {}>", self.cast<rt::autograd::Node&>().name(), static_cast<void*>(self.ptr()));
      });
}

}  // namespace rtpy
