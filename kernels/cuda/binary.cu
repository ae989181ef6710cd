// Binary elementwise launchers: see binary.h.
#include "cuda/binary.h"
#include "cuda/elementwise_loop.cuh"

namespace rt::cuda_kernels {
namespace {

// PyTorch's integer pow (engine/src/ops/pow_clamp.cpp), in int64: narrow results wrap on store.
__device__ __forceinline__ int64_t int_pow(int64_t base, int64_t exp) {
  if (exp < 0) return base == 1 ? 1 : base == -1 ? ((exp & 1) ? -1 : 1) : 0;
  uint64_t r = 1, b = uint64_t(base);
  for (uint64_t e = uint64_t(exp); e != 0; e >>= 1) {
    if (e & 1) r *= b;
    b *= b;
  }
  return int64_t(r);
}

// Rounding division with PyTorch's formulas (engine/src/ops/divmod.cpp). Integers arrive as
// int64 (narrow results wrap on store): a divisor of 0 gives 0 instead of trapping (the engine
// refuses it before the launch; the emulator runs on a CPU, where it is SIGFPE), and -1 is taken
// apart so that INT64_MIN / -1 wraps instead of trapping.
template <typename C>
__device__ __forceinline__ C remainder_of(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    if (b == 0 || b == -1) return 0;
    const C r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  } else {
    const C m = ::fmod(a, b);
    return (m != C(0) && ((b < C(0)) != (m < C(0)))) ? m + b : m;
  }
}

template <typename C>
__device__ __forceinline__ C fmod_of(C a, C b) {
  if constexpr (std::is_integral_v<C>) return (b == 0 || b == -1) ? C(0) : C(a % b);
  else return ::fmod(a, b);
}

// dt: the output dtype; for float16 and bfloat16 every intermediate is rounded to it, as on the CPU.
template <typename C>
__device__ __forceinline__ C floor_divide_of(C a, C b, ScalarType dt) {
  if constexpr (std::is_integral_v<C>) {
    if (b == 0) return 0;
    if (b == -1) return C(uint64_t(0) - uint64_t(a));
    const C q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
  } else {
    if (b == C(0)) return a / b;
    const C m = ::fmod(a, b);
    C d = ew::round_to(ew::round_to(a - m, dt) / b, dt);
    if (m != C(0) && ((b < C(0)) != (m < C(0)))) d = ew::round_to(d - C(1), dt);
    if (d == C(0)) return ::copysign(C(0), a / b);
    C f = ::floor(d);
    if (ew::round_to(d - f, dt) > C(0.5)) f = ew::round_to(f + C(1), dt);
    return f;
  }
}

template <typename C>
__device__ __forceinline__ C trunc_divide_of(C a, C b, ScalarType dt) {
  if constexpr (std::is_integral_v<C>) {
    if (b == 0) return 0;
    if (b == -1) return C(uint64_t(0) - uint64_t(a));
    return a / b;
  } else {
    return ::trunc(ew::round_to(a / b, dt));
  }
}

template <typename C>
__device__ __forceinline__ C arith(BinaryOp op, C a, C b, C alpha, ScalarType dt) {
  switch (op) {
    case BinaryOp::Add: return a + alpha * b;
    case BinaryOp::Sub: return a - alpha * b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::Div: return a / b;
    case BinaryOp::Pow:
      if constexpr (std::is_integral_v<C>) return int_pow(a, b);
      else return ::pow(a, b);
    case BinaryOp::Maximum: return ((a != a) | (a > b)) ? a : b;  // NaN propagates
    case BinaryOp::Minimum: return ((a != a) | (a < b)) ? a : b;
    case BinaryOp::Lerp: return a + alpha * (b - a);
    case BinaryOp::LogicalAnd: return C((a != C(0)) & (b != C(0)));
    case BinaryOp::LogicalOr: return C((a != C(0)) | (b != C(0)));
    case BinaryOp::LogicalXor: return C((a != C(0)) != (b != C(0)));
    case BinaryOp::Remainder: return remainder_of(a, b);
    case BinaryOp::Fmod: return fmod_of(a, b);
    case BinaryOp::FloorDivide: return floor_divide_of(a, b, dt);
    case BinaryOp::TruncDivide: return trunc_divide_of(a, b, dt);
  }
  return a;
}

template <typename C>
struct ArithF {
  BinaryOp op;
  C alpha;
  ScalarType dt;  // the output's
  __device__ C operator()(C a, C b) const { return arith(op, a, b, alpha, dt); }
};

// x ** e for a scalar exponent, with the CPU engine's exact forms of common exponents.
template <typename C>
__device__ __forceinline__ C pow_scalar(C x, C e) {
  if constexpr (std::is_floating_point_v<C>) {
    if (e == C(2)) return x * x;
    if (e == C(3)) return x * x * x;
    if (e == C(0.5)) return ::sqrt(x);
    if (e == C(-0.5)) return C(1) / ::sqrt(x);
    if (e == C(-1)) return C(1) / x;
    if (e == C(-2)) return C(1) / (x * x);
    if (e == C(1)) return x;
    if (e == C(0)) return C(1);
    return ::pow(x, e);
  } else {
    return int_pow(x, e);
  }
}

template <typename C>
struct ArithScalarF {
  BinaryOp op;
  C s;
  C alpha;
  bool scalar_first;
  ScalarType dt;  // the output's
  __device__ C operator()(C a) const {
    if (scalar_first) return arith(op, s, a, alpha, dt);
    if (op == BinaryOp::Pow) return pow_scalar(a, s);
    return arith(op, a, s, alpha, dt);
  }
};

template <typename C>
__device__ __forceinline__ bool cmp(CompareOp op, C a, C b) {
  switch (op) {
    case CompareOp::Eq: return a == b;
    case CompareOp::Ne: return a != b;
    case CompareOp::Lt: return a < b;
    case CompareOp::Le: return a <= b;
    case CompareOp::Gt: return a > b;
    case CompareOp::Ge: return a >= b;
  }
  return false;
}

template <typename C>
struct CompareF {
  CompareOp op;
  __device__ bool operator()(C a, C b) const { return cmp(op, a, b); }
};

template <typename C>
struct CompareScalarF {
  CompareOp op;
  C s;
  __device__ bool operator()(C a) const { return cmp(op, a, s); }
};

bool is_logical(BinaryOp op) {
  return op == BinaryOp::LogicalAnd || op == BinaryOp::LogicalOr || op == BinaryOp::LogicalXor;
}

bool is_rounding_division(BinaryOp op) {
  return op == BinaryOp::Remainder || op == BinaryOp::Fmod || op == BinaryOp::FloorDivide ||
         op == BinaryOp::TruncDivide;
}

// Throws DTypeError for the combinations the CPU engine rejects.
void check_arith_dtype(BinaryOp op, ScalarType compute) {
  const std::string name = binary_op_name(op);
  if (op == BinaryOp::Div && !is_floating(compute))
    throw DTypeError("div on CUDA: true division needs a floating output, got " + ew::dtype_str(compute) +
                     ". Hint: allocate out as float32 (result_type of integers under div)");
  if ((op == BinaryOp::Sub || op == BinaryOp::Pow || is_rounding_division(op)) && compute == kBool)
    throw DTypeError(name + " on CUDA: bool is not supported. Hint: " +
                     (op == BinaryOp::Sub ? "use logical_xor() instead" : "convert to an integer or float dtype"));
  if (is_logical(op) && compute != kBool)
    throw DTypeError(name + " on CUDA: expected a bool output, got " + ew::dtype_str(compute));
}

// add/sub's alpha as the CPU applies it: bool addition is logical or, which ignores alpha.
template <typename C>
C alpha_as(double alpha, ScalarType out) {
  if (out == kBool) return C(1);
  return std::is_integral_v<C> ? C(int64_t(alpha)) : C(alpha);
}

}  // namespace

