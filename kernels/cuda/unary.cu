// Unary elementwise launchers: see unary.h.
#include <cmath>

#include "cuda/elementwise_loop.cuh"
#include "cuda/unary.h"

namespace rt::cuda_kernels {
namespace {

constexpr double kSqrt1_2 = 0.70710678118654752440;   // 1 / sqrt(2)
constexpr double kSqrt2_Pi = 0.79788456080286535588;  // sqrt(2 / pi)
constexpr double kGeluKappa = 0.044715;

template <typename C>
__device__ __forceinline__ C sigmoid(C x) {
  const C e = ::exp(-::fabs(x));
  const C s = C(1) / (C(1) + e);
  return x < C(0) ? e * s : s;
}

// Wrapping negation and absolute value for integers (INT_MIN stays, as on the CPU).
__device__ __forceinline__ int64_t wrap_neg(int64_t x) { return int64_t(uint64_t(0) - uint64_t(x)); }

template <typename C>
__device__ __forceinline__ C float_op(UnaryOp op, C x, const UnaryParams& p) {
  if constexpr (std::is_floating_point_v<C>) {
    switch (op) {
      case UnaryOp::Exp: return ::exp(x);
      case UnaryOp::Log: return ::log(x);
      case UnaryOp::Log1p: return ::log1p(x);
      case UnaryOp::Sqrt: return ::sqrt(x);
      case UnaryOp::Rsqrt: return C(1) / ::sqrt(x);
      case UnaryOp::Reciprocal: return C(1) / x;
      case UnaryOp::Sin: return ::sin(x);
      case UnaryOp::Cos: return ::cos(x);
      case UnaryOp::Tanh: return ::tanh(x);
      case UnaryOp::Sigmoid: return sigmoid(x);
      case UnaryOp::LeakyRelu: return x > C(0) ? x : x * C(p.negative_slope);
      case UnaryOp::Gelu: return C(0.5) * x * (C(1) + ::erf(x * C(kSqrt1_2)));
      case UnaryOp::GeluTanh: return C(0.5) * x * (C(1) + ::tanh(C(kSqrt2_Pi) * (x + C(kGeluKappa) * x * x * x)));
      case UnaryOp::Silu: return x * sigmoid(x);
      case UnaryOp::Softplus: {
        const C bx = x * C(p.beta);
        return bx > C(p.threshold) ? x : ::log1p(::exp(bx)) / C(p.beta);
      }
      default: break;
    }
  }
  return x;
}

template <typename C>
struct ValueF {
  UnaryOp op;
  UnaryParams p;
  __device__ C operator()(C x) const {
    switch (op) {
      case UnaryOp::Neg:
        if constexpr (std::is_integral_v<C>) return wrap_neg(x);
        else return -x;
      case UnaryOp::Abs:
        if constexpr (std::is_integral_v<C>) return x < 0 ? wrap_neg(x) : x;
        else return ::fabs(x);
      case UnaryOp::Sign: return C(int(C(0) < x) - int(x < C(0)));
      case UnaryOp::Square:
        if constexpr (std::is_integral_v<C>) return int64_t(uint64_t(x) * uint64_t(x));
        else return x * x;
      case UnaryOp::Relu: return x < C(0) ? C(0) : x;
      default: return float_op(op, x, p);
    }
  }
};

template <typename C>
struct PredicateF {
  UnaryOp op;
  __device__ bool operator()(C x) const {
    if (op == UnaryOp::LogicalNot) return x == C(0);
    if constexpr (std::is_floating_point_v<C>) {
      if (op == UnaryOp::IsNan) return x != x;
      return ::fabs(x) == C(INFINITY);
    }
    return false;
  }
};

bool floating_only(UnaryOp op) { return op >= UnaryOp::Exp && op <= UnaryOp::Softplus && op != UnaryOp::Relu; }
bool is_predicate(UnaryOp op) { return op == UnaryOp::IsNan || op == UnaryOp::IsInf || op == UnaryOp::LogicalNot; }

template <typename C>
struct ClampF {
  C lo, hi;
  bool has_min, has_max, nan_bound;
  __device__ C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (nan_bound) return C(NAN);
    }
    if (has_min) x = x < lo ? lo : x;
    if (has_max) x = x > hi ? hi : x;
    return x;
  }
};

}  // namespace

