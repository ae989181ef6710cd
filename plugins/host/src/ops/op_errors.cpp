#include "ops/op_errors.h"

#include <fmt/format.h>

#include <cstring>

#include "rt/error.h"

namespace rt::plugin {

void throw_kernel_error(const OpInfo& op, RtStatus status, const RtError& error, const char* what,
                        const Device& device) {
  const size_t n = strnlen(error.message, sizeof error.message);
  const std::string message = n ? std::string(error.message, n) : "(the plugin gave no message)";
  const std::string text = fmt::format("plugin {}: {} ({} {}): {}", op.plugin_id, op.qualified_name,
                                       device.is_cuda() ? "cuda" : "cpu", what, message);
  switch (status) {
    case RT_STATUS_INVALID_ARGUMENT: throw rt::ValueError(text);
    case RT_STATUS_UNSUPPORTED: throw rt::NotImplementedError(text);
    case RT_STATUS_OUT_OF_MEMORY: throw rt::OutOfMemoryError(text);
    default: throw rt::Error(fmt::format("{} (status {})", text, int(status)));
  }
}

}  // namespace rt::plugin
