#include "reduce_functions.h"

#include <algorithm>

namespace rt::dist::detail {

namespace {

template <typename T, typename Acc, typename F>
void apply(void* out, const void* a, const void* b, size_t n, F f) {
  auto* o = static_cast<T*>(out);
  const auto* x = static_cast<const T*>(a);
  const auto* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) o[i] = T(f(Acc(x[i]), Acc(y[i])));
}

template <typename T, typename Acc>
ReduceFunction for_type(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg:
      return [](void* o, const void* a, const void* b, size_t n) {
        apply<T, Acc>(o, a, b, n, [](Acc x, Acc y) { return x + y; });
      };
    case ReduceOp::Product:
      return [](void* o, const void* a, const void* b, size_t n) {
        apply<T, Acc>(o, a, b, n, [](Acc x, Acc y) { return x * y; });
      };
    case ReduceOp::Min:
      return [](void* o, const void* a, const void* b, size_t n) {
        apply<T, Acc>(o, a, b, n, [](Acc x, Acc y) { return std::min(x, y); });
      };
    case ReduceOp::Max:
      return [](void* o, const void* a, const void* b, size_t n) {
        apply<T, Acc>(o, a, b, n, [](Acc x, Acc y) { return std::max(x, y); });
      };
  }
  return nullptr;
}

ReduceFunction for_bool(ReduceOp op) {
  if (op == ReduceOp::Product || op == ReduceOp::Min)
    return [](void* o, const void* a, const void* b, size_t n) {
      apply<uint8_t, bool>(o, a, b, n, [](bool x, bool y) { return x && y; });
    };
  return [](void* o, const void* a, const void* b, size_t n) {
    apply<uint8_t, bool>(o, a, b, n, [](bool x, bool y) { return x || y; });
  };
}

template <typename T>
void divide(void* data, size_t n, int64_t divisor) {
  auto* p = static_cast<T*>(data);
  for (size_t i = 0; i < n; ++i) p[i] = T(float(p[i]) / float(divisor));
}

}  // namespace

ReduceFunction reduce_function(ScalarType dtype, ReduceOp op) {
  switch (dtype) {
    case kBool: return for_bool(op);
    case kUInt8: return for_type<uint8_t, uint8_t>(op);
    case kInt32: return for_type<int32_t, int32_t>(op);
    case kInt64: return for_type<int64_t, int64_t>(op);
    case kFloat16: return for_type<Half, float>(op);
    case kBFloat16: return for_type<BFloat16, float>(op);
    case kFloat32: return for_type<float, float>(op);
    case kFloat64: return for_type<double, double>(op);
  }
  return nullptr;
}

void divide_in_place(void* data, ScalarType dtype, size_t n, int64_t divisor) {
  switch (dtype) {
    case kFloat16: divide<Half>(data, n, divisor); break;
    case kBFloat16: divide<BFloat16>(data, n, divisor); break;
    case kFloat32: {
      auto* p = static_cast<float*>(data);
      for (size_t i = 0; i < n; ++i) p[i] /= float(divisor);
      break;
    }
    case kFloat64: {
      auto* p = static_cast<double*>(data);
      for (size_t i = 0; i < n; ++i) p[i] /= double(divisor);
      break;
    }
    default: break;  // ProcessGroup refuses Avg on other dtypes before it gets here
  }
}

}  // namespace rt::dist::detail
