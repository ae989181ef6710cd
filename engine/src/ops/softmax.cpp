// softmax and log_softmax along one dim: fused, max-shifted forward and fused backward; float32 runs
// the per-level row kernels (kernels/cpu/isa/softmax_rows.cpp), the other dtypes the loops below.
#include <algorithm>
#include <cmath>
#include <limits>

#include "../amp/autocast_policy.h"
#include "dispatch_stubs.h"
#include "op_device.h"
#include "cpu/loops.h"
#include "inplace.h"
#include "isa_loops.h"
#include "nn_rows.h"
#include "pointwise.h"
#include "rt/autograd/node.h"
#include "rt/op_observer.h"
#include "rt/ops/nn_functional.h"

namespace rt {
using namespace nnops;

namespace {

// Accumulation type: double stays double, everything else sums in float.
template <typename T>
using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// The tensor viewed as [outer, n, inner] around `dim`.
struct DimLayout {
  int64_t outer = 1, n = 1, inner = 1;
  DimLayout(const Shape& s, int64_t dim) {
    for (int64_t i = 0; i < int64_t(s.size()); ++i) {
      if (i < dim) outer *= s[size_t(i)];
      else if (i == dim) n = s[size_t(i)];
      else inner *= s[size_t(i)];
    }
  }
};

constexpr int64_t kBlock = 64;  // columns processed together when the reduced dim is strided

// Runs body(o, i0, i1) over every outer index and block of inner columns, in parallel for large work.
template <typename F>
void for_each_block(const DimLayout& L, F&& body) {
  const int64_t blocks = (L.inner + kBlock - 1) / kBlock;
  const int64_t tasks = L.outer * blocks;
  auto run = [&](int64_t t) {
    const int64_t o = t / blocks, b = t % blocks;
    body(o, b * kBlock, std::min(L.inner, (b + 1) * kBlock));
  };
  if (L.outer * L.n * L.inner >= cpu::kParallelGrain && tasks > 1) {
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < tasks; ++t) run(t);
  } else {
    for (int64_t t = 0; t < tasks; ++t) run(t);
  }
}

// Max and sums need no NaN special case: a NaN anywhere in a row reaches every output through the sum.
template <typename T>
compute_t<T> row_max(const T* x, int64_t n, int64_t stride) {
  using C = compute_t<T>;
  C m = -std::numeric_limits<C>::infinity();
#pragma omp simd reduction(max : m)
  for (int64_t d = 0; d < n; ++d) m = std::max(m, C(x[d * stride]));
  return m;
}

// The sum of term(d) over d in [0, n) along a contiguous row: vector sums of 1024-element chunks,
// added up in double. One float vector sum over a long row drifts: a 32768-element log_softmax row's
// gradient was off by 7e-4 where exp(y) is large, 40 times the CUDA kernel's tree of per-thread
// partial sums (found by the op check through the CUDA emulator).
template <typename A, typename Term>
A row_sum(int64_t n, Term&& term) {
  constexpr int64_t kChunk = 1024;
  double total = 0;
  for (int64_t c = 0; c < n; c += kChunk) {
    const int64_t end = std::min(n, c + kChunk);
    A s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t d = c; d < end; ++d) s += term(d);
    total += double(s);
  }
  return A(total);
}

// One contiguous row (the reduced dim is innermost).
template <typename T>
void softmax_row(const T* x, T* y, int64_t n, bool log) {
  using C = compute_t<T>;
  using A = acc_t<T>;
  const C mx = row_max(x, n, 1);
  if (!log && std::is_same_v<T, C>) {
    const A sum = row_sum<A>(n, [&](int64_t d) {
      const C e = detail::vexp(C(x[d]) - mx);
      y[d] = T(e);
      return A(e);
    });
    const C scale = C(A(1) / sum);
#pragma omp simd
    for (int64_t d = 0; d < n; ++d) y[d] = T(C(y[d]) * scale);
    return;
  }
  const A sum = row_sum<A>(n, [&](int64_t d) { return A(detail::vexp(C(x[d]) - mx)); });
  if (log) {
    const C shift = mx + C(std::log(sum));
#pragma omp simd
    for (int64_t d = 0; d < n; ++d) y[d] = T(C(x[d]) - shift);
  } else {
    const C scale = C(A(1) / sum);
#pragma omp simd
    for (int64_t d = 0; d < n; ++d) y[d] = T(detail::vexp(C(x[d]) - mx) * scale);
  }
}

