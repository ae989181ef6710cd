// Shared rules for in-place ops. See Note [In-place ops and autograd] in inplace.cpp.
#pragma once
#include <functional>

#include "rt/tensor.h"

namespace rt::detail {

// Throws ValueError when self has a stride-0 dimension of size > 1 (an expanded tensor): one
// memory location would be written several times. check_inplace and check_inplace_shape run it.
void check_no_internal_overlap(const Tensor& self, const char* op);

// Throws AutogradError for an in-place op on a leaf that requires grad (in grad mode),
// and NotImplementedError for one on a view that takes part in autograd.
void check_inplace(const Tensor& self, const char* op, bool needs_grad);

// Whether a value of dtype `from` may be written into a tensor of dtype `to` in place.
bool can_cast(ScalarType from, ScalarType to);
void check_inplace_dtype(ScalarType result, const Tensor& self, const char* op);
// Throws ShapeError when `other` does not broadcast to self's shape.
void check_inplace_shape(const Tensor& self, const Tensor& other, const char* op);

// In-place with autograd: self = out_of_place(self) computed on a clone (so saved tensors
// stay valid), written back into self's storage; self takes over the result's history.
Tensor& inplace_with_history(Tensor& self, const char* op, const std::function<Tensor(const Tensor&)>& out_of_place);

// Copies without autograd or observers (dtype conversion, no version bump).
Tensor convert(const Tensor& t, ScalarType dtype);

}  // namespace rt::detail
