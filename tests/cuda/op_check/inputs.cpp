#include "cases.h"

namespace rt::op_check {

Tensor randn_t(const Shape& shape, ScalarType dt) { return rt::randn(shape).to(dt); }

Tensor uniform_t(const Shape& shape, double lo, double hi, ScalarType dt) {
  Tensor t = rt::empty(shape, kFloat64);
  rt::uniform_(t, lo, hi);
  return t.to(dt);
}

Tensor randint_t(int64_t lo, int64_t hi, const Shape& shape, ScalarType dt) {
  return rt::randint(lo, hi, shape).to(dt);
}

Tensor mask_t(const Shape& shape, double p) { return rt::rand(shape).lt(rt::scalar_tensor(p)); }

}  // namespace rt::op_check
