// layer_norm forward/backward. See kernels/cuda/layer_norm.h.
#include <algorithm>
#include <initializer_list>
#include <string>

#include "cuda/block_reduce.cuh"
#include "cuda/launch.h"
#include "cuda/layer_norm.h"
#include "cuda/nn_dtype.cuh"
#include "cuda/pack.cuh"
#include "cuda/row_plan.h"
#include "cuda/kernel_macros.cuh"

namespace rt::cuda_kernels {
namespace {

constexpr int kWarpRowsMax = 1024;  // rows up to this length get one warp each
constexpr int kRowsPerBlock = 4;
// Threads of a register-row kernel's block: its launch bound.
constexpr int row_block_threads(bool warp) { return warp ? 32 * kRowsPerBlock : kRowMaxThreads; }
constexpr int kLongRowThreads = 512;
// Packs per thread of the register kernels (row_plan.h): the backward holds two rows.
template <typename T>
constexpr int kForwardMaxVecs = max_row_vecs(sizeof(T), 1);
template <typename T>
constexpr int kBackwardMaxVecs = max_row_vecs(sizeof(T), 2);
// Parameter-grad reduction: blocks of 32 columns x 16 row lanes, each block covering kChunkRows rows.
constexpr int kColTile = 32, kRowLanes = 16;
constexpr int64_t kChunkRows = 256;

template <typename T, bool kWarp>
__global__ void layer_norm_forward_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                                          T* __restrict__ y, double* __restrict__ mean, double* __restrict__ rstd,
                                          int64_t M, int64_t D, double eps) {
  using G = RowGroup<kWarp>;
  using A = acc_t<T>;
  RT_SHARED(smem, A[32]);
  const int64_t r = G::row(kRowsPerBlock);
  if (kWarp && r >= M) return;
  const T* xr = x + r * D;
  A s = 0;
  for (int64_t j = G::rank(); j < D; j += G::size()) s += to_acc(xr[j]);
  const A mu = G::all_reduce(s, SumOp{}, smem) / A(D);
  A v = 0;
  for (int64_t j = G::rank(); j < D; j += G::size()) {
    const A d = to_acc(xr[j]) - mu;
    v += d * d;
  }
  const A rs = A(1) / sqrt(G::all_reduce(v, SumOp{}, smem) / A(D) + A(eps));
  if (G::rank() == 0) mean[r] = double(mu), rstd[r] = double(rs);
  T* yr = y + r * D;
  for (int64_t j = G::rank(); j < D; j += G::size()) {
    A h = (to_acc(xr[j]) - mu) * rs;
    if (w) h *= to_acc(w[j]);
    if (b) h += to_acc(b[j]);
    yr[j] = from_acc<T>(h);
  }
}

// The row in registers (row_plan.h): one read of x, one write of y; mean and variance from the registers
// (two passes, as the streaming kernel's). weight and bias packs are read where they are applied. A warp
// per row (kWarp, rows up to 1024 elements) or a block per row.
template <typename T, int kVecs, bool kWarp>
__global__ void RT_LAUNCH_BOUNDS(row_block_threads(kWarp))
    layer_norm_registers_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                                T* __restrict__ y, double* __restrict__ mean, double* __restrict__ rstd, int64_t M,
                                int64_t packs, int64_t D, double eps) {
  RT_CHECK_LAUNCH_BOUNDS(row_block_threads(kWarp));
  using G = RowGroup<kWarp>;
  using A = acc_t<T>;
  constexpr int kPer = kPack16<T>;
  RT_SHARED(smem, A[32]);
  const int64_t r = G::row(kRowsPerBlock), row = r * D;
  if (kWarp && r >= M) return;  // the whole warp leaves together
  Pack16<T> v[kVecs];
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int64_t i = G::rank() + int64_t(k) * G::size();
    if (i < packs) v[k] = load_pack<T, kPer>(x, row + i * kPer);
  }
  A s = 0;
#pragma unroll
  for (int k = 0; k < kVecs; ++k)
    if (G::rank() + int64_t(k) * G::size() < packs)
#pragma unroll
      for (int e = 0; e < kPer; ++e) s += to_acc(v[k].v[e]);
  const A mu = G::all_reduce(s, SumOp{}, smem) / A(D);
  A var = 0;
#pragma unroll
  for (int k = 0; k < kVecs; ++k)
    if (G::rank() + int64_t(k) * G::size() < packs)