const char* unary_op_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: return "neg";
    case UnaryOp::Abs: return "abs";
    case UnaryOp::Sign: return "sign";
    case UnaryOp::Square: return "square";
    case UnaryOp::Exp: return "exp";
    case UnaryOp::Log: return "log";
    case UnaryOp::Log1p: return "log1p";
    case UnaryOp::Sqrt: return "sqrt";
    case UnaryOp::Rsqrt: return "rsqrt";
    case UnaryOp::Reciprocal: return "reciprocal";
    case UnaryOp::Sin: return "sin";
    case UnaryOp::Cos: return "cos";
    case UnaryOp::Tanh: return "tanh";
    case UnaryOp::Sigmoid: return "sigmoid";
    case UnaryOp::Relu: return "relu";
    case UnaryOp::LeakyRelu: return "leaky_relu";
    case UnaryOp::Gelu: return "gelu";
    case UnaryOp::GeluTanh: return "gelu(tanh)";
    case UnaryOp::Silu: return "silu";
    case UnaryOp::Softplus: return "softplus";
    case UnaryOp::IsNan: return "isnan";
    case UnaryOp::IsInf: return "isinf";
    case UnaryOp::LogicalNot: return "logical_not";
  }
  return "unary";
}

void unary(UnaryOp op, const TensorArg& out, const TensorArg& x, const UnaryParams& params, cudaStream_t stream) {
  const char* name = unary_op_name(op);
  if (is_predicate(op)) {
    if (out.dtype != kBool)
      throw DTypeError(std::string(name) + " on CUDA: expected a bool output, got " + ew::dtype_str(out.dtype));
    ew::visit_compute(x.dtype, [&]<typename C>() { ew::launch<C, 1>(name, out, {&x}, x.dtype, PredicateF<C>{op}, stream); });
    return;
  }
  if (floating_only(op) && !is_floating(out.dtype))
    throw DTypeError(std::string(name) + " on CUDA: expected a floating output, got " + ew::dtype_str(out.dtype) +
                     ". Hint: floating-only functions of integer inputs write float32, as on the CPU");
  if (out.dtype == kBool && (op == UnaryOp::Neg || op == UnaryOp::Abs || op == UnaryOp::Relu || op == UnaryOp::Square))
    throw DTypeError(std::string(name) + " on CUDA: bool tensors are not supported. Hint: convert to an integer or "
                     "float dtype first");
  ew::visit_compute(out.dtype, [&]<typename C>() {
    ew::launch<C, 1>(name, out, {&x}, out.dtype, ValueF<C>{op, params}, stream);
  });
}

void clamp(const TensorArg& out, const TensorArg& x, const Scalar& lo, const Scalar& hi, bool has_min, bool has_max,
           cudaStream_t stream) {
  if (!has_min && !has_max) throw ValueError("clamp on CUDA: at least one of 'min' or 'max' must be given");
  const bool nan_bound = is_floating(out.dtype) && ((has_min && std::isnan(lo.to_double())) ||
                                                    (has_max && std::isnan(hi.to_double())));
  ew::visit_compute(out.dtype, [&]<typename C>() {
    const ClampF<C> f{has_min ? ew::scalar_as<C>(lo, out.dtype) : C(0), has_max ? ew::scalar_as<C>(hi, out.dtype) : C(0),
                      has_min, has_max, nan_bound};
    ew::launch<C, 1>("clamp", out, {&x}, out.dtype, f, stream);
  });
}

}  // namespace rt::cuda_kernels
