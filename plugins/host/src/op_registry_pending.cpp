// Until plugin ops join the dispatcher (plugins/host/src/ops/, in progress), a plugin with ops fails to
// initialize with this message instead of loading half-way.
#include <fmt/format.h>

#include <stdexcept>

#include "rt/plugin_host/op_registry.h"

namespace rt::plugin {

void register_op_library(const RtOpLibrary& library, const std::string& plugin_id) {
  throw std::runtime_error(fmt::format("{}: this build of RustyTorch++ cannot register plugin ops yet (namespace "
                                       "{}); only importers and exporters load",
                                       plugin_id, library.ns ? library.ns : "?"));
}

}  // namespace rt::plugin
