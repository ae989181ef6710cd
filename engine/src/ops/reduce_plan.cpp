#include "ops/reduce_plan.h"

#include "ops/cpu_view.h"

namespace rt::detail {

ReducePlan ReducePlan::make(const Tensor& t, const Shape& dims, bool keepdim, const char* op) {
  ReducePlan p;
  static_cast<cpu::ReducePlan&>(p) = cpu::ReducePlan::describe(t.sizes(), dims, keepdim, op);
  const cpu::TensorView rows = p.rows_view(cpu_view(t));
  if (rows.is_contiguous()) {
    p.input = t;
  } else {
    p.input = make_tensor(rows.shape(), t.dtype());
    cpu::copy_kernel(cpu_view(p.input), rows);
  }
  return p;
}

}  // namespace rt::detail