const char* binary_op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "add";
    case BinaryOp::Sub: return "sub";
    case BinaryOp::Mul: return "mul";
    case BinaryOp::Div: return "div";
    case BinaryOp::Pow: return "pow";
    case BinaryOp::Maximum: return "maximum";
    case BinaryOp::Minimum: return "minimum";
    case BinaryOp::Lerp: return "lerp";
    case BinaryOp::LogicalAnd: return "logical_and";
    case BinaryOp::LogicalOr: return "logical_or";
    case BinaryOp::LogicalXor: return "logical_xor";
    case BinaryOp::Remainder: return "remainder";
    case BinaryOp::Fmod: return "fmod";
    case BinaryOp::FloorDivide: return "floor_divide";
    case BinaryOp::TruncDivide: return "div_trunc";
  }
  return "binary";
}

const char* compare_op_name(CompareOp op) {
  switch (op) {
    case CompareOp::Eq: return "eq";
    case CompareOp::Ne: return "ne";
    case CompareOp::Lt: return "lt";
    case CompareOp::Le: return "le";
    case CompareOp::Gt: return "gt";
    case CompareOp::Ge: return "ge";
  }
  return "compare";
}

void binary(BinaryOp op, const TensorArg& out, const TensorArg& a, const TensorArg& b, double alpha,
            cudaStream_t stream) {
  const char* name = binary_op_name(op);
  check_arith_dtype(op, out.dtype);
  ew::visit_compute(out.dtype, [&]<typename C>() {
    const C al = alpha_as<C>(alpha, out.dtype);
    ew::launch<C, 2>(name, out, {&a, &b}, out.dtype, ArithF<C>{op, al, out.dtype}, stream);
  });
}