#pragma unroll
      for (int e = 0; e < kPer; ++e) {
        const A d = to_acc(v[k].v[e]) - mu;
        var += d * d;
      }
  const A rs = A(1) / sqrt(G::all_reduce(var, SumOp{}, smem) / A(D) + A(eps));
  if (G::rank() == 0) mean[r] = double(mu), rstd[r] = double(rs);
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int64_t i = G::rank() + int64_t(k) * G::size();
    if (i < packs) {
      Pack16<T> wv, bv, o;
      if (w) wv = load_pack<T, kPer>(w, i * kPer);
      if (b) bv = load_pack<T, kPer>(b, i * kPer);
#pragma unroll
      for (int e = 0; e < kPer; ++e) {
        A h = (to_acc(v[k].v[e]) - mu) * rs;
        if (w) h *= to_acc(wv.v[e]);
        if (b) h += to_acc(bv.v[e]);
        o.v[e] = from_acc<T>(h);
      }
      store_pack<T, kPer>(y, row + i * kPer, o);
    }
  }
}

template <typename T, bool kWarp>
__global__ void layer_norm_grad_input_kernel(const T* __restrict__ x, const T* __restrict__ w,
                                             const T* __restrict__ g, const double* __restrict__ mean,
                                             const double* __restrict__ rstd, T* __restrict__ dx, int64_t M,
                                             int64_t D) {
  using G = RowGroup<kWarp>;
  using A = acc_t<T>;
  RT_SHARED(smem, A[32]);
  const int64_t r = G::row(kRowsPerBlock);
  if (kWarp && r >= M) return;
  const T* xr = x + r * D;
  const T* gr = g + r * D;
  const A mu = A(mean[r]), rs = A(rstd[r]);
  A sa = 0, sb = 0;
  for (int64_t j = G::rank(); j < D; j += G::size()) {
    const A gw = to_acc(gr[j]) * (w ? to_acc(w[j]) : A(1));
    sa += gw;
    sb += gw * (to_acc(xr[j]) - mu) * rs;
  }
  sa = G::all_reduce(sa, SumOp{}, smem) / A(D);
  sb = G::all_reduce(sb, SumOp{}, smem) / A(D);
  T* o = dx + r * D;
  for (int64_t j = G::rank(); j < D; j += G::size()) {
    const A gw = to_acc(gr[j]) * (w ? to_acc(w[j]) : A(1));
    o[j] = from_acc<T>(rs * (gw - sa - (to_acc(xr[j]) - mu) * rs * sb));
  }
}

// grad_input with the rows of x and grad_output in registers: one read of each, one write of dx; a warp
// or a block per row as the forward.
template <typename T, int kVecs, bool kWarp>
__global__ void RT_LAUNCH_BOUNDS(row_block_threads(kWarp))
    layer_norm_grad_input_registers_kernel(const T* __restrict__ x, const T* __restrict__ w,
                                           const T* __restrict__ g, const double* __restrict__ mean,
                                           const double* __restrict__ rstd, T* __restrict__ dx, int64_t M,
                                           int64_t packs, int64_t D) {
  RT_CHECK_LAUNCH_BOUNDS(row_block_threads(kWarp));
  using G = RowGroup<kWarp>;
  using A = acc_t<T>;
  constexpr int kPer = kPack16<T>;
  RT_SHARED(smem, A[32]);
  const int64_t r = G::row(kRowsPerBlock), row = r * D;
  if (kWarp && r >= M) return;
  Pack16<T> xv[kVecs], gv[kVecs];
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int64_t i = G::rank() + int64_t(k) * G::size();
    if (i < packs) xv[k] = load_pack<T, kPer>(x, row + i * kPer), gv[k] = load_pack<T, kPer>(g, row + i * kPer);
  }
  const A mu = A(mean[r]), rs = A(rstd[r]);
  A sa = 0, sb = 0;
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int64_t i = G::rank() + int64_t(k) * G::size();
    if (i < packs) {
      Pack16<T> wv;
      if (w) wv = load_pack<T, kPer>(w, i * kPer);
#pragma unroll
      for (int e = 0; e < kPer; ++e) {
        const A gw = to_acc(gv[k].v[e]) * (w ? to_acc(wv.v[e]) : A(1));
        sa += gw;
        sb += gw * (to_acc(xv[k].v[e]) - mu) * rs;
      }
    }
  }
  sa = G::all_reduce(sa, SumOp{}, smem) / A(D);
  sb = G::all_reduce(sb, SumOp{}, smem) / A(D);
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int64_t i = G::rank() + int64_t(k) * G::size();
    if (i < packs) {
      Pack16<T> wv, o;
      if (w) wv = load_pack<T, kPer>(w, i * kPer);
#pragma unroll
      for (int e = 0; e < kPer; ++e) {
        const A gw = to_acc(gv[k].v[e]) * (w ? to_acc(wv.v[e]) : A(1));
        o.v[e] = from_acc<T>(rs * (gw - sa - (to_acc(xv[k].v[e]) - mu) * rs * sb));
      }
      store_pack<T, kPer>(dx, row + i * kPer, o);
    }
  }
}

