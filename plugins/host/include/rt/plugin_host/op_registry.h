// rt/plugin_host/op_registry.h — plugin ops joining the engine's dispatcher.
//
// The plugin manager calls register_op_library once a plugin with ops initialized; from then on
// rt.ops.<ns>.<op> (Python) and call_op (C++) reach them, profiled, recorded by autograd, under autocast.
#pragma once
#include <string>

#include "rt/plugin/abi.h"

namespace rt::plugin {

// Registers every op of `library` under its namespace, tagged with `plugin_id`. Throws std::runtime_error
// naming the op when a schema does not parse or an op of that name exists already.
void register_op_library(const RtOpLibrary& library, const std::string& plugin_id);

}  // namespace rt::plugin
