// copy_into: the one element copy every op uses (contiguous, clone, to, copy_, cat, ...).
// Same-shaped tensors, dtype converted; CPU to CPU runs the CPU kernel, anything touching a
// GPU goes to the CUDA backend (a build without CUDA cannot create GPU tensors at all).
#pragma once
#include "ops/cpu_view.h"
#include "cuda/backend.h"

namespace rt::detail {

inline void copy_into(const Tensor& dst, const Tensor& src) {
  if (dst.device().is_cpu() && src.device().is_cpu()) [[likely]] cpu::copy_kernel(cpu_view(dst), cpu_view(src));
  else cuda::detail::copy(dst, src);
}

}  // namespace rt::detail
