#include "rt/plugin_host/op_registry.h"

#include <fmt/format.h>

#include <cctype>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>

#include "rt/op_origin.h"

namespace rt::plugin {
namespace {

// Entries are never removed: op libraries stay loaded, and call sites keep OpInfo pointers and the
// qualified names' c_str() (what rt::OpGuard and the profiler hold) for the whole process.
struct Registry {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<OpInfo>, std::less<>> ops;
};
Registry& registry() {
  static auto* r = new Registry;  // leaked: ops may be called while static destructors run
  return *r;
}

bool valid_namespace(std::string_view ns) {
  if (ns.empty() || std::isdigit(static_cast<unsigned char>(ns[0]))) return false;
  for (char c : ns)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

// The plugin's RtOpDef, read no further than the struct_size it declared (an older minor's table is shorter).
RtOpDef copy_def(const RtOpDef& src) {
  RtOpDef d;
  std::memset(&d, 0, sizeof d);
  std::memcpy(&d, &src, std::min<size_t>(src.struct_size, sizeof d));
  d.struct_size = sizeof d;
  return d;
}

std::unique_ptr<OpInfo> make_op(const RtOpLibrary& library, const RtOpDef& raw, size_t index,
                                const std::string& plugin_id) {
  const std::string where = fmt::format("plugin {}: op {} of namespace '{}'", plugin_id, index, library.ns);
  if (raw.struct_size < offsetof(RtOpDef, backward))
    throw std::runtime_error(fmt::format("{}: RtOpDef.struct_size {} is too small (at least {}: schema and kernels)",
                                         where, raw.struct_size, offsetof(RtOpDef, backward)));
  auto op = std::make_unique<OpInfo>();
  op->def = copy_def(raw);
  if (!op->def.schema) throw std::runtime_error(where + ": its schema is NULL");
  try {
    op->schema = parse_op_schema(op->def.schema);
  } catch (const OpSchemaError& e) {
    throw std::runtime_error(fmt::format("{}: {}", where, e.what()));
  }
  op->ns = library.ns;
  op->qualified_name = op->ns + "::" + op->schema.name;
  op->plugin_id = plugin_id;
  op->doc = op->def.doc ? op->def.doc : "";
  op->backward_name = backward_node_name(op->schema.name);
  const std::string named = fmt::format("plugin {}: {}", plugin_id, op->qualified_name);
  if (!op->has_kernel(RT_DEVICE_CPU) && !op->has_kernel(RT_DEVICE_CUDA))
    throw std::runtime_error(named + ": no kernel for any device (set kernels[RT_DEVICE_CPU] or kernels[RT_DEVICE_CUDA])");
  if (op->def.autocast < RT_AUTOCAST_NONE || op->def.autocast > RT_AUTOCAST_PROMOTE)
    throw std::runtime_error(fmt::format("{}: autocast policy {} is not an RtAutocastPolicy (0 to 3)", named,
                                         op->def.autocast));
  for (const OpArgument& a : op->schema.arguments)
    if (a.alias.write && a.type != ArgType::Tensor)
      throw std::runtime_error(fmt::format("{}: argument '{}' is written ((a!)) but is not a Tensor", named, a.name));
  if (op->schema.returns.empty() && op->schema.mutated_arguments().empty())
    throw std::runtime_error(named + ": returns nothing and writes no argument, so calling it has no effect");
  return op;
}

}  // namespace

bool OpInfo::differentiable() const { return has_backward(RT_DEVICE_CPU) || has_backward(RT_DEVICE_CUDA); }

std::vector<std::string> OpInfo::devices() const {
  std::vector<std::string> out;
  if (has_kernel(RT_DEVICE_CPU)) out.push_back("cpu");
  if (has_kernel(RT_DEVICE_CUDA)) out.push_back("cuda");
  return out;
}

const char* OpInfo::autocast_policy_name() const {
  switch (def.autocast) {
    case RT_AUTOCAST_LOWER_PRECISION: return "lower_precision";
    case RT_AUTOCAST_FP32: return "fp32";
    case RT_AUTOCAST_PROMOTE: return "promote";
    default: return "none";
  }
}

std::string backward_node_name(std::string_view op_name) {
  std::string out;
  bool upper = true;
  for (char c : op_name) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? char(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out + "Backward0";
}

void register_op_library(const RtOpLibrary& library, const std::string& plugin_id) {
  if (library.struct_size < offsetof(RtOpLibrary, num_ops) + sizeof(library.num_ops))
    throw std::runtime_error(fmt::format("plugin {}: RtOpLibrary.struct_size {} is too small (at least {})", plugin_id,
                                         library.struct_size, offsetof(RtOpLibrary, num_ops) + sizeof(library.num_ops)));
  if (!library.ns || !valid_namespace(library.ns))
    throw std::runtime_error(fmt::format("plugin {}: op namespace '{}' must be lowercase letters, digits and '_', "
                                         "not starting with a digit",
                                         plugin_id, library.ns ? library.ns : "(NULL)"));
  if (library.num_ops > 0 && !library.ops)
    throw std::runtime_error(fmt::format("plugin {}: RtOpLibrary '{}' has {} ops but `ops` is NULL", plugin_id,
                                         library.ns, library.num_ops));
  // The array's stride is the plugin's sizeof(RtOpDef), which its first entry declares.
  const size_t stride = library.num_ops > 0 ? library.ops[0].struct_size : 0;
  std::vector<std::unique_ptr<OpInfo>> ops;
  std::set<std::string> names;
  for (size_t i = 0; i < library.num_ops; ++i) {
    const auto* raw = reinterpret_cast<const RtOpDef*>(reinterpret_cast<const char*>(library.ops) + i * stride);
    if (raw->struct_size != stride)
      throw std::runtime_error(fmt::format("plugin {}: RtOpDef {} of '{}' declares struct_size {}, the first {}",
                                           plugin_id, i, library.ns, raw->struct_size, stride));
    auto op = make_op(library, *raw, i, plugin_id);
    if (!names.insert(op->qualified_name).second)
      throw std::runtime_error(fmt::format("plugin {}: op {} is defined twice", plugin_id, op->qualified_name));
    ops.push_back(std::move(op));
  }
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  for (const auto& op : ops)
    if (auto it = r.ops.find(op->qualified_name); it != r.ops.end())
      throw std::runtime_error(fmt::format("plugin {}: op {} exists already (registered by {})", plugin_id,
                                           op->qualified_name, it->second->plugin_id));
  for (auto& op : ops) {
    rt::set_op_origin(op->qualified_name, plugin_id);
    std::string name = op->qualified_name;
    r.ops.emplace(std::move(name), std::move(op));
  }
}

const OpInfo* find_op(std::string_view qualified_name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  auto it = r.ops.find(qualified_name);
  return it == r.ops.end() ? nullptr : it->second.get();
}

std::vector<const OpInfo*> registered_ops() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  std::vector<const OpInfo*> out;
  for (const auto& [name, op] : r.ops) out.push_back(op.get());
  return out;
}

std::vector<std::string> registered_namespaces() {
  std::set<std::string> ns;
  for (const OpInfo* op : registered_ops()) ns.insert(op->ns);
  return {ns.begin(), ns.end()};
}

}  // namespace rt::plugin