// partial[chunk][0][j] = sum over the chunk's rows of g * xhat, partial[chunk][1][j] = sum of g.
// Blocks stride over the chunks in y (gridDim.y is at most 65535; more chunks than that take turns).
template <typename T>
__global__ void layer_norm_param_partials_kernel(const T* __restrict__ x, const T* __restrict__ g,
                                                 const double* __restrict__ mean, const double* __restrict__ rstd,
                                                 acc_t<T>* __restrict__ partial, int64_t M, int64_t D, int64_t chunks) {
  using A = acc_t<T>;
  RT_SHARED(sw, A[kRowLanes][kColTile + 1]);
  RT_SHARED(sb, A[kRowLanes][kColTile + 1]);
  const int64_t j = int64_t(blockIdx.x) * kColTile + threadIdx.x;
  for (int64_t chunk = blockIdx.y; chunk < chunks; chunk += gridDim.y) {  // the same trip count in the whole block
    const int64_t r0 = chunk * kChunkRows, r1 = min(M, r0 + kChunkRows);
    A aw = 0, ab = 0;
    if (j < D)
      for (int64_t r = r0 + threadIdx.y; r < r1; r += kRowLanes) {
        const A gv = to_acc(g[r * D + j]);
        aw += gv * (to_acc(x[r * D + j]) - A(mean[r])) * A(rstd[r]);
        ab += gv;
      }
    sw[threadIdx.y][threadIdx.x] = aw;
    sb[threadIdx.y][threadIdx.x] = ab;
    __syncthreads();
    if (threadIdx.y == 0 && j < D) {
      for (int k = 1; k < kRowLanes; ++k) aw += sw[k][threadIdx.x], ab += sb[k][threadIdx.x];
      partial[chunk * 2 * D + j] = aw;
      partial[chunk * 2 * D + D + j] = ab;
    }
    __syncthreads();  // row lane 0 has read the tiles before the next chunk overwrites them
  }
}

template <typename A, typename W, typename B>
__global__ void layer_norm_param_finish_kernel(const A* __restrict__ partial, int64_t chunks, int64_t D, W* dw, B* db) {
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < D; j += int64_t(gridDim.x) * blockDim.x) {
    double sw = 0, sb = 0;
    for (int64_t c = 0; c < chunks; ++c) sw += double(partial[c * 2 * D + j]), sb += double(partial[c * 2 * D + D + j]);
    if (dw) dw[j] = from_acc<W>(sw);
    if (db) db[j] = from_acc<B>(sb);
  }
}

int64_t chunks_for(int64_t M) { return (M + kChunkRows - 1) / kChunkRows; }

void check_rows(const TensorArg& x, int64_t D, const char* op, int64_t& M) {
  if (D <= 0) throw ValueError(std::string(op) + " on CUDA: normalized size D must be positive, got " + std::to_string(D));
  const int64_t n = x.numel();
  if (n % D != 0)
    throw ShapeError(std::string(op) + " on CUDA: input has " + std::to_string(n) +
                     " elements, not a multiple of the normalized size " + std::to_string(D));
  M = n / D;
  if (M > 0x7fffffffLL)
    throw ValueError(std::string(op) + " on CUDA: too many rows (" + std::to_string(M) + ") for one launch");
}

void check_param(const TensorArg& p, const TensorArg& x, int64_t D, const char* op, const char* name) {
  if (!p.data) return;
  require_contiguous(p, op, name);
  require_dtype(p, x.dtype, op, name);
  if (p.numel() != D)
    throw ShapeError(std::string(op) + " on CUDA: " + name + " has " + std::to_string(p.numel()) +
                     " elements, expected the normalized size " + std::to_string(D));
}

void check_stats(const TensorArg& s, int64_t M, const char* op, const char* name) {
  require_contiguous(s, op, name);
  require_dtype(s, kFloat64, op, name);
  if (s.numel() != M)
    throw ShapeError(std::string(op) + " on CUDA: " + name + " has " + std::to_string(s.numel()) + " elements, expected " +
                     std::to_string(M) + " (one per row)");
}