void binary_scalar(BinaryOp op, const TensorArg& out, const TensorArg& a, const Scalar& s, bool scalar_first,
                   double alpha, cudaStream_t stream) {
  const char* name = binary_op_name(op);
  check_arith_dtype(op, out.dtype);
  ew::visit_compute(out.dtype, [&]<typename C>() {
    const C al = alpha_as<C>(alpha, out.dtype);
    // A number exponent stays as given (the CPU raises half tensors to float(e), not to e rounded to half).
    const bool exact_exponent = op == BinaryOp::Pow && !scalar_first && std::is_floating_point_v<C>;
    const C sv = exact_exponent ? C(s.to_double()) : ew::scalar_as<C>(s, out.dtype);
    ew::launch<C, 1>(name, out, {&a}, out.dtype, ArithScalarF<C>{op, sv, al, scalar_first, out.dtype}, stream);
  });
}

void compare(CompareOp op, const TensorArg& out, const TensorArg& a, const TensorArg& b, ScalarType compute,
             cudaStream_t stream) {
  const char* name = compare_op_name(op);
  if (out.dtype != kBool)
    throw DTypeError(std::string(name) + " on CUDA: expected a bool output, got " + ew::dtype_str(out.dtype));
  ew::visit_compute(compute, [&]<typename C>() {
    ew::launch<C, 2>(name, out, {&a, &b}, compute, CompareF<C>{op}, stream);
  });
}

void compare_scalar(CompareOp op, const TensorArg& out, const TensorArg& a, const Scalar& s, ScalarType compute,
                    cudaStream_t stream) {
  const char* name = compare_op_name(op);
  if (out.dtype != kBool)
    throw DTypeError(std::string(name) + " on CUDA: expected a bool output, got " + ew::dtype_str(out.dtype));
  ew::visit_compute(compute, [&]<typename C>() {
    ew::launch<C, 1>(name, out, {&a}, compute, CompareScalarF<C>{op, ew::scalar_as<C>(s, compute)}, stream);
  });
}

}  // namespace rt::cuda_kernels
