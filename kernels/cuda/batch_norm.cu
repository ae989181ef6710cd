// batch_norm forward (training / eval) and backward. See kernels/cuda/batch_norm.h.
#include <string>

#include "cuda/batch_norm.h"
#include "cuda/block_reduce.cuh"
#include "cuda/launch.h"
#include "cuda/nn_dtype.cuh"
#include "cuda/kernel_macros.cuh"

namespace rt::cuda_kernels {
namespace {

constexpr int kChannelThreads = 512;

struct ChannelLayout {
  int64_t n = 1, c = 1, inner = 1;
  __host__ __device__ int64_t count() const { return n * inner; }
  // Flat offset of the idx-th element of channel ch (idx over n * inner).
  __device__ int64_t offset(int64_t ch, int64_t idx) const { return ((idx / inner) * c + ch) * inner + idx % inner; }
};

// A per-channel parameter or statistic of any floating dtype (null data = absent).
struct ParamRef {
  void* data = nullptr;
  ScalarType dtype = kFloat32;
  __device__ double load(int64_t i, double absent) const {
    if (!data) return absent;
    switch (dtype) {
      case kFloat16: return double(__half2float(static_cast<const __half*>(data)[i]));
      case kBFloat16: return double(__bfloat162float(static_cast<const __nv_bfloat16*>(data)[i]));
      case kFloat32: return double(static_cast<const float*>(data)[i]);
      default: return static_cast<const double*>(data)[i];
    }
  }
  __device__ void store(int64_t i, double v) const {
    if (!data) return;
    switch (dtype) {
      case kFloat16: static_cast<__half*>(data)[i] = __float2half_rn(float(v)); break;
      case kBFloat16: static_cast<__nv_bfloat16*>(data)[i] = __float2bfloat16_rn(float(v)); break;
      case kFloat32: static_cast<float*>(data)[i] = float(v); break;
      default: static_cast<double*>(data)[i] = v;
    }
  }
};

ParamRef ref_of(const TensorArg& t) { return ParamRef{t.data, t.dtype}; }

// Training: one block per channel computes mean and biased variance, saves mean/invstd and
// updates the running stats. Eval: derives mean/invstd from the running stats.
template <typename T>
__global__ void batch_stats_kernel(const T* __restrict__ x, ChannelLayout L, bool training, double momentum, double eps,
                                   ParamRef running_mean, ParamRef running_var, double* __restrict__ save_mean,
                                   double* __restrict__ save_invstd) {
  using A = acc_t<T>;
  RT_SHARED(smem, A[32]);
  const int64_t ch = blockIdx.x;
  if (!training) {
    if (threadIdx.x == 0) {
      save_mean[ch] = running_mean.load(ch, 0.0);
      save_invstd[ch] = 1.0 / sqrt(running_var.load(ch, 1.0) + eps);
    }
    return;
  }
  const int64_t count = L.count();
  A s = 0;
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x) s += to_acc(x[L.offset(ch, i)]);
  const A mu = block_all_reduce(s, SumOp{}, smem) / A(count);
  A q = 0;
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
    const A d = to_acc(x[L.offset(ch, i)]) - mu;
    q += d * d;
  }
  const double var = double(block_all_reduce(q, SumOp{}, smem) / A(count));
  if (threadIdx.x == 0) {
    save_mean[ch] = double(mu);
    save_invstd[ch] = 1.0 / sqrt(var + eps);
    if (running_mean.data) running_mean.store(ch, (1.0 - momentum) * running_mean.load(ch, 0.0) + momentum * double(mu));
    if (running_var.data)
      running_var.store(ch, (1.0 - momentum) * running_var.load(ch, 0.0) +
                                momentum * var * (double(count) / double(count - 1)));
  }
}

template <typename T>
__global__ void batch_norm_apply_kernel(const T* __restrict__ x, T* __restrict__ y, ChannelLayout L, ParamRef w,
                                        ParamRef b, const double* __restrict__ mean, const double* __restrict__ invstd) {
  using C = acc_t<T>;
  const int64_t total = L.count() * L.c;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t ch = (e / L.inner) % L.c;
    const C scale = C(invstd[ch]) * C(w.load(ch, 1.0));
    const C shift = C(b.load(ch, 0.0)) - C(mean[ch]) * scale;
    y[e] = from_acc<T>(to_acc(x[e]) * scale + shift);
  }
}

template <typename T>
__global__ void batch_norm_backward_kernel(const T* __restrict__ x, const T* __restrict__ g, ChannelLayout L,
                                           ParamRef w, const double* __restrict__ mean,
                                           const double* __restrict__ invstd, bool training, T* __restrict__ dx,
                                           ParamRef dw, ParamRef db) {
  using A = acc_t<T>;
  RT_SHARED(smem, A[32]);
  const int64_t ch = blockIdx.x, count = L.count();
  const A mu = A(mean[ch]), is = A(invstd[ch]);
  A sg = 0, sgx = 0;
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
    const int64_t k = L.offset(ch, i);
    const A gv = to_acc(g[k]);
    sg += gv;
    sgx += gv * (to_acc(x[k]) - mu) * is;
  }
  sg = block_all_reduce(sg, SumOp{}, smem);
  sgx = block_all_reduce(sgx, SumOp{}, smem);
  if (threadIdx.x == 0) dw.store(ch, double(sgx)), db.store(ch, double(sg));
  if (!dx) return;
  const A wc = A(w.load(ch, 1.0)), m = A(count);
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
    const int64_t k = L.offset(ch, i);
    const A gv = to_acc(g[k]);
    const A d = training ? wc * is * (gv - sg / m - (to_acc(x[k]) - mu) * is * sgx / m) : gv * wc * is;
    dx[k] = from_acc<T>(d);
  }
}