template <typename T>
void softmax_forward(const T* x, T* y, const DimLayout& L, bool log) {
  using C = compute_t<T>;
  using A = acc_t<T>;
  const int64_t n = L.n, inner = L.inner;
  if (inner == 1) {
    for_each_block(L, [&](int64_t o, int64_t, int64_t) { softmax_row(x + o * n, y + o * n, n, log); });
    return;
  }
  // Strided dim: a block of neighbouring columns is reduced together, each inner loop contiguous.
  for_each_block(L, [&](int64_t o, int64_t i0, int64_t i1) {
    const T* xb = x + o * n * inner + i0;
    T* yb = y + o * n * inner + i0;
    const int64_t w = i1 - i0;
    C mx[kBlock], k[kBlock];
    A sum[kBlock];
    for (int64_t j = 0; j < w; ++j) mx[j] = -std::numeric_limits<C>::infinity(), sum[j] = 0;
    for (int64_t d = 0; d < n; ++d)
#pragma omp simd
      for (int64_t j = 0; j < w; ++j) mx[j] = std::max(mx[j], C(xb[d * inner + j]));
    for (int64_t d = 0; d < n; ++d)
#pragma omp simd
      for (int64_t j = 0; j < w; ++j) sum[j] += A(detail::vexp(C(xb[d * inner + j]) - mx[j]));
    for (int64_t j = 0; j < w; ++j) k[j] = log ? mx[j] + C(std::log(sum[j])) : C(A(1) / sum[j]);
    for (int64_t d = 0; d < n; ++d) {
      const T* xr = xb + d * inner;
      T* yr = yb + d * inner;
      if (log) {
#pragma omp simd
        for (int64_t j = 0; j < w; ++j) yr[j] = T(C(xr[j]) - k[j]);
      } else {
#pragma omp simd
        for (int64_t j = 0; j < w; ++j) yr[j] = T(detail::vexp(C(xr[j]) - mx[j]) * k[j]);
      }
    }
  });
}

// softmax: gx = y * (g - sum(g * y)); log_softmax: gx = g - exp(y) * sum(g).
template <typename T>
void softmax_backward(const T* y, const T* g, T* gx, const DimLayout& L, bool log) {
  using C = compute_t<T>;
  using A = acc_t<T>;
  const int64_t n = L.n, inner = L.inner;
  for_each_block(L, [&](int64_t o, int64_t i0, int64_t i1) {
    const int64_t base = o * n * inner + i0;
    const int64_t w = i1 - i0;
    A dot[kBlock];
    for (int64_t j = 0; j < w; ++j) dot[j] = 0;
    if (inner == 1) {
      dot[0] = row_sum<A>(n, [&](int64_t d) { return log ? A(C(g[base + d])) : A(C(g[base + d]) * C(y[base + d])); });
    } else {
      for (int64_t d = 0; d < n; ++d)
#pragma omp simd
        for (int64_t j = 0; j < w; ++j) {
          const int64_t k = base + d * inner + j;
          dot[j] += log ? A(C(g[k])) : A(C(g[k]) * C(y[k]));
        }
    }
    for (int64_t d = 0; d < n; ++d) {
      const int64_t r = base + d * inner;
      if (log) {
#pragma omp simd
        for (int64_t j = 0; j < w; ++j) gx[r + j] = T(C(g[r + j]) - detail::vexp(C(y[r + j])) * C(dot[j]));
      } else {
#pragma omp simd
        for (int64_t j = 0; j < w; ++j) gx[r + j] = T(C(y[r + j]) * (C(g[r + j]) - C(dot[j])));
      }
    }
  });
}

