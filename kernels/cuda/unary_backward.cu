// Fused unary backward launchers: see unary_backward.h. Each formula mirrors the lambda that
// engine/src/ops/unary.cpp or activation.cpp passes to record_unary, operation for operation.
#include "cuda/elementwise_loop.cuh"
#include "cuda/unary_backward.h"

namespace rt::cuda_kernels {
namespace {

constexpr double kSqrt1_2 = 0.70710678118654752440;     // 1 / sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi), the normal pdf at 0
constexpr double kSqrt2_Pi = 0.79788456080286535588;    // sqrt(2 / pi)
constexpr double kGeluKappa = 0.044715;

// 1 / (1 + exp(-x)) as e / (1 + e), e = exp(x), below 0 (the CPU's vsigmoid).
template <typename C>
__device__ __forceinline__ C sigmoid(C x) {
  const C e = ::exp(-::fabs(x));
  const C s = C(1) / (C(1) + e);
  return x < C(0) ? e * s : s;
}

// grad_in = f(g, s): g the incoming gradient, s the saved tensor, both of register type C.
template <typename C>
struct BackwardF {
  UnaryBackwardOp op;
  C slope, beta, threshold;  // LeakyRelu; Softplus

  __device__ C operator()(C g, C s) const {
    switch (op) {
      case UnaryBackwardOp::Threshold: return s > C(0) ? g : C(0);
      case UnaryBackwardOp::Sigmoid: return g * s * (C(1) - s);
      case UnaryBackwardOp::Tanh: return g * (C(1) - s * s);
      case UnaryBackwardOp::Exp: return g * s;
      case UnaryBackwardOp::Log: return g / s;
      case UnaryBackwardOp::Log1p: return g / (s + C(1));
      case UnaryBackwardOp::Sqrt: return g / (C(2) * s);
      case UnaryBackwardOp::Rsqrt: return C(-0.5) * g * s * s * s;
      case UnaryBackwardOp::Reciprocal: return -g * s * s;
      case UnaryBackwardOp::Sin: return g * ::cos(s);
      case UnaryBackwardOp::Cos: return -g * ::sin(s);
      case UnaryBackwardOp::Abs: return s > C(0) ? g : (s < C(0) ? -g : C(0));
      case UnaryBackwardOp::LeakyRelu: return s > C(0) ? g : g * slope;
      case UnaryBackwardOp::Gelu: {
        const C cdf = C(0.5) * (C(1) + ::erf(s * C(kSqrt1_2)));
        const C pdf = ::exp(C(-0.5) * s * s) * C(kInvSqrt2Pi);
        return g * (cdf + s * pdf);
      }
      case UnaryBackwardOp::GeluTanh: {
        const C x2 = s * s;
        const C t = ::tanh(C(kSqrt2_Pi) * (s + C(kGeluKappa) * x2 * s));
        const C left = C(0.5) * (C(1) + t);
        const C right = C(0.5) * s * (C(1) - t * t) * C(kSqrt2_Pi) * (C(1) + C(3 * kGeluKappa) * x2);
        return g * (left + right);
      }
      case UnaryBackwardOp::Silu: {
        const C sg = sigmoid(s);
        return g * sg * (C(1) + s * (C(1) - sg));
      }
      case UnaryBackwardOp::Softplus: {
        const C bx = s * beta;
        return bx > threshold ? g : g * sigmoid(bx);
      }
    }
    return g;
  }
};

}  // namespace

const char* unary_backward_op_name(UnaryBackwardOp op) {
  switch (op) {
    case UnaryBackwardOp::Threshold: return "threshold_backward";
    case UnaryBackwardOp::Sigmoid: return "sigmoid_backward";
    case UnaryBackwardOp::Tanh: return "tanh_backward";
    case UnaryBackwardOp::Exp: return "exp_backward";
    case UnaryBackwardOp::Log: return "log_backward";
    case UnaryBackwardOp::Log1p: return "log1p_backward";
    case UnaryBackwardOp::Sqrt: return "sqrt_backward";
    case UnaryBackwardOp::Rsqrt: return "rsqrt_backward";
    case UnaryBackwardOp::Reciprocal: return "reciprocal_backward";
    case UnaryBackwardOp::Sin: return "sin_backward";
    case UnaryBackwardOp::Cos: return "cos_backward";
    case UnaryBackwardOp::Abs: return "abs_backward";
    case UnaryBackwardOp::LeakyRelu: return "leaky_relu_backward";
    case UnaryBackwardOp::Gelu: return "gelu_backward";
    case UnaryBackwardOp::GeluTanh: return "gelu_backward(tanh)";
    case UnaryBackwardOp::Silu: return "silu_backward";
    case UnaryBackwardOp::Softplus: return "softplus_backward";
  }
  return "unary_backward";
}

void unary_backward(UnaryBackwardOp op, const TensorArg& grad_in, const TensorArg& grad_out, const TensorArg& saved,
                    const UnaryParams& params, cudaStream_t stream) {
  const char* name = unary_backward_op_name(op);
  if (!is_floating(grad_in.dtype))
    throw DTypeError(std::string(name) + " on CUDA: dtype " + ew::dtype_str(grad_in.dtype) +
                     " is not supported; grad_in must be float16, bfloat16, float32 or float64 (the dtype of the "
                     "saved tensor, as on the CPU)");
  ew::visit_compute(grad_in.dtype, [&]<typename C>() {
    if constexpr (std::is_floating_point_v<C>) {  // float or double: checked above
      // The CPU lambdas convert the parameters with decltype(x)(p): to the compute type, unrounded.
      const BackwardF<C> f{op, C(params.negative_slope), C(params.beta), C(params.threshold)};
      ew::launch<C, 2>(name, grad_in, {&grad_out, &saved}, grad_in.dtype, f, stream);
    }
  });
}

}  // namespace rt::cuda_kernels