ChannelLayout layout_of(const TensorArg& x, const char* op) {
  require_contiguous(x, op, "input");
  if (x.ndim < 2) throw ShapeError(std::string(op) + " on CUDA: expected input of shape [N, C] or [N, C, ...]");
  ChannelLayout L;
  L.n = x.sizes[0], L.c = x.sizes[1];
  for (int d = 2; d < x.ndim; ++d) L.inner *= x.sizes[d];
  if (L.c > 0x7fffffffLL) throw ValueError(std::string(op) + " on CUDA: too many channels for one launch");
  return L;
}

void check_channel_arg(const TensorArg& t, int64_t C, const char* op, const char* name, bool f64 = false) {
  if (!t.data) return;
  require_contiguous(t, op, name);
  if (t.numel() != C)
    throw ShapeError(std::string(op) + " on CUDA: " + name + " has " + std::to_string(t.numel()) + " elements, expected " +
                     std::to_string(C) + " (one per channel)");
  if (f64) require_dtype(t, kFloat64, op, name);
  else if (!is_floating(t.dtype))
    throw DTypeError(std::string(op) + " on CUDA: " + name + " must be floating point, got " + std::string(dtype_name(t.dtype)));
}

}  // namespace

void batch_norm_forward(const TensorArg& out, const TensorArg& save_mean, const TensorArg& save_invstd,
                        const TensorArg& x, const TensorArg& weight, const TensorArg& bias,
                        const TensorArg& running_mean, const TensorArg& running_var, bool training, double momentum,
                        double eps, cudaStream_t stream) {
  const char* op = "batch_norm";
  const ChannelLayout L = layout_of(x, op);
  require_contiguous(out, op, "output");
  require_dtype(out, x.dtype, op, "output");
  for (const auto& [t, name] : {std::pair{&weight, "weight"}, {&bias, "bias"}, {&running_mean, "running_mean"},
                                {&running_var, "running_var"}})
    check_channel_arg(*t, L.c, op, name);
  if (!save_mean.data || !save_invstd.data)
    throw ValueError("batch_norm on CUDA: save_mean and save_invstd (float64 [C]) are required");
  check_channel_arg(save_mean, L.c, op, "save_mean", true);
  check_channel_arg(save_invstd, L.c, op, "save_invstd", true);
  if (!training && (!running_mean.data || !running_var.data))
    throw ValueError("batch_norm on CUDA: running_mean and running_var must be defined in eval mode (training=false)");
  if (training && L.count() <= 1)
    throw ValueError("batch_norm on CUDA: expected more than 1 value per channel when training, got " +
                     std::to_string(L.count()));
  if (L.c == 0) return;
  visit_floating(x.dtype, op, [&]<typename T>() {
    double* mean = static_cast<double*>(save_mean.data);
    double* invstd = static_cast<double*>(save_invstd.data);
    RT_LAUNCH(unsigned(L.c), kChannelThreads, stream, batch_stats_kernel<T>)(
        static_cast<const T*>(x.data), L, training, momentum, eps, ref_of(running_mean), ref_of(running_var), mean, invstd);
    check_launch("batch_norm (statistics)");
    if (x.numel() == 0) return;
    RT_LAUNCH(grid_for(x.numel()), kBlock, stream, batch_norm_apply_kernel<T>)(
        static_cast<const T*>(x.data), static_cast<T*>(out.data), L, ref_of(weight), ref_of(bias), mean, invstd);
    check_launch("batch_norm (apply)");
  });
}

void batch_norm_backward(const TensorArg& grad_input, const TensorArg& grad_weight, const TensorArg& grad_bias,
                         const TensorArg& grad_out, const TensorArg& x, const TensorArg& weight,
                         const TensorArg& save_mean, const TensorArg& save_invstd, bool training, cudaStream_t stream) {
  const char* op = "batch_norm_backward";
  const ChannelLayout L = layout_of(x, op);
  require_contiguous(grad_out, op, "grad_output");
  require_dtype(grad_out, x.dtype, op, "grad_output");
  if (grad_input.data) {
    require_contiguous(grad_input, op, "grad_input");
    require_dtype(grad_input, x.dtype, op, "grad_input");
  }
  for (const auto& [t, name] : {std::pair{&weight, "weight"}, {&grad_weight, "grad_weight"}, {&grad_bias, "grad_bias"}})
    check_channel_arg(*t, L.c, op, name);
  check_channel_arg(save_mean, L.c, op, "save_mean", true);
  check_channel_arg(save_invstd, L.c, op, "save_invstd", true);
  if (L.c == 0) return;
  visit_floating(x.dtype, op, [&]<typename T>() {
    RT_LAUNCH(unsigned(L.c), kChannelThreads, stream, batch_norm_backward_kernel<T>)(
        static_cast<const T*>(x.data), static_cast<const T*>(grad_out.data), L, ref_of(weight),
        static_cast<const double*>(save_mean.data), static_cast<const double*>(save_invstd.data), training,
        static_cast<T*>(grad_input.data), ref_of(grad_weight), ref_of(grad_bias));
    check_launch(op);
  });
}

}  // namespace rt::cuda_kernels
