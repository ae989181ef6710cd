// The RtHostApi every plugin gets (rt/plugin/abi.h): versions, logging and the tensor functions.
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "ops/host_tensors.h"
#include "rt/plugin_host/plugin_manager.h"

namespace rt::plugin {
namespace {

// Warnings and errors go to stderr; debug and info only with RT_PLUGIN_VERBOSE=1.
void host_log(int32_t level, const char* plugin_id, const char* message) noexcept {
  static const bool verbose = [] {
    const char* v = std::getenv("RT_PLUGIN_VERBOSE");
    return v && *v && *v != '0';
  }();
  if (level < RT_LOG_WARNING && !verbose) return;
  const char* names[] = {"debug", "info", "warning", "error"};
  const char* name = level >= RT_LOG_DEBUG && level <= RT_LOG_ERROR ? names[level] : "log";
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  std::fprintf(stderr, "[plugin %s] %s: %s\n", plugin_id ? plugin_id : "?", name, message ? message : "");
}

RtHostApi make_host_api() {
  RtHostApi api{};
  api.struct_size = sizeof(RtHostApi);
  api.abi_major = RT_PLUGIN_ABI_MAJOR;
  api.abi_minor = RT_PLUGIN_ABI_MINOR;
  api.host_version = RT_VERSION_STRING;
  api.log = host_log;
  fill_tensor_functions(api);
  return api;
}

}  // namespace

const RtHostApi* host_api() {
  static const RtHostApi api = make_host_api();
  return &api;
}

}  // namespace rt::plugin
