// op_device: which device an op runs on, from its tensor operands.
//
//   const Device d = detail::op_device("add", a, b);   // throws DeviceError on cpu + cuda:0
//   Tensor out = make_tensor(shape, dtype, d);
//
// Every defined operand must be on one device, except that 0-dim CPU tensors (Python numbers,
// rt.tensor(2.0)) may join operands on a GPU, as in PyTorch. Undefined operands are skipped.
#pragma once
#include <initializer_list>
#include <string>

#include "rt/error.h"
#include "rt/tensor.h"

namespace rt::detail {

[[noreturn]] inline void throw_device_mismatch(const char* op, const Tensor& a, size_t ia, const Tensor& b, size_t ib) {
  throw DeviceError(std::string(op) + ": expected all tensors to be on the same device, but input " + std::to_string(ia) +
                    " " + format_shape(a.sizes()) + " is on " + a.device().str() + " and input " + std::to_string(ib) +
                    " " + format_shape(b.sizes()) + " is on " + b.device().str() + module_context() +
                    ". Hint: move one of them with .to(" + a.device().str() + ") or .to(" + b.device().str() + ")");
}

inline Device op_device(const char* op, std::initializer_list<const Tensor*> operands) {
  const Tensor* first = nullptr;
  size_t first_i = 0, i = 0;
  for (const Tensor* t : operands) {
    if (t->defined() && !(t->dim() == 0 && t->device().is_cpu())) {
      if (!first) {
        first = t;
        first_i = i;
      } else if (t->device() != first->device()) {
        throw_device_mismatch(op, *first, first_i, *t, i);
      }
    }
    ++i;
  }
  if (first) return first->device();
  for (const Tensor* t : operands)
    if (t->defined()) return t->device();
  return Device::cpu();
}

template <typename... Ts>
Device op_device(const char* op, const Ts&... ts) {
  return op_device(op, {&ts...});
}

// For ops with no CUDA kernel yet: throws DeviceError naming the op, the input and its device
// unless t is on the CPU (an undefined t passes).
inline void require_cpu(const char* op, const Tensor& t) {
  if (!t.defined() || t.device().is_cpu()) return;
  throw DeviceError(std::string(op) + " has no " + (t.is_cuda() ? "CUDA" : "device") +
                    " implementation yet, and its " + format_shape(t.sizes()) + " input is on " + t.device().str() +
                    module_context() + ". Hint: move the tensors to the CPU with .cpu() for this step, and back with .to(" +
                    t.device().str() + ") (docs/cuda.md lists the ops that run on CUDA)");
}

}  // namespace rt::detail
