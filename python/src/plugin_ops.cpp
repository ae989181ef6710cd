// rt.ops: plugin ops from Python (the C++ side of rustytorch/ops.py).
//   _C._ops.load_library(path or id) -> {"id", "version", "namespaces", "ops"}   (rt::plugin::load_plugin)
//   _C._ops.registered()       -> [{"name", "namespace", "schema", "plugin", ...}, ...]
//   _C._ops.call("rtx::fused_bias_gelu", x, b)                           (rt::plugin::call_op)
// Arguments bind as Python binds them: positionally, then by keyword, then the schema's defaults; each must
// have its schema type (TypeError naming the op and the argument otherwise).
#include <fmt/format.h>

#include <filesystem>

#include "bind.h"
#include "rt/plugin_host/manifest.h"
#include "rt/plugin_host/op_registry.h"
#include "rt/plugin_host/plugin_manager.h"

namespace rtpy {
namespace {

namespace rp = rt::plugin;

std::string python_type(py::handle h) { return Py_TYPE(h.ptr())->tp_name; }

rp::OpValue to_op_value(const rp::OpInfo& op, size_t i, py::handle h) {
  const rp::OpArgument& a = op.schema.arguments[i];
  auto wrong = [&] {
    return py::type_error(fmt::format("{}(): argument '{}' (position {}) must be {}, not {}", op.qualified_name,
                                      a.name, i + 1, rp::arg_type_name(a.type), python_type(h)));
  };
  switch (a.type) {
    case rp::ArgType::Tensor:
      if (!is_tensor(h)) throw wrong();
      return unwrap(h);
    case rp::ArgType::OptionalTensor:
      if (h.is_none()) return std::monostate{};
      if (!is_tensor(h)) throw wrong();
      return unwrap(h);
    case rp::ArgType::Float:
      if (PyBool_Check(h.ptr())) throw wrong();
      if (PyFloat_Check(h.ptr())) return PyFloat_AsDouble(h.ptr());
      if (PyLong_Check(h.ptr())) return double(h.cast<int64_t>());
      throw wrong();
    case rp::ArgType::Int:
      if (PyBool_Check(h.ptr()) || !PyLong_Check(h.ptr())) throw wrong();
      return h.cast<int64_t>();
    case rp::ArgType::Bool:
      if (!PyBool_Check(h.ptr())) throw wrong();
      return h.ptr() == Py_True;
  }
  throw wrong();
}

std::vector<rp::OpValue> bind_call(const rp::OpInfo& op, const py::args& args, const py::kwargs& kwargs) {
  const auto& params = op.schema.arguments;
  if (args.size() > params.size())
    throw py::type_error(fmt::format("{}() takes {} argument{} ({}) but {} were given", op.qualified_name,
                                     params.size(), params.size() == 1 ? "" : "s", op.schema.str(), args.size()));
  for (auto item : kwargs) {
    const std::string key = py::str(item.first);
    auto it = std::find_if(params.begin(), params.end(), [&](const rp::OpArgument& a) { return a.name == key; });
    if (it == params.end())
      throw py::type_error(fmt::format("{}() got an unexpected keyword argument '{}' ({})", op.qualified_name, key,
                                       op.schema.str()));
    if (size_t(it - params.begin()) < args.size())
      throw py::type_error(fmt::format("{}() got multiple values for argument '{}'", op.qualified_name, key));
  }
  std::vector<rp::OpValue> values;
  for (size_t i = 0; i < params.size(); ++i) {
    if (i < args.size()) {
      values.push_back(to_op_value(op, i, args[i]));
    } else if (kwargs.contains(params[i].name)) {
      values.push_back(to_op_value(op, i, kwargs[py::str(params[i].name)]));
    } else if (params[i].default_value) {
      std::visit([&](const auto& d) { values.emplace_back(d); }, *params[i].default_value);
    } else {
      throw py::type_error(fmt::format("{}() missing required argument '{}' (position {}) ({})", op.qualified_name,
                                       params[i].name, i + 1, op.schema.str()));
    }
  }
  return values;
}

const rp::OpInfo& op_named(const std::string& name) {
  const rp::OpInfo* op = rp::find_op(name);
  if (!op) {
    std::string known;
    for (const rp::OpInfo* o : rp::registered_ops()) known += (known.empty() ? "" : ", ") + o->qualified_name;
    throw py::value_error(fmt::format("no plugin op named '{}' (registered: {}); load its plugin with "
                                      "rt.ops.load_library(path)",
                                      name, known.empty() ? "none" : known));
  }
  return *op;
}

// A path as given; a plugin id ("org.rustytorch.fused-bias-gelu"), where no such path exists, is looked up in
// the plugin search paths (rt::plugin::default_search_paths) by each folder's plugin.json.
std::filesystem::path resolve_plugin(const std::string& path_or_id) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(path_or_id, ec) || path_or_id.find('/') != std::string::npos ||
      path_or_id.find('.') == std::string::npos)
    return path_or_id;
  std::string searched;
  for (const fs::path& dir : rp::default_search_paths()) {
    searched += (searched.empty() ? "" : ", ") + dir.string();
    if (!fs::is_directory(dir, ec)) continue;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
      const fs::path manifest = entry.path() / "plugin.json";
      if (!fs::exists(manifest, ec)) continue;
      try {
        if (rp::read_manifest(manifest).id == path_or_id) return entry.path();
      } catch (const rp::ManifestError&) {
        // a broken manifest is another plugin's problem; `rtorch plugin list` shows it
      }
    }
  }
  throw py::value_error(fmt::format("rt.ops.load_library: '{}' is neither a path nor the id of a plugin in the "
                                    "search paths ({}); pass the plugin's folder, its plugin.json or its library",
                                    path_or_id, searched.empty() ? "none" : searched));
}

