// searchsorted and bucketize: binary search in sorted rows. See the contract in rt/ops/sort.h.
#include <string>

#include "dim_rows.h"
#include "op_device.h"
#include "rt/op_observer.h"
#include "rt/ops/sort.h"

namespace rt {
using detail::DimRows;
using detail::for_each_row;

namespace {

// Whether values are inserted after equal elements, from side and right (which must agree).
bool insert_right(const char* op, bool right, std::optional<std::string_view> side) {
  if (!side) return right;
  if (*side != "left" && *side != "right")
    throw ValueError(std::string(op) + ": side can only be 'left' or 'right' but got '" + std::string(*side) + "'" +
                     module_context());
  if (*side == "left" && right)
    throw ValueError(std::string(op) + ": side and right can't be set to opposites, got side of left while right was True" +
                     module_context() + ". Hint: pass only one of them");
  return *side == "right";
}

void check_shapes(const char* op, const Tensor& seq, const Tensor& values, const Tensor& sorter) {
  const std::string shapes = "sorted_sequence " + format_shape(seq.sizes()) + ", values " + format_shape(values.sizes());
  if (seq.dim() == 0)
    throw_shape_error(op, "the sorted sequence must have at least one dimension (" + shapes + ")",
                      "pass a 1-D tensor of boundaries");
  if (seq.dim() > 1) {
    bool leading_match = values.dim() == seq.dim();
    for (int64_t d = 0; leading_match && d + 1 < seq.dim(); ++d) leading_match = seq.size(d) == values.size(d);
    if (!leading_match)
      throw_shape_error(op, "the sorted sequence should be 1-D or have the values' leading dimensions (" + shapes + ")",
                        "with an N-D sorted sequence, values must have its first N-1 sizes");
  }
  if (!sorter.defined()) return;
  if (sorter.sizes() != seq.sizes())
    throw_shape_error(op, "sorter " + format_shape(sorter.sizes()) + " must have the sorted sequence's shape (" + shapes + ")",
                      "sorter is what argsort(sorted_sequence) returns");
  if (sorter.dtype() != kInt64)
    throw DTypeError(std::string(op) + ": expected sorter of dtype int64, got " + std::string(dtype_name(sorter.dtype())) +
                     module_context() + ". Hint: use the result of argsort");
}

// out[i] = insertion point of values[i] in its row of seq (rows of `n` elements). Both contiguous
// on the CPU in one dtype; order (when defined) maps row positions to seq positions.
void search_rows(const Tensor& seq, const Tensor& values, const Tensor& order, const Tensor& out, bool right) {
  const int64_t n = seq.size(-1), per_row = seq.dim() == 1 ? values.numel() : values.dim() == 0 ? 1 : values.size(-1);
  const int64_t* ord = order.defined() ? order.data_ptr<int64_t>() : nullptr;
  visit_dtype(seq.dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    const T* s = static_cast<const T*>(seq.raw_data());
    const T* v = static_cast<const T*>(values.raw_data());
    visit_dtype(out.dtype(), [&]<typename O>() {
      if constexpr (std::is_same_v<O, int64_t> || std::is_same_v<O, int32_t>) {
        O* o = static_cast<O*>(out.raw_data());
        detail::parallel_rows(values.numel(), values.numel() * 16, [&](int64_t i) {
          const int64_t row = seq.dim() == 1 ? 0 : i / per_row;
          const T* base = s + row * n;
          const int64_t* row_order = ord ? ord + row * n : nullptr;
          auto at = [&](int64_t j) { return C(base[row_order ? row_order[j] : j]); };
          const C x = C(v[i]);
          // The advance tests are !(e >= x) (left) and !(e > x) (right), so NaN values land at the end.
          int64_t lo = 0, hi = n;
          while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            const C e = at(mid);
            const bool advance = right ? !(e > x) : !(e >= x);
            if (advance) lo = mid + 1;
            else hi = mid;
          }
          o[i] = O(lo);
        });
      }
    });
  });
}

Tensor search(const char* op, const Tensor& seq, const Tensor& values, bool out_int32, bool right,
              std::optional<std::string_view> side, const Tensor& sorter) {
  OpGuard guard(op, seq, values);
  const bool after_equal = insert_right(op, right, side);
  check_shapes(op, seq, values, sorter);
  detail::require_cpu(op, seq);
  detail::require_cpu(op, values);
  detail::require_cpu(op, sorter);
  const ScalarType dt = promote_types(seq.dtype(), values.dtype());
  const Tensor s = detail::dense_cpu(seq, dt), v = detail::dense_cpu(values, dt);
  Tensor order;
  if (sorter.defined()) {
    order = detail::dense_cpu(sorter, kInt64);
    const int64_t* p = order.data_ptr<int64_t>();
    const int64_t n = seq.size(-1);
    for (int64_t i = 0; i < order.numel(); ++i)
      if (p[i] < 0 || p[i] >= n)
        throw IndexError(std::string(op) + ": sorter index " + std::to_string(p[i]) + " is out of range for a last " +
                         "dimension of size " + std::to_string(n) + module_context() + ". Hint: use argsort(sorted_sequence)");
  }
  Tensor out = make_tensor(values.sizes(), out_int32 ? kInt32 : kInt64);
  if (out.numel() > 0) search_rows(s, v, order, out, after_equal);
  return out;
}

}  // namespace

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32, bool right,
                    std::optional<std::string_view> side, const Tensor& sorter) {
  return search("searchsorted", sorted_sequence, values, out_int32, right, side, sorter);
}

Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& value, bool out_int32, bool right,
                    std::optional<std::string_view> side, const Tensor& sorter) {
  if (sorted_sequence.dim() > 1)
    throw_shape_error("searchsorted", "a single value needs a 1-D sorted sequence, got " +
                                          format_shape(sorted_sequence.sizes()),
                      "pass the values as a tensor with the sequence's leading dimensions");
  return search("searchsorted", sorted_sequence, scalar_to_tensor(value), out_int32, right, side, sorter);
}

Tensor bucketize(const Tensor& input, const Tensor& boundaries, bool out_int32, bool right) {
  if (boundaries.dim() != 1)
    throw_shape_error("bucketize", "boundaries must be 1-D, got " + format_shape(boundaries.sizes()),
                      "flatten them, or use searchsorted for one sorted row per input row");
  return search("bucketize", boundaries, input, out_int32, right, std::nullopt, Tensor());
}

Tensor bucketize(const Scalar& input, const Tensor& boundaries, bool out_int32, bool right) {
  return bucketize(scalar_to_tensor(input), boundaries, out_int32, right);
}

}  // namespace rt
