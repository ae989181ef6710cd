// Note [In-place ops and autograd]
// Without autograd, in-place ops write straight into self's storage and bump its version
// (so saved copies of it fail loudly in backward; see Note [Saved tensor versions]).
// With autograd, the op runs out of place on a clone of self, and the result is copied back
// into self's storage; self then takes over the result's grad_fn. The clone keeps the values
// the backward formula saved intact. Leaves that require grad cannot be modified in place
// while grad mode is on (as in PyTorch), and views taking part in autograd are refused until
// view+inplace rebasing (PyTorch's CopySlices) exists.
#include "device_copy.h"
#include "inplace.h"

#include "cpu/loops.h"
#include "../autograd/autograd_meta.h"
#include "rt/autograd/grad_mode.h"
#include "rt/ops/view.h"

namespace rt::detail {

void check_no_internal_overlap(const Tensor& self, const char* op) {
  for (int64_t d = 0; d < self.dim(); ++d)
    if (self.stride(d) == 0 && self.size(d) > 1)
      throw ValueError(std::string(op) + ": unsupported operation: more than one element of the written-to tensor "
                       "(shape " + format_shape(self.sizes()) + ", stride 0 in dimension " + std::to_string(d) +
                       ") refers to a single memory location. Hint: clone() the expanded tensor before writing to it");
}

void check_inplace(const Tensor& self, const char* op, bool needs_grad) {
  check_no_internal_overlap(self, op);
  if (!needs_grad) return;
  if (self.is_leaf() && self.requires_grad())
    throw AutogradError(std::string("a leaf Variable that requires grad is being used in an in-place operation (") + op +
                        "). Hint: wrap parameter updates in rt::NoGradGuard (torch.no_grad() in Python), or use the "
                        "out-of-place op.");
  if (self.impl().is_view)
    throw NotImplementedError(std::string(op) + ": in-place modification of a view that takes part in autograd is not "
                              "supported yet; use the out-of-place op (e.g. y = x.clone(); y = op(y)) instead");
}

bool can_cast(ScalarType from, ScalarType to) {
  if (is_floating(from) && !is_floating(to)) return false;
  if (from != kBool && to == kBool) return false;
  return true;
}

void check_inplace_dtype(ScalarType result, const Tensor& self, const char* op) {
  if (!can_cast(result, self.dtype()))
    throw DTypeError(std::string(op) + ": result type " + std::string(dtype_name(result)) +
                     " can't be cast to the desired output type " + std::string(dtype_name(self.dtype())));
}

void check_inplace_shape(const Tensor& self, const Tensor& other, const char* op) {
  check_no_internal_overlap(self, op);
  if (other.sizes() == self.sizes()) return;
  Shape b = broadcast_shapes(self.sizes(), other.sizes(), op);
  if (b != self.sizes())
    throw_shape_error(op, "output with shape " + format_shape(self.sizes()) + " doesn't match the broadcast shape " +
                              format_shape(b) + " of the operands " + format_shape(self.sizes()) + " and " +
                              format_shape(other.sizes()));
}

Tensor& inplace_with_history(Tensor& self, const char* op, const std::function<Tensor(const Tensor&)>& out_of_place) {
  check_inplace(self, op, true);
  Tensor result = out_of_place(rt::clone(self));
  check_inplace_dtype(result.dtype(), self, op);
  if (result.sizes() != self.sizes())
    throw_shape_error(op, "output with shape " + format_shape(self.sizes()) + " doesn't match the result shape " +
                              format_shape(result.sizes()));
  detail::copy_into(self, result);
  self.bump_version();
  if (result.grad_fn()) autograd::set_history(self, result.grad_fn(), result.output_nr());
  return self;
}

Tensor convert(const Tensor& t, ScalarType dtype) {
  if (t.dtype() == dtype) return t;
  Tensor out = make_tensor(t.sizes(), dtype, t.device());
  detail::copy_into(out, t);
  return out;
}

}  // namespace rt::detail
