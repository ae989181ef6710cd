// softmax / log_softmax forward and backward. See kernels/cuda/softmax.h.
#include <cstdint>
#include <string>
#include <type_traits>

#include "cuda/block_reduce.cuh"
#include "cuda/launch.h"
#include "cuda/nn_dtype.cuh"
#include "cuda/pack.cuh"
#include "cuda/row_plan.h"
#include "cuda/softmax.h"
#include "cuda/kernel_macros.cuh"

namespace rt::cuda_kernels {
namespace {

constexpr int kWarpRowsMax = 1024;  // rows up to this length get one warp each
constexpr int kRowsPerBlock = 4;    // warps per block in warp-per-row mode
// Threads of a register-row kernel's block: its launch bound (kShared: two blocks per multiprocessor).
constexpr int row_block_threads(bool warp, bool shared = false) {
  return warp ? 32 * kRowsPerBlock : shared ? kRowSharedThreads : kRowMaxThreads;
}
constexpr int kLongRowThreads = 512;
// Packs per thread of the register kernels (row_plan.h): the backward holds two rows.
template <typename T>
constexpr int kForwardMaxVecs = max_row_vecs(sizeof(T), 1);
template <typename T>
constexpr int kBackwardMaxVecs = max_row_vecs(sizeof(T), 2);

struct Layout {
  int64_t outer = 1, n = 1, inner = 1;
};

Layout layout_of(const TensorArg& t, int64_t dim, const char* op) {
  const int64_t nd = t.ndim;
  const int64_t d = dim < 0 ? dim + (nd == 0 ? 1 : nd) : dim;
  if (d < 0 || d >= (nd == 0 ? 1 : nd))
    throw IndexError(std::string(op) + " on CUDA: dim " + std::to_string(dim) + " is out of range for a " +
                     std::to_string(nd) + "-d tensor");
  Layout L;
  for (int64_t i = 0; i < nd; ++i) {
    if (i < d) L.outer *= t.sizes[i];
    else if (i == d) L.n = t.sizes[i];
    else L.inner *= t.sizes[i];
  }
  return L;
}

// One row per group (warp or block); inner == 1.
template <typename T, bool kWarp>
__global__ void softmax_rows_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t n, bool log) {
  using G = RowGroup<kWarp>;
  using A = acc_t<T>;
  RT_SHARED(smem, A[32]);
  const int64_t row = G::row(kRowsPerBlock);
  if (kWarp && row >= rows) return;  // the whole warp leaves together
  const T* xr = x + row * n;
  T* yr = y + row * n;
  A mx = neg_infinity<A>();
  for (int64_t j = G::rank(); j < n; j += G::size()) mx = MaxOp{}(mx, to_acc(xr[j]));
  mx = G::all_reduce(mx, MaxOp{}, smem);
  A sum = 0;
  for (int64_t j = G::rank(); j < n; j += G::size()) sum += exp(to_acc(xr[j]) - mx);
  sum = G::all_reduce(sum, SumOp{}, smem);
  if (log) {
    const A shift = mx + A(::log(sum));
    for (int64_t j = G::rank(); j < n; j += G::size()) yr[j] = from_acc<T>(to_acc(xr[j]) - shift);
  } else {
    const A scale = A(1) / sum;
    for (int64_t j = G::rank(); j < n; j += G::size()) yr[j] = from_acc<T>(exp(to_acc(xr[j]) - mx) * scale);
  }
}

// The whole row in registers (row_plan.h): one read of x and one write of y, a warp per row (kWarp, rows
// up to 1024 elements) or a block per row. With kShared (block rows only), the packs after the first kVecs
// per thread live in dynamic shared memory (RowPlan::shared_vecs = kVecs), and two 512-thread blocks share
// a multiprocessor.
template <typename T, int kVecs, bool kWarp, bool kShared = false>
__global__ void RT_LAUNCH_BOUNDS(row_block_threads(kWarp, kShared), kShared ? 2 : 1)
    softmax_registers_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t packs, bool log) {
  RT_CHECK_LAUNCH_BOUNDS(row_block_threads(kWarp, kShared));
  static_assert(!(kWarp && kShared), "a warp's row fits its registers");
  using G = RowGroup<kWarp>;
  using A = acc_t<T>;
  constexpr int kPer = kPack16<T>;
  constexpr int kHeld = kShared ? 2 * kVecs : kVecs;  // packs per thread, registers first
  RT_SHARED(smem, A[32]);
  RT_DYNAMIC_SHARED(shared_packs, unsigned char);
  Pack16<T>* spill = reinterpret_cast<Pack16<T>*>(shared_packs);  // [kVecs * blockDim.x] when kShared
  const int64_t r = G::row(kRowsPerBlock);
  if (kWarp && r >= rows) return;  // the whole warp leaves together
  const int64_t row = r * packs * kPer;
  Pack16<T> v[kVecs];
  // Pack k of this thread (k < kHeld): k is a constant in every unrolled loop, so v[k] stays in a register.
  // Passes copy a whole pack out and back (one 16-byte shared access: 4-byte ones would conflict 4 ways).
  auto held = [&](int k) -> Pack16<T>& { return k < kVecs ? v[k] : spill[threadIdx.x + (k - kVecs) * blockDim.x]; };
  // Every load is issued before the first is used; the shared half is copied without passing through
  // registers (64 registers hold only the register half), and each thread reads back only its own slots.
#pragma unroll
  for (int k = 0; k < kHeld; ++k) {
    const int64_t i = G::rank() + int64_t(k) * G::size();
    if (i < packs) {
      if (k < kVecs) v[k] = load_pack<T, kPer>(x, row + i * kPer);
      else cp_async_16(&held(k), x + row + i * kPer);
    }
  }
  if constexpr (kShared) cp_async_wait_all();
  A mx = neg_infinity<A>();
#pragma unroll
  for (int k = 0; k < kHeld; ++k)
    if (G::rank() + int64_t(k) * G::size() < packs) {
      const Pack16<T> p = held(k);
#pragma unroll
      for (int e = 0; e < kPer; ++e) mx = MaxOp{}(mx, to_acc(p.v[e]));
    }
  mx = G::all_reduce(mx, MaxOp{}, smem);
  // softmax of float32/float64 keeps exp(x - max) in the registers for the output pass (one exp per
  // element, the same values); the half types would round it, so they compute it again.
  constexpr bool kKeepExp = std::is_same_v<T, A>;
  A sum = 0;
#pragma unroll
  for (int k = 0; k < kHeld; ++k)
    if (G::rank() + int64_t(k) * G::size() < packs) {
      Pack16<T> p = held(k);
#pragma unroll
      for (int e = 0; e < kPer; ++e) {
        const A ex = exp(to_acc(p.v[e]) - mx);
        if constexpr (kKeepExp) p.v[e] = ex;
        sum += ex;
      }
      if constexpr (kKeepExp)
        if (!log) held(k) = p;
    }
  sum = G::all_reduce(sum, SumOp{}, smem);
  const A shift = log ? mx + A(::log(sum)) : A(0), scale = A(1) / sum;
#pragma unroll
  for (int k = 0; k < kHeld; ++k) {
    const int64_t i = G::rank() + int64_t(k) * G::size();
    if (i < packs) {
      const Pack16<T> p = held(k);
      Pack16<T> o;
#pragma unroll
      for (int e = 0; e < kPer; ++e) {
        const A xv = to_acc(p.v[e]);
        if (log) o.v[e] = from_acc<T>(xv - shift);
        else if constexpr (kKeepExp) o.v[e] = from_acc<T>(xv * scale);  // xv is exp(x - max) here
        else o.v[e] = from_acc<T>(exp(xv - mx) * scale);
      }
      store_pack<T, kPer>(y, row + i * kPer, o);
    }
  }
}

