// op_errors.h — a plugin kernel's failure as the rt::Error a caller catches.
//
//   if (status != RT_STATUS_OK) throw_kernel_error(op, status, error, "kernel", device);
//   // rt::ValueError: "plugin org.rustytorch.fused-bias-gelu: rtx::fused_bias_gelu (cpu kernel): b must be 1-D"
#pragma once
#include "rt/device.h"
#include "rt/plugin/abi.h"
#include "rt/plugin_host/op_registry.h"

namespace rt::plugin {

// Throws rt::ValueError (RT_STATUS_INVALID_ARGUMENT), rt::NotImplementedError (RT_STATUS_UNSUPPORTED),
// rt::OutOfMemoryError (RT_STATUS_OUT_OF_MEMORY) or rt::Error, with the plugin id, the op, which function
// ("kernel", "backward") on which device, and the plugin's message.
[[noreturn]] void throw_kernel_error(const OpInfo& op, RtStatus status, const RtError& error, const char* what,
                                     const Device& device);

}  // namespace rt::plugin
