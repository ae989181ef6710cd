// rt/ops/creation.h — making tensors.
//
//   auto a = rt::zeros({2, 3});                          // float32
//   auto i = rt::arange(10, rt::kInt64);                 // 0..9
//   auto x = rt::tensor({1.f, 2.f, 3.f, 4.f}, {2, 2});   // from data, row-major
//   rt::manual_seed(0); auto r = rt::randn({4});         // reproducible (Philox4x32-10)
#pragma once
#include <initializer_list>
#include <optional>
#include <vector>

#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt {

Tensor empty(const Shape& shape, TensorOptions opts = {});
Tensor zeros(const Shape& shape, TensorOptions opts = {});
Tensor ones(const Shape& shape, TensorOptions opts = {});
Tensor full(const Shape& shape, const Scalar& value, TensorOptions opts = {});

// Copies `data` (row-major) into a new tensor of `shape` with T's dtype; without a shape the
// result is 1-D (like torch.tensor([...])); pass Shape{} for a 0-dim tensor of one value.
template <typename T>
Tensor from_vector(const std::vector<T>& data, const Shape& shape, bool requires_grad = false);
template <typename T>
Tensor from_vector(const std::vector<T>& data) { return from_vector(data, Shape{int64_t(data.size())}); }
Tensor tensor(std::initializer_list<float> data);
Tensor tensor(std::initializer_list<float> data, const Shape& shape);
Tensor tensor(std::initializer_list<double> data);
Tensor tensor(std::initializer_list<double> data, const Shape& shape);
Tensor tensor(std::initializer_list<int64_t> data);
Tensor tensor(std::initializer_list<int64_t> data, const Shape& shape);
Tensor scalar_tensor(const Scalar& s, TensorOptions opts = {});

// [0, end) / [start, end) by step. Default dtype: int64 when all arguments are integers,
// float32 otherwise (PyTorch's rule); opts.dtype overrides only when given explicitly.
Tensor arange(const Scalar& end, std::optional<TensorOptions> opts = std::nullopt);
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = 1,
              std::optional<TensorOptions> opts = std::nullopt);
Tensor linspace(double start, double end, int64_t steps, TensorOptions opts = {});
Tensor eye(int64_t n, int64_t m = -1, TensorOptions opts = {});

// Random numbers from the default generator (rt/generator.h).
Tensor rand(const Shape& shape, TensorOptions opts = {});     // U[0, 1)
Tensor randn(const Shape& shape, TensorOptions opts = {});    // N(0, 1)
Tensor randint(int64_t low, int64_t high, const Shape& shape, TensorOptions opts = kInt64);  // [low, high)
Tensor randperm(int64_t n, TensorOptions opts = kInt64);
Tensor bernoulli(const Tensor& probs);                        // 1 with probability p, else 0

// Same shape (and by default dtype/device) as `t`.
Tensor empty_like(const Tensor& t, std::optional<TensorOptions> opts = std::nullopt);
Tensor zeros_like(const Tensor& t, std::optional<TensorOptions> opts = std::nullopt);
Tensor ones_like(const Tensor& t, std::optional<TensorOptions> opts = std::nullopt);
Tensor full_like(const Tensor& t, const Scalar& v, std::optional<TensorOptions> opts = std::nullopt);
Tensor rand_like(const Tensor& t, std::optional<TensorOptions> opts = std::nullopt);
Tensor randn_like(const Tensor& t, std::optional<TensorOptions> opts = std::nullopt);

// In-place random fills (used by rt::nn::init); no autograd.
Tensor& uniform_(Tensor& t, double low = 0.0, double high = 1.0);
Tensor& normal_(Tensor& t, double mean = 0.0, double std = 1.0);

template <typename T>
Tensor from_vector(const std::vector<T>& data, const Shape& shape, bool requires_grad) {
  if (numel_of(shape) != int64_t(data.size()))
    throw ShapeError("from_vector: " + std::to_string(data.size()) + " values cannot fill shape " +
                     format_shape(shape) + " (" + std::to_string(numel_of(shape)) + " elements)");
  Tensor t = make_tensor(shape, dtype_of_v<T>);
  T* p = t.data_ptr<T>();
  for (size_t i = 0; i < data.size(); ++i) p[i] = data[i];
  if (requires_grad) t.requires_grad_();
  return t;
}

}  // namespace rt

RT_API_END