// One thread per (outer, inner) column; neighbouring threads read neighbouring addresses.
template <typename T>
__global__ void softmax_columns_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t outer, int64_t n,
                                       int64_t inner, bool log) {
  using A = acc_t<T>;
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < outer * inner;
       c += int64_t(gridDim.x) * blockDim.x) {
    const int64_t base = (c / inner) * n * inner + c % inner;
    A mx = neg_infinity<A>();
    for (int64_t d = 0; d < n; ++d) mx = MaxOp{}(mx, to_acc(x[base + d * inner]));
    A sum = 0;
    for (int64_t d = 0; d < n; ++d) sum += exp(to_acc(x[base + d * inner]) - mx);
    const A k = log ? mx + A(::log(sum)) : A(1) / sum;
    for (int64_t d = 0; d < n; ++d) {
      const A v = to_acc(x[base + d * inner]);
      y[base + d * inner] = from_acc<T>(log ? v - k : exp(v - mx) * k);
    }
  }
}

template <typename T, bool kWarp>
__global__ void softmax_backward_rows_kernel(const T* __restrict__ y, const T* __restrict__ g, T* __restrict__ gx,
                                             int64_t rows, int64_t n, bool log) {
  using G = RowGroup<kWarp>;
  using A = acc_t<T>;
  RT_SHARED(smem, A[32]);
  const int64_t row = G::row(kRowsPerBlock);
  if (kWarp && row >= rows) return;
  const int64_t off = row * n;
  A dot = 0;
  for (int64_t j = G::rank(); j < n; j += G::size())
    dot += log ? to_acc(g[off + j]) : to_acc(g[off + j]) * to_acc(y[off + j]);
  dot = G::all_reduce(dot, SumOp{}, smem);
  for (int64_t j = G::rank(); j < n; j += G::size()) {
    const A yv = to_acc(y[off + j]), gv = to_acc(g[off + j]);
    gx[off + j] = from_acc<T>(log ? gv - exp(yv) * dot : yv * (gv - dot));
  }
}

