// cuda_reduce: a reduction of a tensor on its GPU, with the CPU reductions' shapes and checks
// (detail::ReducePlan::describe, no copy) and the kernel of kernels/cuda/reduce.h.
//
//   if (!t.is_cpu()) {
//     auto [out, plan] = detail::cuda_reduce(dispatch::ReduceOp::Sum, t, dims, keepdim, kFloat32, "sum");
//     ...record the backward with plan.kept_shape...
//   }
#pragma once
#include <utility>

#include "ops/reduce_plan.h"
#include "dispatch_stubs.h"

namespace rt::detail {

inline std::pair<Tensor, cpu::ReducePlan> cuda_reduce(dispatch::ReduceOp op, const Tensor& t, const Shape& dims,
                                                      bool keepdim, ScalarType out_dtype, const char* name,
                                                      int64_t correction = 0) {
  cpu::ReducePlan plan = ReducePlan::describe(t, dims, keepdim, name);
  Tensor out = make_tensor(plan.out_shape, out_dtype, t.device());
  dispatch::reduce(out.device(), op, out, t, plan.dim_mask(), correction);
  return {out, std::move(plan)};
}

}  // namespace rt::detail
