// engine/src/ops/reduce_plan.h — a CPU reduction's input laid out as the rows its kernel reads.
//
//   auto plan = detail::ReducePlan::make(x, {1}, /*keepdim=*/false, "sum");
//   const float* rows = static_cast<const float*>(plan.input.raw_data());   // [plan.outer, plan.inner]
//   Tensor out = make_tensor(plan.out_shape, kFloat32);
//
// make() reads x in place when its memory already is those rows (reduced dims last and dense), and
// otherwise copies it once through cpu::copy_kernel into a new buffer: no engine op runs and nothing
// is recorded, so a profile shows the reduction alone. `input` is for reading raw data only.
// describe() gives the shapes without touching data (for any device).
#pragma once
#include "cpu/reduce.h"
#include "rt/tensor.h"

namespace rt::detail {

struct ReducePlan : cpu::ReducePlan {
  Tensor input;  // CPU, contiguous [outer, inner]

  // t must be on the CPU. Throws IndexError for bad or repeated dims, naming `op`.
  static ReducePlan make(const Tensor& t, const Shape& dims, bool keepdim, const char* op);
  static cpu::ReducePlan describe(const Tensor& t, const Shape& dims, bool keepdim, const char* op) {
    return cpu::ReducePlan::describe(t.sizes(), dims, keepdim, op);
  }
};

}  // namespace rt::detail
