// sum: the reduction autograd itself needs (sum_to); the other reductions live in reduce.cpp.
#include <algorithm>
#include <vector>

#include "../amp/autocast_policy.h"
#include "cpu/loops.h"
#include "ops/column_sums.h"
#include "ops/reduce_plan.h"
#include "reduce_cuda.h"
#include "rt/autograd/node.h"
#include "rt/op_observer.h"
#include "rt/ops/reduce.h"
#include "rt/ops/view.h"

namespace rt {

namespace {
constexpr int64_t kSumChunk = 1 << 16;

// float32 rows: 8 float partial sums per 4096-element block (fast, vectorisable), blocks added
// in double, so long rows neither stall (a float stops growing at 2^24 + ...) nor drift.
template <typename T>
double float_row_sum(const T* p, int64_t n) {
  constexpr int64_t kBlock = 4096;
  double total = 0;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t end = std::min(n, b + kBlock);
    float acc[8] = {};
    int64_t i = b;
    for (; i + 8 <= end; i += 8)
      for (int k = 0; k < 8; ++k) acc[k] += float(p[i + k]);
    float s = 0;
    for (; i < end; ++i) s += float(p[i]);
    for (int k = 0; k < 8; ++k) s += acc[k];
    total += s;
  }
  return total;
}
void record_sum_backward(const Tensor& t, const Tensor& out, const Shape& kept_shape) {
  if (autograd::any_requires_grad(t))
    autograd::record("SumBackward0", {t}, {out}, [in = t.sizes(), kept = kept_shape](const TensorList& g) {
      return TensorList{expand(reshape(g[0], kept), in)};
    });
}
}  // namespace

Tensor sum(const Tensor& t, const Shape& dims, bool keepdim) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::Float32OnCuda, {&t}); ac) return sum(ac[0], dims, keepdim);
  OpGuard guard("sum", t);
  const ScalarType out_dtype = is_floating(t.dtype()) ? t.dtype() : kInt64;
  if (!t.is_cpu()) {
    auto [out, plan] = detail::cuda_reduce(dispatch::ReduceOp::Sum, t, dims, keepdim, out_dtype, "sum");
    record_sum_backward(t, out, plan.kept_shape);
    return out;
  }
  if (is_floating(t.dtype())) {
    const cpu::ReducePlan shape = detail::ReducePlan::describe(t, dims, keepdim, "sum");
    if (auto cols = detail::column_layout(t, shape)) {  // leading dims: read in place (ops/column_sums.h)
      Tensor out = make_tensor(shape.out_shape, out_dtype);
      detail::column_sums(t, *cols, out, 1.0);
      record_sum_backward(t, out, shape.kept_shape);
      return out;
    }
  }
  auto plan = detail::ReducePlan::make(t, dims, keepdim, "sum");
  Tensor out = make_tensor(plan.out_shape, out_dtype);
  visit_dtype(t.dtype(), [&]<typename T>() {
    using Acc = std::conditional_t<std::is_floating_point_v<compute_t<T>>, std::conditional_t<std::is_same_v<T, double>, double, float>, int64_t>;
    const T* in = static_cast<const T*>(plan.input.raw_data());
    const int64_t inner = plan.inner, outer = plan.outer;
    visit_dtype(out_dtype, [&]<typename O>() {
      if constexpr (std::is_same_v<O, bool> || std::is_same_v<O, uint8_t> || std::is_same_v<O, int32_t>) {
        return;  // unreachable: out_dtype is floating or int64
      } else {
        O* o = static_cast<O*>(out.raw_data());
        auto row = [&](int64_t r) {
          const T* p = in + r * inner;
          if constexpr (std::is_same_v<Acc, float>) {
            o[r] = O(float_row_sum(p, inner));
          } else {
            Acc s = 0;
            for (int64_t i = 0; i < inner; ++i) s += Acc(compute_t<T>(p[i]));
            o[r] = O(s);
          }
        };
        if (outer == 1 && inner >= 2 * kSumChunk) {
          if constexpr (std::is_same_v<Acc, float>) {
            // One long row: fixed-size chunks summed in parallel, then added in order, so the
            // result does not depend on the thread count.
            const int64_t chunks = (inner + kSumChunk - 1) / kSumChunk;
            std::vector<double> partial(size_t(chunks), 0.0);
#pragma omp parallel for schedule(static)
            for (int64_t c = 0; c < chunks; ++c)
              partial[size_t(c)] = float_row_sum(in + c * kSumChunk, std::min(kSumChunk, inner - c * kSumChunk));
            double total = 0;
            for (double v : partial) total += v;
            o[0] = O(total);
            return;
          }
        }
        if (outer * inner >= cpu::kParallelGrain && outer > 1) {
#pragma omp parallel for schedule(static)
          for (int64_t r = 0; r < outer; ++r) row(r);
        } else {
          for (int64_t r = 0; r < outer; ++r) row(r);
        }
      }
    });
  });
  record_sum_backward(t, out, plan.kept_shape);
  return out;
}

}  // namespace rt