py::dict describe(const rp::OpInfo& op) {
  py::dict d;
  d["name"] = op.qualified_name;
  d["namespace"] = op.ns;
  d["op"] = op.schema.name;
  d["schema"] = op.schema.str();
  d["doc"] = op.doc;
  d["plugin"] = op.plugin_id;
  d["devices"] = op.devices();
  d["differentiable"] = op.differentiable();
  std::vector<std::string> backward_devices;
  if (op.has_backward(RT_DEVICE_CPU)) backward_devices.push_back("cpu");
  if (op.has_backward(RT_DEVICE_CUDA)) backward_devices.push_back("cuda");
  d["backward_devices"] = backward_devices;
  d["backward_node"] = op.backward_name;
  d["autocast"] = op.autocast_policy_name();
  std::vector<std::string> args;
  for (const auto& a : op.schema.arguments) args.push_back(a.name);
  d["arguments"] = args;
  return d;
}

}  // namespace

void bind_plugin_ops(py::module_& m) {
  m.def(
      "load_library",
      [](const std::string& path_or_id) {
        const std::filesystem::path path = resolve_plugin(path_or_id);
        const rp::PluginRecord* record;
        {
          py::gil_scoped_release release;
          record = &rp::load_plugin(path);
        }
        py::dict d;
        d["id"] = record->manifest.id;
        d["version"] = record->manifest.version.str();
        d["folder"] = record->manifest.folder().string();
        py::list ops;
        std::vector<std::string> namespaces;
        for (const rp::OpInfo* op : rp::registered_ops()) {
          if (op->plugin_id != record->manifest.id) continue;
          ops.append(op->qualified_name);
          if (std::find(namespaces.begin(), namespaces.end(), op->ns) == namespaces.end()) namespaces.push_back(op->ns);
        }
        d["ops"] = ops;
        d["namespaces"] = namespaces;
        return d;
      },
      py::arg("path"));
  m.def("registered", [] {
    py::list out;
    for (const rp::OpInfo* op : rp::registered_ops()) out.append(describe(*op));
    return out;
  });
  m.def("describe", [](const std::string& name) { return describe(op_named(name)); }, py::arg("name"));
  m.def("call", [](const std::string& name, py::args args, py::kwargs kwargs) -> py::object {
    const rp::OpInfo& op = op_named(name);
    std::vector<rp::OpValue> values = bind_call(op, args, kwargs);
    // The GIL stays held, as for the engine's own ops: observers and anomaly mode may call back into Python.
    const std::vector<rt::Tensor> results = rp::call_op(op, values);
    if (!op.schema.tuple_returns) {
      if (results.empty()) return py::none();
      return wrap(results[0]);
    }
    py::tuple t(results.size());
    for (size_t i = 0; i < results.size(); ++i) t[i] = wrap(results[i]);
    return t;
  });
}

}  // namespace rtpy