// Backward with the rows of y and grad_output in registers: one read of each, one write of grad_input;
// a warp or a block per row as the forward.
template <typename T, int kVecs, bool kWarp>
__global__ void RT_LAUNCH_BOUNDS(row_block_threads(kWarp))
    softmax_backward_registers_kernel(const T* __restrict__ y, const T* __restrict__ g, T* __restrict__ gx,
                                      int64_t rows, int64_t packs, bool log) {
  RT_CHECK_LAUNCH_BOUNDS(row_block_threads(kWarp));
  using G = RowGroup<kWarp>;
  using A = acc_t<T>;
  constexpr int kPer = kPack16<T>;
  RT_SHARED(smem, A[32]);
  const int64_t r = G::row(kRowsPerBlock);
  if (kWarp && r >= rows) return;
  const int64_t row = r * packs * kPer;
  Pack16<T> yv[kVecs], gv[kVecs];
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int64_t i = G::rank() + int64_t(k) * G::size();
    if (i < packs) yv[k] = load_pack<T, kPer>(y, row + i * kPer), gv[k] = load_pack<T, kPer>(g, row + i * kPer);
  }
  A dot = 0;
#pragma unroll
  for (int k = 0; k < kVecs; ++k)
    if (G::rank() + int64_t(k) * G::size() < packs)
#pragma unroll
      for (int e = 0; e < kPer; ++e) dot += log ? to_acc(gv[k].v[e]) : to_acc(gv[k].v[e]) * to_acc(yv[k].v[e]);
  dot = G::all_reduce(dot, SumOp{}, smem);
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int64_t i = G::rank() + int64_t(k) * G::size();
    if (i < packs) {
      Pack16<T> o;
#pragma unroll
      for (int e = 0; e < kPer; ++e) {
        const A yk = to_acc(yv[k].v[e]), gk = to_acc(gv[k].v[e]);
        o.v[e] = from_acc<T>(log ? gk - exp(yk) * dot : yk * (gk - dot));
      }
      store_pack<T, kPer>(gx, row + i * kPer, o);
    }
  }
}