template <typename T>
const T* ptr(const TensorArg& t) { return static_cast<const T*>(t.data); }

}  // namespace

void layer_norm_forward(const TensorArg& out, const TensorArg& mean, const TensorArg& rstd, const TensorArg& x,
                        const TensorArg& weight, const TensorArg& bias, int64_t D, double eps, cudaStream_t stream) {
  const char* op = "layer_norm";
  int64_t M = 0;
  check_rows(x, D, op, M);
  require_contiguous(x, op, "input");
  require_contiguous(out, op, "output");
  require_dtype(out, x.dtype, op, "output");
  check_param(weight, x, D, op, "weight");
  check_param(bias, x, D, op, "bias");
  check_stats(mean, M, op, "mean");
  check_stats(rstd, M, op, "rstd");
  if (M == 0) return;
  visit_floating(x.dtype, op, [&]<typename T>() {
    double* mp = static_cast<double*>(mean.data);
    double* rp = static_cast<double*>(rstd.data);
    T* y = static_cast<T*>(out.data);
    const std::initializer_list<const void*> bases = {x.data, weight.data, bias.data, y};
    // Rows in registers: a warp each up to 1024 elements, else a block each; rows that are not whole
    // aligned packs stream.
    const RowPlan warp_plan =
        D <= kWarpRowsMax ? aligned_warp_plan(D, int(sizeof(T)), kWarpRowMaxVecs, bases) : RowPlan{};
    const RowPlan plan = !warp_plan.vecs ? aligned_row_plan(D, int(sizeof(T)), kForwardMaxVecs<T>, bases) : RowPlan{};
    if (warp_plan.vecs)
      visit_row_vecs<kWarpRowMaxVecs>(warp_plan.vecs, [&]<int kVecs>() {
        RT_LAUNCH(unsigned((M + kRowsPerBlock - 1) / kRowsPerBlock), 32 * kRowsPerBlock, stream,
                  layer_norm_registers_kernel<T, kVecs, true>)(
            ptr<T>(x), ptr<T>(weight), ptr<T>(bias), y, mp, rp, M, warp_plan.packs, D, eps);
      });
    else if (plan.vecs)
      visit_row_vecs<kForwardMaxVecs<T>>(plan.vecs, [&]<int kVecs>() {
        RT_LAUNCH(unsigned(M), plan.threads, stream, layer_norm_registers_kernel<T, kVecs, false>)(
            ptr<T>(x), ptr<T>(weight), ptr<T>(bias), y, mp, rp, M, plan.packs, D, eps);
      });
    else if (D <= kWarpRowsMax)
      RT_LAUNCH(unsigned((M + kRowsPerBlock - 1) / kRowsPerBlock), 32 * kRowsPerBlock, stream,
                layer_norm_forward_kernel<T, true>)(
          ptr<T>(x), ptr<T>(weight), ptr<T>(bias), y, mp, rp, M, D, eps);
    else
      RT_LAUNCH(unsigned(M), kLongRowThreads, stream, layer_norm_forward_kernel<T, false>)(
          ptr<T>(x), ptr<T>(weight), ptr<T>(bias), y, mp, rp, M, D, eps);
    check_launch(op);
  });
}

size_t layer_norm_backward_scratch_bytes(ScalarType dtype, int64_t M, int64_t D) {
  const size_t acc = dtype == kFloat64 ? sizeof(double) : sizeof(float);
  return size_t(chunks_for(M)) * 2 * size_t(D) * acc;
}

