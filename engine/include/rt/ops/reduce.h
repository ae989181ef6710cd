// rt/ops/reduce.h — reductions over dims, with keepdim.
//
//   auto s = x.sum();                      // all elements, 0-dim
//   auto m = x.mean({0}, /*keepdim=*/true);
//   auto [v, i] = x.max(1);                // values and int64 indices along dim 1
//   auto l = rt::logsumexp(x, {-1});       // numerically stable
//
// An empty dims list means every dim (PyTorch's `dim=None`). sum/prod of integer and bool
// tensors give int64; mean, var, std, norm and logsumexp need floating input.
#pragma once
#include <optional>
#include <utility>

#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt {

Tensor sum(const Tensor& t, const Shape& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& t, const Shape& dims = {}, bool keepdim = false);
Tensor prod(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor max(const Tensor& t);
Tensor min(const Tensor& t);
std::pair<Tensor, Tensor> max(const Tensor& t, int64_t dim, bool keepdim = false);
std::pair<Tensor, Tensor> min(const Tensor& t, int64_t dim, bool keepdim = false);
Tensor amax(const Tensor& t, const Shape& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& t, const Shape& dims = {}, bool keepdim = false);
Tensor argmax(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor var(const Tensor& t, const Shape& dims = {}, int64_t correction = 1, bool keepdim = false);
Tensor std(const Tensor& t, const Shape& dims = {}, int64_t correction = 1, bool keepdim = false);
Tensor norm(const Tensor& t, const Scalar& p = 2, const Shape& dims = {}, bool keepdim = false);
Tensor logsumexp(const Tensor& t, const Shape& dims, bool keepdim = false);
Tensor all(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor any(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);

inline Tensor Tensor::sum(const Shape& d, bool k) const { return rt::sum(*this, d, k); }
inline Tensor Tensor::mean(const Shape& d, bool k) const { return rt::mean(*this, d, k); }
inline Tensor Tensor::prod(std::optional<int64_t> d, bool k) const { return rt::prod(*this, d, k); }
inline Tensor Tensor::max() const { return rt::max(*this); }
inline Tensor Tensor::min() const { return rt::min(*this); }
inline std::pair<Tensor, Tensor> Tensor::max(int64_t d, bool k) const { return rt::max(*this, d, k); }
inline std::pair<Tensor, Tensor> Tensor::min(int64_t d, bool k) const { return rt::min(*this, d, k); }
inline Tensor Tensor::amax(const Shape& d, bool k) const { return rt::amax(*this, d, k); }
inline Tensor Tensor::amin(const Shape& d, bool k) const { return rt::amin(*this, d, k); }
inline Tensor Tensor::argmax(std::optional<int64_t> d, bool k) const { return rt::argmax(*this, d, k); }
inline Tensor Tensor::argmin(std::optional<int64_t> d, bool k) const { return rt::argmin(*this, d, k); }
inline Tensor Tensor::var(const Shape& d, int64_t c, bool k) const { return rt::var(*this, d, c, k); }
inline Tensor Tensor::std(const Shape& d, int64_t c, bool k) const { return rt::std(*this, d, c, k); }
inline Tensor Tensor::norm(const Scalar& p, const Shape& d, bool k) const { return rt::norm(*this, p, d, k); }
inline Tensor Tensor::logsumexp(const Shape& d, bool k) const { return rt::logsumexp(*this, d, k); }
inline Tensor Tensor::all(std::optional<int64_t> d, bool k) const { return rt::all(*this, d, k); }
inline Tensor Tensor::any(std::optional<int64_t> d, bool k) const { return rt::any(*this, d, k); }

}  // namespace rt

RT_API_END
