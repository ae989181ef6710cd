// Fused optimizer updates: see optimizer_step.h. Each element runs the CPU optimizer's chain
// of tensor ops in registers; a value the CPU would store in a tensor of the parameter's dtype
// is held as that storage type T here, so it is rounded exactly where the CPU rounds it.
#include <cmath>
#include <cstdint>
#include <string>

#include "cuda/launch.h"
#include "cuda/nn_dtype.cuh"
#include "cuda/optimizer_step.h"
#include "cuda/pack.cuh"
#include "cuda/kernel_macros.cuh"

namespace rt::cuda_kernels {
namespace {

// ---- round-to-nearest arithmetic, never contracted into an FMA (the CPU build has none) ----
__device__ __forceinline__ float rn_add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float rn_sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float rn_mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float rn_div(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ float rn_sqrt(float a) { return __fsqrt_rn(a); }
__device__ __forceinline__ double rn_add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double rn_sub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ double rn_mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double rn_div(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ double rn_sqrt(double a) { return __dsqrt_rn(a); }

// A double rounded to T and widened to T's compute type, on the host: what the CPU computes
// with after converting a wrapped scalar to the tensor's dtype (rt::Half goes through float).
template <typename T>
acc_t<T> rounded(double d) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(__float2half_rn(float(d)));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(__float2bfloat16_rn(float(d)));
  else return acc_t<T>(d);
}

// Elements per 16-byte access of T.
template <typename T>
inline constexpr int kPackOf = 16 / int(sizeof(T));

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// ---- Adam ---------------------------------------------------------------------------------
template <typename T>
struct AdamConsts {
  using C = acc_t<T>;
  C decay;        // 1 - lr * weight_decay, rounded to T (p.mul_(scalar))
  C wd;           // weight_decay (grad.add(p, alpha))
  C w1;           // 1 - beta1 (lerp_ weight)
  C beta2;        // rounded to T (v.mul_(scalar))
  C w2;           // 1 - beta2 (addcmul_ value)
  C bc2_sqrt;     // sqrt(1 - beta2^t), rounded to T (denom.div_(scalar))
  C eps;          // rounded to T (denom.add_(scalar))
  C neg_step;     // -lr / (1 - beta1^t) (addcdiv_ value)
  bool weight_decay, decoupled;
};

template <typename T>
struct AdamTensors {
  T* param;
  T* exp_avg;
  T* exp_avg_sq;
  T* max_exp_avg_sq;  // amsgrad only
  const T* grad;
};

// One element of engine/src/optim/adam.cpp's adam_update.
template <typename T>
__device__ __forceinline__ void adam_element(const AdamConsts<T>& k, T& p, T& m, T& v, T* vmax, T grad) {
  T g = grad;
  if (k.weight_decay) {
    if (k.decoupled) p = from_acc<T>(rn_mul(to_acc(p), k.decay));
    else g = from_acc<T>(rn_add(to_acc(g), rn_mul(k.wd, to_acc(p))));
  }
  m = from_acc<T>(rn_add(to_acc(m), rn_mul(k.w1, rn_sub(to_acc(g), to_acc(m)))));
  v = from_acc<T>(rn_mul(to_acc(v), k.beta2));
  v = from_acc<T>(rn_add(to_acc(v), rn_mul(rn_mul(k.w2, to_acc(g)), to_acc(g))));
  T denom;
  if (vmax) {
    const auto a = to_acc(*vmax), b = to_acc(v);
    if (!(a != a || a > b)) *vmax = v;  // maximum(v_max, v): a NaN in either wins
    denom = from_acc<T>(rn_sqrt(to_acc(*vmax)));
  } else {
    denom = from_acc<T>(rn_sqrt(to_acc(v)));
  }
  denom = from_acc<T>(rn_div(to_acc(denom), k.bc2_sqrt));
  denom = from_acc<T>(rn_add(to_acc(denom), k.eps));
  p = from_acc<T>(rn_add(to_acc(p), rn_div(rn_mul(k.neg_step, to_acc(m)), to_acc(denom))));
}

// V elements per step with 16-byte accesses (V = 1: any alignment); the n % V tail one by one.
template <typename T, int V, bool kAmsgrad>
__global__ void adam_kernel(AdamTensors<T> t, AdamConsts<T> k, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t nvec = n / V;
  for (int64_t j = tid; j < nvec; j += stride) {
    const int64_t i = j * V;
    Pack<T, V> p = load_pack<T, V>(t.param, i), m = load_pack<T, V>(t.exp_avg, i);
    Pack<T, V> v = load_pack<T, V>(t.exp_avg_sq, i);
    const Pack<T, V> g = load_pack<T, V>(t.grad, i);
    Pack<T, V> vm;
    if constexpr (kAmsgrad) vm = load_pack<T, V>(t.max_exp_avg_sq, i);
#pragma unroll
    for (int e = 0; e < V; ++e) adam_element<T>(k, p.v[e], m.v[e], v.v[e], kAmsgrad ? &vm.v[e] : nullptr, g.v[e]);
    store_pack<T, V>(t.param, i, p);
    store_pack<T, V>(t.exp_avg, i, m);
    store_pack<T, V>(t.exp_avg_sq, i, v);
    if constexpr (kAmsgrad) store_pack<T, V>(t.max_exp_avg_sq, i, vm);
  }
  for (int64_t i = nvec * V + tid; i < n; i += stride)
    adam_element<T>(k, t.param[i], t.exp_avg[i], t.exp_avg_sq[i], kAmsgrad ? &t.max_exp_avg_sq[i] : nullptr, t.grad[i]);
}

// ---- SGD ----------------------------------------------------------------------------------
template <typename T>
struct SgdConsts {
  using C = acc_t<T>;
  C wd;           // weight_decay (grad.add(p, alpha))
  C momentum_t;   // momentum rounded to T (buf.mul_(scalar))
  C w_damp;       // 1 - dampening (buf.add_(g, alpha))
  C momentum;     // momentum (grad.add(buf, alpha), nesterov)
  C neg_lr;       // -lr (p.add_(g, alpha))
  bool weight_decay, nesterov, first_step;
};

template <typename T>
struct SgdTensors {
  T* param;
  T* buf;  // null without momentum
  const T* grad;
};

// One element of engine/src/optim/sgd.cpp's SGD::step.
template <typename T>
__device__ __forceinline__ void sgd_element(const SgdConsts<T>& k, T& p, T* buf, T grad) {
  T g = grad;
  if (k.weight_decay) g = from_acc<T>(rn_add(to_acc(g), rn_mul(k.wd, to_acc(p))));
  if (buf) {
    if (k.first_step) {
      *buf = g;
    } else {
      const T b = from_acc<T>(rn_mul(to_acc(*buf), k.momentum_t));
      *buf = from_acc<T>(rn_add(to_acc(b), rn_mul(k.w_damp, to_acc(g))));
    }
    g = k.nesterov ? from_acc<T>(rn_add(to_acc(g), rn_mul(k.momentum, to_acc(*buf)))) : *buf;
  }
  p = from_acc<T>(rn_add(to_acc(p), rn_mul(k.neg_lr, to_acc(g))));
}

template <typename T, int V, bool kMomentum>
__global__ void sgd_kernel(SgdTensors<T> t, SgdConsts<T> k, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t nvec = n / V;
  for (int64_t j = tid; j < nvec; j += stride) {
    const int64_t i = j * V;
    Pack<T, V> p = load_pack<T, V>(t.param, i);
    const Pack<T, V> g = load_pack<T, V>(t.grad, i);
    Pack<T, V> b;
    if constexpr (kMomentum) b = load_pack<T, V>(t.buf, i);
#pragma unroll
    for (int e = 0; e < V; ++e) sgd_element<T>(k, p.v[e], kMomentum ? &b.v[e] : nullptr, g.v[e]);
    store_pack<T, V>(t.param, i, p);
    if constexpr (kMomentum) store_pack<T, V>(t.buf, i, b);
  }
  for (int64_t i = nvec * V + tid; i < n; i += stride) sgd_element<T>(k, t.param[i], kMomentum ? &t.buf[i] : nullptr, t.grad[i]);
}

// ---- host side ----------------------------------------------------------------------------
// `t` must match the parameter: same sizes and dtype, contiguous.
void check_like(const TensorArg& param, const TensorArg& t, const char* op, const char* name) {
  require_dtype(t, param.dtype, op, name);
  require_contiguous(t, op, name);
  bool same = t.ndim == param.ndim;
  for (int d = 0; same && d < t.ndim; ++d) same = t.sizes[d] == param.sizes[d];
  if (!same)
    throw ShapeError(std::string(op) + " on CUDA: " + name +
                     " does not have the parameter's sizes; optimizer state and gradients are shaped like the parameter");
}

// Launches kernel<V> with 16-byte accesses when every pointer allows them, V = 1 otherwise.
template <typename T, typename Launch>
void launch_packed(int64_t n, std::initializer_list<const void*> ptrs, Launch&& launch) {
  bool vec = true;
  for (const void* p : ptrs) vec = vec && (p == nullptr || aligned16(p));
  if (vec) launch.template operator()<kPackOf<T>>(grid_for(n / kPackOf<T> + 1));
  else launch.template operator()<1>(grid_for(n));
}

}  // namespace

void adam_step(const TensorArg& param, const TensorArg& exp_avg, const TensorArg& exp_avg_sq,
               const TensorArg* max_exp_avg_sq, const TensorArg& grad, const AdamStepParams& params,
               cudaStream_t stream) {
  const char* op = params.decoupled_weight_decay ? "adamw_step" : "adam_step";
  visit_floating(param.dtype, op, [&]<typename T>() {
    require_contiguous(param, op, "param");
    check_like(param, grad, op, "grad");
    check_like(param, exp_avg, op, "exp_avg");
    check_like(param, exp_avg_sq, op, "exp_avg_sq");
    if (max_exp_avg_sq) check_like(param, *max_exp_avg_sq, op, "max_exp_avg_sq");
    if (!(params.step >= 1.0))
      throw ValueError(std::string(op) + " on CUDA: step must be the step count after incrementing it (>= 1), got " +
                       std::to_string(params.step));
    const int64_t n = param.numel();
    if (n == 0) return;
    using C = acc_t<T>;
    const double t = params.step;
    const double step_size = params.lr / (1.0 - std::pow(params.beta1, t));  // as adam.cpp
    const double bias_correction2_sqrt = std::sqrt(1.0 - std::pow(params.beta2, t));
    AdamConsts<T> k;
    k.decay = rounded<T>(1.0 - params.lr * params.weight_decay);
    k.wd = C(params.weight_decay);
    k.w1 = C(1.0 - params.beta1);
    k.beta2 = rounded<T>(params.beta2);
    k.w2 = C(1.0 - params.beta2);
    k.bc2_sqrt = rounded<T>(bias_correction2_sqrt);
    k.eps = rounded<T>(params.eps);
    k.neg_step = C(-step_size);
    k.weight_decay = params.weight_decay != 0.0;
    k.decoupled = params.decoupled_weight_decay;
    const AdamTensors<T> ts{static_cast<T*>(param.data), static_cast<T*>(exp_avg.data), static_cast<T*>(exp_avg_sq.data),
                            max_exp_avg_sq ? static_cast<T*>(max_exp_avg_sq->data) : nullptr,
                            static_cast<const T*>(grad.data)};
    launch_packed<T>(n, {ts.param, ts.exp_avg, ts.exp_avg_sq, ts.max_exp_avg_sq, ts.grad}, [&]<int V>(unsigned grid) {
      if (max_exp_avg_sq) RT_LAUNCH(grid, kBlock, stream, adam_kernel<T, V, true>)(ts, k, n);
      else RT_LAUNCH(grid, kBlock, stream, adam_kernel<T, V, false>)(ts, k, n);
      check_launch(op);
    });
  });
}

void sgd_step(const TensorArg& param, const TensorArg* momentum_buffer, const TensorArg& grad,
              const SgdStepParams& params, cudaStream_t stream) {
  const char* op = "sgd_step";
  visit_floating(param.dtype, op, [&]<typename T>() {
    require_contiguous(param, op, "param");
    check_like(param, grad, op, "grad");
    const bool momentum = params.momentum != 0.0;
    if (momentum && !momentum_buffer)
      throw ValueError("sgd_step on CUDA: momentum is " + std::to_string(params.momentum) +
                       " but no momentum_buffer was given; allocate one shaped like the parameter (its contents "
                       "are ignored when first_step is set)");
    if (!momentum && momentum_buffer)
      throw ValueError("sgd_step on CUDA: a momentum_buffer was given but momentum is 0; pass nullptr");
    if (momentum) check_like(param, *momentum_buffer, op, "momentum_buffer");
    const int64_t n = param.numel();
    if (n == 0) return;
    using C = acc_t<T>;
    SgdConsts<T> k;
    k.wd = C(params.weight_decay);
    k.momentum_t = rounded<T>(params.momentum);
    k.w_damp = C(1.0 - params.dampening);
    k.momentum = C(params.momentum);
    k.neg_lr = C(-params.lr);
    k.weight_decay = params.weight_decay != 0.0;
    k.nesterov = params.nesterov;
    k.first_step = params.first_step;
    const SgdTensors<T> ts{static_cast<T*>(param.data), momentum ? static_cast<T*>(momentum_buffer->data) : nullptr,
                           static_cast<const T*>(grad.data)};
    launch_packed<T>(n, {ts.param, ts.buf, ts.grad}, [&]<int V>(unsigned grid) {
      if (momentum) RT_LAUNCH(grid, kBlock, stream, sgd_kernel<T, V, true>)(ts, k, n);
      else RT_LAUNCH(grid, kBlock, stream, sgd_kernel<T, V, false>)(ts, k, n);
      check_launch(op);
    });
  });
}

}  // namespace rt::cuda_kernels
