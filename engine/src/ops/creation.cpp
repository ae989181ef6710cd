// Deterministic factories; random ones live in random.cpp, ranges in range.cpp.
#include "rt/ops/creation.h"

#include "rt/op_observer.h"
#include "rt/ops/elementwise.h"

namespace rt {

namespace {
Tensor finish(Tensor t, const TensorOptions& opts) {
  if (opts.requires_grad) t.requires_grad_();
  return t;
}
TensorOptions like(const Tensor& t, const std::optional<TensorOptions>& opts) {
  if (opts) return *opts;
  TensorOptions o(t.dtype());
  o.device = t.device();
  return o;
}
}  // namespace

Tensor empty(const Shape& shape, TensorOptions opts) {
  return finish(make_tensor(shape, opts.dtype, opts.device), opts);
}

Tensor full(const Shape& shape, const Scalar& value, TensorOptions opts) {
  OpGuard guard("full");
  Tensor t = make_tensor(shape, opts.dtype, opts.device);
  fill_(t, value);
  return finish(t, opts);
}

Tensor zeros(const Shape& shape, TensorOptions opts) { return full(shape, 0, opts); }
Tensor ones(const Shape& shape, TensorOptions opts) { return full(shape, 1, opts); }

Tensor tensor(std::initializer_list<float> data) { return from_vector(std::vector<float>(data)); }
Tensor tensor(std::initializer_list<float> data, const Shape& shape) { return from_vector(std::vector<float>(data), shape); }
Tensor tensor(std::initializer_list<double> data) { return from_vector(std::vector<double>(data)); }
Tensor tensor(std::initializer_list<double> data, const Shape& shape) { return from_vector(std::vector<double>(data), shape); }
Tensor tensor(std::initializer_list<int64_t> data) { return from_vector(std::vector<int64_t>(data)); }
Tensor tensor(std::initializer_list<int64_t> data, const Shape& shape) { return from_vector(std::vector<int64_t>(data), shape); }

Tensor scalar_tensor(const Scalar& s, TensorOptions opts) { return full({}, s, opts); }

Tensor empty_like(const Tensor& t, std::optional<TensorOptions> opts) { return empty(t.sizes(), like(t, opts)); }
Tensor zeros_like(const Tensor& t, std::optional<TensorOptions> opts) { return zeros(t.sizes(), like(t, opts)); }
Tensor ones_like(const Tensor& t, std::optional<TensorOptions> opts) { return ones(t.sizes(), like(t, opts)); }
Tensor full_like(const Tensor& t, const Scalar& v, std::optional<TensorOptions> opts) { return full(t.sizes(), v, like(t, opts)); }

}  // namespace rt