template <typename T>
__global__ void softmax_backward_columns_kernel(const T* __restrict__ y, const T* __restrict__ g, T* __restrict__ gx,
                                                int64_t outer, int64_t n, int64_t inner, bool log) {
  using A = acc_t<T>;
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < outer * inner;
       c += int64_t(gridDim.x) * blockDim.x) {
    const int64_t base = (c / inner) * n * inner + c % inner;
    A dot = 0;
    for (int64_t d = 0; d < n; ++d) {
      const int64_t k = base + d * inner;
      dot += log ? to_acc(g[k]) : to_acc(g[k]) * to_acc(y[k]);
    }
    for (int64_t d = 0; d < n; ++d) {
      const int64_t k = base + d * inner;
      const A yv = to_acc(y[k]), gv = to_acc(g[k]);
      gx[k] = from_acc<T>(log ? gv - exp(yv) * dot : yv * (gv - dot));
    }
  }
}

unsigned row_blocks(int64_t rows, bool warp) {
  const int64_t b = warp ? (rows + kRowsPerBlock - 1) / kRowsPerBlock : rows;
  if (b > 0x7fffffff) throw ValueError("softmax on CUDA: too many rows (" + std::to_string(rows) + ") for one launch");
  return unsigned(b);
}

void check_same(const TensorArg& a, const TensorArg& b, const char* op, const char* name) {
  require_contiguous(b, op, name);
  bool same = a.ndim == b.ndim && a.dtype == b.dtype;
  for (int i = 0; same && i < a.ndim; ++i) same = a.sizes[i] == b.sizes[i];
  if (!same) throw ShapeError(std::string(op) + " on CUDA: " + name + " must match the output's shape and dtype");
}

}  // namespace

void softmax_forward(const TensorArg& out, const TensorArg& in, int64_t dim, bool log, cudaStream_t stream) {
  const char* op = log ? "log_softmax" : "softmax";
  require_contiguous(out, op, "output");
  check_same(out, in, op, "input");
  const Layout L = layout_of(in, dim, op);
  if (in.numel() == 0) return;
  visit_floating(in.dtype, op, [&]<typename T>() {
    const T* x = static_cast<const T*>(in.data);
    T* y = static_cast<T*>(out.data);
    // Rows in registers: a warp each up to 1024 elements, else a block each (also a short row a warp
    // cannot hold, such as 1000 doubles); rows that are not whole aligned packs stream.
    const bool rows_layout = L.inner == 1;
    const RowPlan warp_plan = rows_layout && L.n <= kWarpRowsMax
                                  ? aligned_warp_plan(L.n, int(sizeof(T)), kWarpRowMaxVecs, {x, y})
                                  : RowPlan{};
    const RowPlan plan =
        rows_layout && !warp_plan.vecs ? aligned_row_plan(L.n, int(sizeof(T)), kForwardMaxVecs<T>, {x, y}) : RowPlan{};
    if (warp_plan.vecs) {
      visit_row_vecs<kWarpRowMaxVecs>(warp_plan.vecs, [&]<int kVecs>() {
        RT_LAUNCH(row_blocks(L.outer, true), 32 * kRowsPerBlock, stream, softmax_registers_kernel<T, kVecs, true>)(
            x, y, L.outer, warp_plan.packs, log);
      });
    } else if (plan.vecs) {
      const unsigned rows = row_blocks(L.outer, false);
      const RowPlan shared = with_shared_half(plan);
      visit_row_vecs<kForwardMaxVecs<T>>(plan.vecs, [&]<int kVecs>() {
        if constexpr (kVecs == kForwardMaxVecs<T>) {  // only the widest plans are split (with_shared_half)
          if (shared.shared_vecs) {
            // Beyond 48 KiB a kernel must ask for its shared memory; a device that cannot give it keeps
            // the row in one block's registers instead.
            auto* kernel = softmax_registers_kernel<T, kVecs, false, true>;
            const cudaError_t e =
                cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared.shared_bytes()));
            if (e == cudaSuccess) {
              // A hint (the most shared memory per SM, so the two blocks' 2 x 64 KiB fit); ignored if refused.
              if (cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100) != cudaSuccess)
                cudaGetLastError();
              RT_LAUNCH_WITH_SHARED(rows, shared.threads, size_t(shared.shared_bytes()), stream,
                        softmax_registers_kernel<T, kVecs, false, true>)(
                  x, y, L.outer, shared.packs, log);
              return;
            }
            cudaGetLastError();  // the refused attribute is not an error of this op; on an H200 (227 KiB
                                 // per block) this fallback is never taken
          }
        }
        RT_LAUNCH(rows, plan.threads, stream, softmax_registers_kernel<T, kVecs, false>)(
            x, y, L.outer, plan.packs, log);
      });
    } else if (L.inner == 1 && L.n <= kWarpRowsMax) {
      RT_LAUNCH(row_blocks(L.outer, true), 32 * kRowsPerBlock, stream, softmax_rows_kernel<T, true>)(
          x, y, L.outer, L.n, log);
    } else if (L.inner == 1) {
      RT_LAUNCH(row_blocks(L.outer, false), kLongRowThreads, stream, softmax_rows_kernel<T, false>)(
          x, y, L.outer, L.n, log);
    } else {
      RT_LAUNCH(grid_for(L.outer * L.inner), kBlock, stream, softmax_columns_kernel<T>)(
          x, y, L.outer, L.n, L.inner, log);
    }
    check_launch(op);
  });
}

