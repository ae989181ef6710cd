// autocast_policy.h — the first line of every autocast-eligible op (see Note [Autocast]).
//
//   Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b) {
//     if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::LowerPrecision, {&x, &w, &b}); ac)
//       return linear(ac[0], ac[1], ac[2]);   // the inputs, cast; undefined ones stay undefined
//     OpGuard guard("linear", x, w, b);
//     ...
//
// When no thread has autocast on, the constructor is one relaxed atomic load and a branch.
#pragma once
#include <atomic>
#include <initializer_list>

#include "rt/op_observer.h"
#include "rt/tensor.h"

namespace rt::amp::detail {

enum class CastPolicy : uint8_t {
  LowerPrecision,  // to the region's dtype (float16 / bfloat16)
  Float32,         // to float32 (losses: on every device type, as torch)
  Float32OnCuda,   // to float32 on CUDA; unchanged on the CPU, where torch leaves them in bfloat16
  Promote,         // to the widest of the region's dtype and the inputs' dtypes
};

class AutocastCall {
 public:
  AutocastCall(CastPolicy policy, std::initializer_list<const Tensor*> inputs) {
    if (rt::detail::g_dispatch_flags.load(std::memory_order_relaxed) & rt::detail::kAutocast) [[unlikely]]
      prepare(policy, inputs.begin(), inputs.size());
  }
  AutocastCall(CastPolicy policy, const TensorList& inputs) {
    if (rt::detail::g_dispatch_flags.load(std::memory_order_relaxed) & rt::detail::kAutocast) [[unlikely]]
      prepare(policy, inputs);
  }
  AutocastCall(const AutocastCall&) = delete;
  AutocastCall& operator=(const AutocastCall&) = delete;

  // True when the op must be called again with the cast inputs.
  explicit operator bool() const { return !cast_.empty(); }
  const Tensor& operator[](size_t i) const { return cast_[i]; }
  const TensorList& tensors() const { return cast_; }

 private:
  void prepare(CastPolicy policy, const Tensor* const* inputs, size_t n);
  void prepare(CastPolicy policy, const TensorList& inputs);
  TensorList cast_;
};

}  // namespace rt::amp::detail
