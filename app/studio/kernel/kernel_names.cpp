// Names of the kernel's enums, as the status bar, the notebook model and the variables panel show them.
#include "python_kernel.h"

namespace rt::studio {

const char* to_string(KernelState state) {
  switch (state) {
    case KernelState::starting: return "starting";
    case KernelState::idle: return "idle";
    case KernelState::busy: return "busy";
    case KernelState::paused: return "paused";
    case KernelState::failed: return "failed";
  }
  return "unknown";
}

const char* nbformat_name(Stream stream) { return stream == Stream::out ? "stdout" : "stderr"; }

const char* to_string(ExecutionStatus status) {
  switch (status) {
    case ExecutionStatus::ok: return "ok";
    case ExecutionStatus::error: return "error";
    case ExecutionStatus::aborted: return "aborted";
  }
  return "unknown";
}

const char* to_string(VariableKind kind) {
  switch (kind) {
    case VariableKind::tensor: return "tensor";
    case VariableKind::module: return "module";
    case VariableKind::array: return "array";
    case VariableKind::scalar: return "scalar";
    case VariableKind::text: return "text";
    case VariableKind::collection: return "collection";
    case VariableKind::other: return "other";
  }
  return "other";
}

}  // namespace rt::studio
