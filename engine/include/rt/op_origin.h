// rt/op_origin.h — where an op that is not the engine's own comes from: the plugin that registered it.
//
//   rt::set_op_origin("rtx::fused_bias_gelu", "org.rustytorch.fused-bias-gelu");   // the plugin host does this
//   rt::op_origin("rtx::fused_bias_gelu");   // "org.rustytorch.fused-bias-gelu"
//   rt::op_origin("matmul");                 // "": the engine's own
//
// Profilers record op names only (Note [Event recorder]); views and exporters ask here for the origin of a name
// (the Chrome trace export writes it as the op's "plugin" argument). Names are never removed: op libraries stay
// loaded for the whole process. Thread-safe; not for the per-op hot path (a lock per call).
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rt/export.h"

RT_API_BEGIN

namespace rt {

// Tags `op_name` with `origin`; throws rt::ValueError when it is tagged with a different origin already.
void set_op_origin(std::string_view op_name, std::string_view origin);
// The origin of `op_name`, or "" for an op nobody tagged.
std::string op_origin(std::string_view op_name);
// Every tagged op: (name, origin), sorted by name.
std::vector<std::pair<std::string, std::string>> op_origins();

}  // namespace rt

RT_API_END
