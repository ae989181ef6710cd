// cross_entropy / nll_loss forward and backward. See kernels/cuda/cross_entropy.h.
#include <string>

#include "cuda/block_reduce.cuh"
#include "cuda/cross_entropy.h"
#include "cuda/device_error_flag.cuh"
#include "cuda/launch.h"
#include "cuda/nn_dtype.cuh"
#include "cuda/kernel_macros.cuh"

namespace rt::cuda_kernels {
namespace {

constexpr int kWarpRowsMax = 1024;  // up to this many classes a warp handles one sample
constexpr int kRowsPerBlock = 4;
constexpr int kLongRowThreads = 512;
constexpr int kReduceThreads = 1024;

struct ClassLayout {
  int64_t n = 1, c = 1, inner = 1;
  __host__ __device__ int64_t samples() const { return n * inner; }
};

struct Params {
  ClassLayout L;
  int64_t ignore = -100;
  double eps = 0;
  bool logits = true;
};

// Sample s's logits: element c sits at offset + c * inner.
__device__ __forceinline__ int64_t row_offset(const ClassLayout& L, int64_t s) {
  return (s / L.inner) * L.c * L.inner + s % L.inner;
}

template <typename T, bool kWarp>
__global__ void class_loss_forward_kernel(Params P, const T* __restrict__ x, const int64_t* __restrict__ tgt,
                                          const T* __restrict__ w, double* __restrict__ loss,
                                          double* __restrict__ wsel, double* __restrict__ lse, long long* flag) {
  using G = RowGroup<kWarp>;
  using A = acc_t<T>;
  RT_SHARED(smem, A[32]);
  RT_SHARED(dsmem, double[32]);
  const int64_t s = G::row(kRowsPerBlock), Cn = P.L.c, inner = P.L.inner;
  if (s >= P.L.samples()) return;  // uniform across the group
  const int64_t t = tgt[s];
  const bool first = G::rank() == 0;
  if (t == P.ignore || t < 0 || t >= Cn) {
    if (first) {
      loss[s] = wsel[s] = 0;
      if (lse) lse[s] = 0;
      if (t != P.ignore) report_bad_value(flag, t);
    }
    return;
  }
  const T* xb = x + row_offset(P.L, s);
  double shift = 0;
  if (P.logits) {
    A m = neg_infinity<A>();
    for (int64_t c = G::rank(); c < Cn; c += G::size()) m = MaxOp{}(m, to_acc(xb[c * inner]));
    m = G::all_reduce(m, MaxOp{}, smem);
    A sum = 0;
    for (int64_t c = G::rank(); c < Cn; c += G::size()) sum += exp(to_acc(xb[c * inner]) - m);
    sum = G::all_reduce(sum, SumOp{}, smem);
    shift = double(m) + ::log(double(sum));
  }
  const double wt = w ? double(to_acc(w[t])) : 1.0;
  double l = -(1.0 - P.eps) * wt * (double(to_acc(xb[t * inner])) - shift);
  if (P.eps > 0) {
    double sm = 0;
    for (int64_t c = G::rank(); c < Cn; c += G::size())
      sm += (w ? double(to_acc(w[c])) : 1.0) * (double(to_acc(xb[c * inner])) - shift);
    sm = G::all_reduce(sm, SumOp{}, dsmem);
    l -= P.eps / double(Cn) * sm;
  }
  if (first) {
    loss[s] = l;
    wsel[s] = wt;
    if (lse) lse[s] = shift;
  }
}

// One block: out = sum(loss) (/ sum(wsel) for mean); total_weight = the divisor.
template <typename T>
__global__ void class_loss_reduce_kernel(const double* __restrict__ loss, const double* __restrict__ wsel, int64_t S,
                                         bool mean, T* __restrict__ out, double* __restrict__ total_weight) {
  RT_SHARED(smem, double[32]);
  double l = 0, w = 0;
  for (int64_t s = threadIdx.x; s < S; s += blockDim.x) l += loss[s], w += wsel[s];
  l = block_all_reduce(l, SumOp{}, smem);
  w = block_all_reduce(w, SumOp{}, smem);
  if (threadIdx.x == 0) {
    const double denom = mean ? w : 1.0;
    out[0] = from_acc<T>(l / denom);
    total_weight[0] = denom;
  }
}

template <typename T>
__global__ void class_loss_none_kernel(const double* __restrict__ loss, int64_t S, T* __restrict__ out,
                                       double* __restrict__ total_weight) {
  for (int64_t s = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; s < S; s += int64_t(gridDim.x) * blockDim.x)
    out[s] = from_acc<T>(loss[s]);
  if (blockIdx.x == 0 && threadIdx.x == 0) total_weight[0] = 1.0;
}

template <typename T, bool kWarp>
__global__ void class_loss_backward_kernel(Params P, const T* __restrict__ x, const int64_t* __restrict__ tgt,
                                           const T* __restrict__ w, const double* __restrict__ lse,
                                           const T* __restrict__ g, bool g_per_sample,
                                           const double* __restrict__ total_weight, bool mean, T* __restrict__ gx) {
  using G = RowGroup<kWarp>;
  using C = acc_t<T>;  // compute type: float for the half types, as compute_t on the CPU
  RT_SHARED(dsmem, double[32]);
  const int64_t s = G::row(kRowsPerBlock), Cn = P.L.c, inner = P.L.inner;
  if (s >= P.L.samples()) return;
  const int64_t t = tgt[s];
  const int64_t off = row_offset(P.L, s);
  if (t == P.ignore || t < 0 || t >= Cn) {  // out-of-range targets were rejected by the forward
    for (int64_t c = G::rank(); c < Cn; c += G::size()) gx[off + c * inner] = from_acc<T>(C(0));
    return;
  }
  const double k = P.eps / double(Cn);
  double wsum = double(Cn);
  if (w) {
    wsum = 0;
    for (int64_t c = G::rank(); c < Cn; c += G::size()) wsum += double(to_acc(w[c]));
    wsum = G::all_reduce(wsum, SumOp{}, dsmem);
  }
  const double gs = double(to_acc(g_per_sample ? g[s] : g[0])) * (mean ? 1.0 / total_weight[0] : 1.0);
  const double wt = w ? double(to_acc(w[t])) : 1.0;
  const C l = C(P.logits ? lse[s] : 0.0);
  const C pc = C(P.logits ? ((1.0 - P.eps) * wt + k * wsum) * gs : 0.0);
  const C kg = C(k * gs);
  const C target_term = C((1.0 - P.eps) * wt * gs);
  for (int64_t c = G::rank(); c < Cn; c += G::size()) {
    const C wc = w ? C(to_acc(w[c])) : C(1);
    C v = (P.logits ? exp(C(to_acc(x[off + c * inner])) - l) * pc : C(0)) - kg * wc;
    if (c == t) v -= target_term;
    gx[off + c * inner] = from_acc<T>(v);
  }
}

ClassLayout layout_of(const TensorArg& x, const TensorArg& target, const char* op) {
  ClassLayout L;
  if (x.ndim == 0) throw ShapeError(std::string(op) + " on CUDA: input must have shape [C], [N, C] or [N, C, d1, ...]");
  if (x.ndim == 1) {
    L.c = x.sizes[0];
  } else {
    L.n = x.sizes[0], L.c = x.sizes[1];
    for (int d = 2; d < x.ndim; ++d) L.inner *= x.sizes[d];
  }
  if (target.numel() != L.samples())
    throw ShapeError(std::string(op) + " on CUDA: target has " + std::to_string(target.numel()) +
                     " elements, expected one class index per sample (" + std::to_string(L.samples()) + ")");
  return L;
}

Params params_of(const TensorArg& x, const TensorArg& target, const TensorArg& weight, int64_t ignore, double eps,
                 bool logits, const char* op) {
  require_contiguous(x, op, "input");
  require_contiguous(target, op, "target");
  require_dtype(target, kInt64, op, "target");
  Params P;
  P.L = layout_of(x, target, op);
  P.ignore = ignore;
  P.eps = eps;
  P.logits = logits;
  if (!(eps >= 0.0 && eps <= 1.0))
    throw ValueError(std::string(op) + " on CUDA: label_smoothing must be between 0.0 and 1.0, got " + std::to_string(eps));
  if (weight.data) {
    require_contiguous(weight, op, "weight");
    require_dtype(weight, x.dtype, op, "weight");
    if (weight.numel() != P.L.c)
      throw ShapeError(std::string(op) + " on CUDA: weight must have one entry per class (" + std::to_string(P.L.c) + ")");
  }
  const int64_t groups = P.L.c <= kWarpRowsMax ? (P.L.samples() + kRowsPerBlock - 1) / kRowsPerBlock : P.L.samples();
  if (groups > 0x7fffffffLL)
    throw ValueError(std::string(op) + " on CUDA: too many samples (" + std::to_string(P.L.samples()) + ") for one launch");
  return P;
}

// Launches kernel<T, warp?> with one group per sample.
template <typename WarpKernel, typename BlockKernel, typename... Args>
void launch_per_sample(const Params& P, cudaStream_t stream, WarpKernel warp_kernel, BlockKernel block_kernel,
                       Args... args) {
  const int64_t S = P.L.samples();
  if (P.L.c <= kWarpRowsMax)
    RT_LAUNCH(unsigned((S + kRowsPerBlock - 1) / kRowsPerBlock), 32 * kRowsPerBlock, stream, warp_kernel)(P, args...);
  else
    RT_LAUNCH(unsigned(S), kLongRowThreads, stream, block_kernel)(P, args...);
}

}  // namespace

size_t cross_entropy_scratch_bytes(int64_t samples) {
  return 2 * size_t(samples) * sizeof(double) + kDeviceErrorFlagBytes;
}

void cross_entropy_forward(const TensorArg& out, const TensorArg& lse, const TensorArg& total_weight,
                           const TensorArg& input, const TensorArg& target, const TensorArg& weight,
                           int64_t ignore_index, LossReduction reduction, double label_smoothing, bool logits,
                           void* scratch, cudaStream_t stream) {
  const char* op = logits ? "cross_entropy" : "nll_loss";
  const Params P = params_of(input, target, weight, ignore_index, label_smoothing, logits, op);
  const int64_t S = P.L.samples();
  require_contiguous(out, op, "output");
  require_dtype(out, input.dtype, op, "output");
  if (out.numel() != (reduction == LossReduction::None ? S : 1))
    throw ShapeError(std::string(op) + " on CUDA: output must have " +
                     (reduction == LossReduction::None ? "one element per sample" : "one element"));
  require_dtype(total_weight, kFloat64, op, "total_weight");
  if (total_weight.numel() != 1) throw ShapeError(std::string(op) + " on CUDA: total_weight must have one element");
  if (logits) {
    require_contiguous(lse, op, "lse");
    require_dtype(lse, kFloat64, op, "lse");
    if (lse.numel() != S) throw ShapeError(std::string(op) + " on CUDA: lse must have one element per sample");
  }
  if (!scratch) throw ValueError(std::string(op) + " on CUDA: scratch of cross_entropy_scratch_bytes(S) is required");
  double* loss = static_cast<double*>(scratch);
  double* wsel = loss + S;
  long long* flag = reinterpret_cast<long long*>(wsel + S);
  double* tw = static_cast<double*>(total_weight.data);
  visit_floating(input.dtype, op, [&]<typename T>() {
    clear_error_flag(flag, stream, op);
    if (S > 0) {
      launch_per_sample(P, stream, class_loss_forward_kernel<T, true>, class_loss_forward_kernel<T, false>,
                        static_cast<const T*>(input.data), static_cast<const int64_t*>(target.data),
                        static_cast<const T*>(weight.data), loss, wsel, logits ? static_cast<double*>(lse.data) : nullptr,
                        flag);
      check_launch(op);
    }
    T* o = static_cast<T*>(out.data);
    if (reduction == LossReduction::None) {
      RT_LAUNCH(grid_for(S), kBlock, stream, class_loss_none_kernel<T>)(loss, S, o, tw);
    } else {
      RT_LAUNCH(1, kReduceThreads, stream, class_loss_reduce_kernel<T>)(
          loss, wsel, S, reduction == LossReduction::Mean, o, tw);
    }
    check_launch(op);
  });
  int64_t bad = 0;
  if (read_error_flag(flag, stream, op, bad))
    throw IndexError(std::string(op) + ": target " + std::to_string(bad) + " is out of bounds for " +
                     std::to_string(P.L.c) + " classes (valid: 0.." + std::to_string(P.L.c - 1) + ", or ignore_index " +
                     std::to_string(ignore_index) + ")");
}

void cross_entropy_backward(const TensorArg& grad_input, const TensorArg& grad_out, const TensorArg& input,
                            const TensorArg& target, const TensorArg& weight, const TensorArg& lse,
                            const TensorArg& total_weight, int64_t ignore_index, LossReduction reduction,
                            double label_smoothing, bool logits, cudaStream_t stream) {
  const char* op = logits ? "cross_entropy_backward" : "nll_loss_backward";
  const Params P = params_of(input, target, weight, ignore_index, label_smoothing, logits, op);
  const int64_t S = P.L.samples();
  require_contiguous(grad_input, op, "grad_input");
  require_dtype(grad_input, input.dtype, op, "grad_input");
  require_contiguous(grad_out, op, "grad_output");
  require_dtype(grad_out, input.dtype, op, "grad_output");
  const bool per_sample = reduction == LossReduction::None;
  if (grad_out.numel() != (per_sample ? S : 1))
    throw ShapeError(std::string(op) + " on CUDA: grad_output must have " + (per_sample ? "one element per sample" : "one element"));
  if (logits && (lse.dtype != kFloat64 || lse.numel() != S))
    throw ShapeError(std::string(op) + " on CUDA: lse must be the forward's float64 [S] log-sum-exp");
  require_dtype(total_weight, kFloat64, op, "total_weight");
  if (S == 0 || input.numel() == 0) return;
  visit_floating(input.dtype, op, [&]<typename T>() {
    launch_per_sample(P, stream, class_loss_backward_kernel<T, true>, class_loss_backward_kernel<T, false>,
                      static_cast<const T*>(input.data), static_cast<const int64_t*>(target.data),
                      static_cast<const T*>(weight.data), logits ? static_cast<const double*>(lse.data) : nullptr,
                      static_cast<const T*>(grad_out.data), per_sample, static_cast<const double*>(total_weight.data),
                      reduction == LossReduction::Mean, static_cast<T*>(grad_input.data));
    check_launch(op);
  });
}

}  // namespace rt::cuda_kernels