void layer_norm_backward(const TensorArg& grad_input, const TensorArg& grad_weight, const TensorArg& grad_bias,
                         const TensorArg& grad_out, const TensorArg& x, const TensorArg& weight, const TensorArg& mean,
                         const TensorArg& rstd, int64_t D, void* scratch, cudaStream_t stream) {
  const char* op = "layer_norm_backward";
  int64_t M = 0;
  check_rows(x, D, op, M);
  require_contiguous(x, op, "input");
  require_contiguous(grad_out, op, "grad_output");
  require_dtype(grad_out, x.dtype, op, "grad_output");
  if (grad_out.numel() != x.numel()) throw ShapeError("layer_norm_backward on CUDA: grad_output and input differ in size");
  check_param(weight, x, D, op, "weight");
  check_stats(mean, M, op, "mean");
  check_stats(rstd, M, op, "rstd");
  const bool params = grad_weight.data || grad_bias.data;
  for (const TensorArg* p : {&grad_weight, &grad_bias})
    if (p->data) {
      require_contiguous(*p, op, "parameter grad");
      if (p->numel() != D) throw ShapeError("layer_norm_backward on CUDA: parameter grads must have D elements");
    }
  if (params && !scratch && M > 0)
    throw ValueError("layer_norm_backward on CUDA: weight/bias grads need layer_norm_backward_scratch_bytes() of scratch");
  if (M == 0) {  // an empty batch: the parameters' gradients are zero (the engine allocates them uninitialised)
    for (const TensorArg* p : {&grad_weight, &grad_bias})
      if (p->data) check_cuda(cudaMemsetAsync(p->data, 0, size_t(D) * element_size(p->dtype), stream), op);
    return;
  }
  visit_floating(x.dtype, op, [&]<typename T>() {
    using A = acc_t<T>;
    const double* mp = static_cast<const double*>(mean.data);
    const double* rp = static_cast<const double*>(rstd.data);
    if (grad_input.data) {
      require_contiguous(grad_input, op, "grad_input");
      require_dtype(grad_input, x.dtype, op, "grad_input");
      T* dx = static_cast<T*>(grad_input.data);
      const std::initializer_list<const void*> bases = {x.data, weight.data, grad_out.data, dx};
      const RowPlan warp_plan =
          D <= kWarpRowsMax ? aligned_warp_plan(D, int(sizeof(T)), kWarpRowMaxVecs, bases) : RowPlan{};
      const RowPlan plan =
          !warp_plan.vecs ? aligned_row_plan(D, int(sizeof(T)), kBackwardMaxVecs<T>, bases) : RowPlan{};
      if (warp_plan.vecs)
        visit_row_vecs<kWarpRowMaxVecs>(warp_plan.vecs, [&]<int kVecs>() {
          RT_LAUNCH(unsigned((M + kRowsPerBlock - 1) / kRowsPerBlock), 32 * kRowsPerBlock, stream,
                    layer_norm_grad_input_registers_kernel<T, kVecs, true>)(
              ptr<T>(x), ptr<T>(weight), ptr<T>(grad_out), mp, rp, dx, M, warp_plan.packs, D);
        });
      else if (plan.vecs)
        visit_row_vecs<kBackwardMaxVecs<T>>(plan.vecs, [&]<int kVecs>() {
          RT_LAUNCH(unsigned(M), plan.threads, stream, layer_norm_grad_input_registers_kernel<T, kVecs, false>)(
              ptr<T>(x), ptr<T>(weight), ptr<T>(grad_out), mp, rp, dx, M, plan.packs, D);
        });
      else if (D <= kWarpRowsMax)
        RT_LAUNCH(unsigned((M + kRowsPerBlock - 1) / kRowsPerBlock), 32 * kRowsPerBlock, stream,
                  layer_norm_grad_input_kernel<T, true>)(
            ptr<T>(x), ptr<T>(weight),
                                                                                 ptr<T>(grad_out), mp, rp, dx, M, D);
      else
        RT_LAUNCH(unsigned(M), kLongRowThreads, stream, layer_norm_grad_input_kernel<T, false>)(
            ptr<T>(x), ptr<T>(weight), ptr<T>(grad_out), mp, rp, dx, M, D);
      check_launch("layer_norm_backward (grad_input)");
    }
    if (!params) return;
    const int64_t chunks = chunks_for(M);
    A* partial = static_cast<A*>(scratch);
    const dim3 grid(unsigned((D + kColTile - 1) / kColTile), unsigned(std::min<int64_t>(chunks, 65535)));
    RT_LAUNCH(grid, dim3(kColTile, kRowLanes), stream, layer_norm_param_partials_kernel<T>)(
        ptr<T>(x), ptr<T>(grad_out), mp,
                                                                                       rp, partial, M, D, chunks);
    check_launch("layer_norm_backward (parameter partials)");
    const ScalarType wdt = grad_weight.data ? grad_weight.dtype : grad_bias.dtype;
    if (grad_weight.data && grad_bias.data && grad_weight.dtype != grad_bias.dtype)
      throw DTypeError("layer_norm_backward on CUDA: grad_weight and grad_bias must share one dtype");
    visit_floating(wdt, op, [&]<typename W>() {
      RT_LAUNCH(grid_for(D), kBlock, stream, layer_norm_param_finish_kernel<A, W, W>)(
          partial, chunks, D, static_cast<W*>(grad_weight.data), static_cast<W*>(grad_bias.data));
      check_launch("layer_norm_backward (parameter sums)");
    });
  });
}

}  // namespace rt::cuda_kernels