void softmax_backward(const TensorArg& grad_in, const TensorArg& out, const TensorArg& grad_out, int64_t dim,
                      bool log, cudaStream_t stream) {
  const char* op = log ? "log_softmax_backward" : "softmax_backward";
  require_contiguous(grad_in, op, "grad_input");
  check_same(grad_in, out, op, "output");
  check_same(grad_in, grad_out, op, "grad_output");
  const Layout L = layout_of(out, dim, op);
  if (out.numel() == 0) return;
  visit_floating(out.dtype, op, [&]<typename T>() {
    const T* y = static_cast<const T*>(out.data);
    const T* g = static_cast<const T*>(grad_out.data);
    T* gx = static_cast<T*>(grad_in.data);
    const bool rows_layout = L.inner == 1;  // plans as the forward's
    const RowPlan warp_plan = rows_layout && L.n <= kWarpRowsMax
                                  ? aligned_warp_plan(L.n, int(sizeof(T)), kWarpRowMaxVecs, {y, g, gx})
                                  : RowPlan{};
    const RowPlan plan = rows_layout && !warp_plan.vecs
                             ? aligned_row_plan(L.n, int(sizeof(T)), kBackwardMaxVecs<T>, {y, g, gx})
                             : RowPlan{};
    if (warp_plan.vecs) {
      visit_row_vecs<kWarpRowMaxVecs>(warp_plan.vecs, [&]<int kVecs>() {
        RT_LAUNCH(row_blocks(L.outer, true), 32 * kRowsPerBlock, stream,
                  softmax_backward_registers_kernel<T, kVecs, true>)(
            y, g, gx, L.outer, warp_plan.packs, log);
      });
    } else if (plan.vecs) {
      const unsigned rows = row_blocks(L.outer, false);
      visit_row_vecs<kBackwardMaxVecs<T>>(plan.vecs, [&]<int kVecs>() {
        RT_LAUNCH(rows, plan.threads, stream, softmax_backward_registers_kernel<T, kVecs, false>)(y, g, gx, L.outer,
                                                                                              plan.packs, log);
      });
    } else if (L.inner == 1 && L.n <= kWarpRowsMax) {
      RT_LAUNCH(row_blocks(L.outer, true), 32 * kRowsPerBlock, stream, softmax_backward_rows_kernel<T, true>)(
          y, g, gx, L.outer, L.n, log);
    } else if (L.inner == 1) {
      RT_LAUNCH(row_blocks(L.outer, false), kLongRowThreads, stream, softmax_backward_rows_kernel<T, false>)(
          y, g, gx, L.outer, L.n, log);
    } else {
      RT_LAUNCH(grid_for(L.outer * L.inner), kBlock, stream, softmax_backward_columns_kernel<T>)(
          y, g, gx, L.outer, L.n, L.inner, log);
    }
    check_launch(op);
  });
}

}  // namespace rt::cuda_kernels
