// rt/ops/shape.h — joining, splitting, indexing and masking tensors.
//
//   auto c = rt::cat({a, b}, 0);
//   auto parts = x.chunk(3, -1);
//   auto g = x.gather(1, idx);                      // idx: int64, same rank as x
//   auto h = rt::one_hot(labels, 10);               // int64 [N, 10]
//   auto causal = rt::ones({T, T}).tril();
#pragma once
#include <vector>

#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt {

Tensor cat(const TensorList& tensors, int64_t dim = 0);
Tensor stack(const TensorList& tensors, int64_t dim = 0);
TensorList split(const Tensor& t, int64_t split_size, int64_t dim = 0);
TensorList split(const Tensor& t, const Shape& sizes, int64_t dim = 0);
TensorList chunk(const Tensor& t, int64_t chunks, int64_t dim = 0);
Tensor gather(const Tensor& t, int64_t dim, const Tensor& index);
Tensor scatter_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src);
Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index);
Tensor repeat(const Tensor& t, const Shape& repeats);
Tensor tril(const Tensor& t, int64_t diagonal = 0);
Tensor triu(const Tensor& t, int64_t diagonal = 0);
Tensor one_hot(const Tensor& labels, int64_t num_classes = -1);  // -1: max(labels) + 1

inline TensorList Tensor::split(int64_t s, int64_t d) const { return rt::split(*this, s, d); }
inline TensorList Tensor::split(const Shape& s, int64_t d) const { return rt::split(*this, s, d); }
inline TensorList Tensor::chunk(int64_t c, int64_t d) const { return rt::chunk(*this, c, d); }
inline Tensor Tensor::gather(int64_t d, const Tensor& i) const { return rt::gather(*this, d, i); }
inline Tensor Tensor::scatter_add(int64_t d, const Tensor& i, const Tensor& s) const { return rt::scatter_add(*this, d, i, s); }
inline Tensor Tensor::index_select(int64_t d, const Tensor& i) const { return rt::index_select(*this, d, i); }
inline Tensor Tensor::repeat(const Shape& r) const { return rt::repeat(*this, r); }
inline Tensor Tensor::tril(int64_t k) const { return rt::tril(*this, k); }
inline Tensor Tensor::triu(int64_t k) const { return rt::triu(*this, k); }

}  // namespace rt

RT_API_END
