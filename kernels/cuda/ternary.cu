// where, addcmul, addcdiv launchers: see ternary.h.
#include "cuda/elementwise_loop.cuh"
#include "cuda/ternary.h"

namespace rt::cuda_kernels {
namespace {

template <typename C>
struct WhereF {
  __device__ C operator()(C cond, C a, C b) const { return cond != C(0) ? a : b; }
};

template <typename C>
struct UpdateF {
  TernaryOp op;
  C value;
  __device__ C operator()(C a, C b, C c) const { return op == TernaryOp::AddCMul ? a + value * b * c : a + value * b / c; }
};

}  // namespace

void where(const TensorArg& out, const TensorArg& cond, const TensorArg& a, const TensorArg& b, cudaStream_t stream) {
  if (cond.dtype != kBool && cond.dtype != kUInt8)
    throw DTypeError("where on CUDA: expected a bool (or uint8) condition, got " + ew::dtype_str(cond.dtype));
  // cond is loaded with the other operands in the compute dtype: 0 stays 0 and nonzero bytes stay
  // nonzero under every dtype's rounding, so `cond != 0` reads it exactly.
  ew::visit_compute(out.dtype, [&]<typename C>() {
    ew::launch<C, 3>("where", out, {&cond, &a, &b}, out.dtype, WhereF<C>{}, stream);
  });
}

void ternary(TernaryOp op, const TensorArg& out, const TensorArg& a, const TensorArg& b, const TensorArg& c,
             double value, cudaStream_t stream) {
  const char* name = op == TernaryOp::AddCMul ? "addcmul_" : "addcdiv_";
  if (!is_floating(out.dtype))
    throw DTypeError(std::string(name) + " on CUDA: expected a floating point tensor, got " + ew::dtype_str(out.dtype));
  ew::visit_compute(out.dtype, [&]<typename C>() {
    ew::launch<C, 3>(name, out, {&a, &b, &c}, out.dtype, UpdateF<C>{op, C(value)}, stream);
  });
}

}  // namespace rt::cuda_kernels
