// rt/ops/sort.h — sorting along a dim, selecting by rank, unique values, searching sorted tensors.
//
//   auto [v, i] = x.sort(1, /*descending=*/true);      // values and their int64 positions along dim 1
//   auto top = x.topk(3).first;                         // the 3 largest along the last dim, largest first
//   auto median = x.kthvalue((x.size(0) + 1) / 2, 0);   // the k-th smallest (1-based) along dim 0
//   auto u = rt::unique(labels, true, /*return_inverse=*/true, /*return_counts=*/true);
//   auto bins = rt::bucketize(x, rt::linspace(0, 1, 11));   // int64 bucket of each element
//
// Order, as PyTorch's: NaN sorts above every number (last ascending, first descending) and NaNs
// compare equal to each other for ordering. sort is always stable here (ties keep their input
// order; `stable` is accepted for PyTorch's signature), topk and kthvalue break ties by position
// (PyTorch leaves which tied index they return unspecified). Index outputs are int64 and never
// require grad. Gradients, as PyTorch: sort, topk, kthvalue and msort pass each incoming
// gradient to the element its value came from; unique and unique_consecutive of a tensor that
// requires grad give values whose backward throws NotImplementedError, as PyTorch's do;
// searchsorted and bucketize have no gradient.
// A dim outside [-ndim, ndim) throws IndexError naming the op, the dim and the valid range.
// Devices: CPU. A tensor on a GPU throws DeviceError naming the op and the device (move it with
// .cpu() first); docs/cuda.md lists the ops that run on CUDA.
#pragma once
#include <optional>
#include <string_view>
#include <utility>

#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt {

std::pair<Tensor, Tensor> sort(const Tensor& t, int64_t dim = -1, bool descending = false, bool stable = false);
Tensor argsort(const Tensor& t, int64_t dim = -1, bool descending = false, bool stable = false);
Tensor msort(const Tensor& t);  // sort(t, 0).first
// The k largest (smallest when !largest) along dim; throws IndexError unless 0 <= k <= size(dim).
// The result is sorted whatever `sorted` says (PyTorch allows any order when it is false).
std::pair<Tensor, Tensor> topk(const Tensor& t, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);
// The k-th smallest (1 <= k <= size(dim), else IndexError) and its index along dim.
std::pair<Tensor, Tensor> kthvalue(const Tensor& t, int64_t k, int64_t dim = -1, bool keepdim = false);

// unique and unique_consecutive: values, and when asked the inverse (for each input element, or
// slice along dim, the position of its value in `values`) and the counts; both int64 and
// undefined when not asked for. Without dim the input is flattened (values 1-D, inverse in the
// input's shape); with dim, whole slices along it are compared (values keep the other dims).
// unique's values are always sorted ascending (with `sorted` false PyTorch's order is
// unspecified); every NaN is a value of its own, as in PyTorch.
struct UniqueResult {
  Tensor values, inverse_indices, counts;
};
UniqueResult unique(const Tensor& t, bool sorted = true, bool return_inverse = false, bool return_counts = false,
                    std::optional<int64_t> dim = std::nullopt);
UniqueResult unique_consecutive(const Tensor& t, bool return_inverse = false, bool return_counts = false,
                                std::optional<int64_t> dim = std::nullopt);

// For each value, the index where inserting it keeps sorted_sequence's last dim sorted: the first
// such index (side "left") or the last ("right", or right = true). sorted_sequence is 1-D or has
// values' leading dims; sorter (int64, sorted_sequence's shape) gives its ascending order when it
// is not sorted itself. Both are compared in their promoted dtype. Result: values' shape, int64
// (int32 with out_int32). side and right must agree; anything else throws ValueError.
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32 = false, bool right = false,
                    std::optional<std::string_view> side = std::nullopt, const Tensor& sorter = {});
Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& value, bool out_int32 = false, bool right = false,
                    std::optional<std::string_view> side = std::nullopt, const Tensor& sorter = {});
// The bucket of each element for 1-D ascending boundaries: i with boundaries[i-1] < x <= boundaries[i]
// (right: boundaries[i-1] <= x < boundaries[i]); searchsorted with the arguments swapped.
Tensor bucketize(const Tensor& input, const Tensor& boundaries, bool out_int32 = false, bool right = false);
Tensor bucketize(const Scalar& input, const Tensor& boundaries, bool out_int32 = false, bool right = false);

inline std::pair<Tensor, Tensor> Tensor::sort(int64_t d, bool desc, bool st) const { return rt::sort(*this, d, desc, st); }
inline Tensor Tensor::argsort(int64_t d, bool desc, bool st) const { return rt::argsort(*this, d, desc, st); }
inline Tensor Tensor::msort() const { return rt::msort(*this); }
inline std::pair<Tensor, Tensor> Tensor::topk(int64_t k, int64_t d, bool l, bool s) const { return rt::topk(*this, k, d, l, s); }
inline std::pair<Tensor, Tensor> Tensor::kthvalue(int64_t k, int64_t d, bool kd) const { return rt::kthvalue(*this, k, d, kd); }

}  // namespace rt

RT_API_END