// float32 at the CPU's instruction-set level (kernels/cpu/isa_kernels.h): rows across threads along
// the last dim, blocks of kBlock columns along another.
void softmax_forward_f32(const float* x, float* y, const DimLayout& L, bool log) {
  const cpu::IsaKernels& k = cpu::isa_kernels();
  if (L.inner == 1) {
    detail::parallel_row_ranges(L.outer, L.n, [&](int64_t r0, int64_t r1) {
      k.softmax_rows_f32(y + r0 * L.n, x + r0 * L.n, r1 - r0, L.n, log);
    });
    return;
  }
  for_each_block(L, [&](int64_t o, int64_t i0, int64_t i1) {
    const int64_t base = o * L.n * L.inner + i0;
    k.softmax_cols_f32(y + base, x + base, L.n, L.inner, i1 - i0, log);
  });
}
void softmax_backward_f32(const float* y, const float* g, float* gx, const DimLayout& L, bool log) {
  const cpu::IsaKernels& k = cpu::isa_kernels();
  if (L.inner == 1) {
    detail::parallel_row_ranges(L.outer, L.n, [&](int64_t r0, int64_t r1) {
      const int64_t b = r0 * L.n;
      k.softmax_backward_rows_f32(gx + b, y + b, g + b, r1 - r0, L.n, log);
    });
    return;
  }
  for_each_block(L, [&](int64_t o, int64_t i0, int64_t i1) {
    const int64_t base = o * L.n * L.inner + i0;
    k.softmax_backward_cols_f32(gx + base, y + base, g + base, L.n, L.inner, i1 - i0, log);
  });
}

// The CPU kernels of dispatch::softmax and dispatch::softmax_backward: x, y and grad contiguous in out's dtype.
void softmax_cpu(const Tensor& out, const Tensor& x, int64_t dim, bool log) {
  const DimLayout L(x.sizes(), dim);
  visit_float(x.dtype(), log ? "log_softmax" : "softmax", [&]<typename T>() {
    if constexpr (std::is_same_v<T, float>) softmax_forward_f32(x.data_ptr<T>(), out.data_ptr<T>(), L, log);
    else softmax_forward<T>(x.data_ptr<T>(), out.data_ptr<T>(), L, log);
  });
}
void softmax_backward_cpu(const Tensor& gx, const Tensor& y, const Tensor& grad, int64_t dim, bool log) {
  const DimLayout L(y.sizes(), dim);
  visit_float(y.dtype(), log ? "log_softmax_backward" : "softmax_backward", [&]<typename T>() {
    if constexpr (std::is_same_v<T, float>)
      softmax_backward_f32(y.data_ptr<T>(), grad.data_ptr<T>(), gx.data_ptr<T>(), L, log);
    else softmax_backward<T>(y.data_ptr<T>(), grad.data_ptr<T>(), gx.data_ptr<T>(), L, log);
  });
}
RT_REGISTER_KERNEL(dispatch::softmax, DeviceType::CPU, softmax_cpu);
RT_REGISTER_KERNEL(dispatch::softmax_backward, DeviceType::CPU, softmax_backward_cpu);

Tensor softmax_backward_tensor(const Tensor& y, const Tensor& grad, int64_t dim, bool log) {
  Tensor gx = make_tensor(y.sizes(), y.dtype(), detail::op_device(log ? "log_softmax_backward" : "softmax_backward", y, grad));
  if (gx.numel() == 0) return gx;
  dispatch::softmax_backward(gx.device(), gx, dense(y, y.dtype()), dense(grad, y.dtype()), dim, log);
  return gx;
}

Tensor softmax_impl(const Tensor& x, int64_t dim, bool log) {
  const char* op = log ? "log_softmax" : "softmax";
  OpGuard guard(op, x);
  dim = wrap_dim(dim, x.dim(), op);
  Tensor out = make_tensor(x.sizes(), x.dtype(), x.device());
  visit_float(x.dtype(), op, [&]<typename T>() {  // refuses integer dtypes on every device, naming the op
    if (out.numel() > 0) dispatch::softmax(out.device(), out, dense(x, x.dtype()), dim, log);
  });
  if (autograd::any_requires_grad(x))
    autograd::record(log ? "LogSoftmaxBackward0" : "SoftmaxBackward0", {x}, {out},
                     [saved = autograd::SavedTensor(out), dim, log](const TensorList& g) {
                       return TensorList{softmax_backward_tensor(saved.unpack(), g[0], dim, log)};
                     });
  return out;
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::Float32OnCuda, {&x}); ac) return softmax(ac[0], dim);
  return softmax_impl(x, dim, false);
}
Tensor log_softmax(const Tensor& x, int64_t dim) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::Float32OnCuda, {&x}); ac) return log_softmax(ac[0], dim);
  return softmax_impl(x, dim, true);
}

}  // namespace rt
