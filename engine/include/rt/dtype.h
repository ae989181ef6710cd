// rt/dtype.h — element types and PyTorch's type-promotion rules.
//
//   rt::ScalarType t = rt::promote_types(rt::kInt64, rt::kFloat32);   // kFloat32
//   rt::visit_dtype(t, [&]<typename T>() { /* T is float here */ });
//
// Half types (float16, bfloat16) are stored as 16-bit values and computed in float32
// on the CPU: `rt::compute_t<rt::Half>` is float.
#pragma once
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "rt/export.h"

RT_API_BEGIN

namespace rt {

enum class ScalarType : uint8_t { Bool, UInt8, Int32, Int64, Float16, BFloat16, Float32, Float64 };

inline constexpr ScalarType kBool = ScalarType::Bool;
inline constexpr ScalarType kUInt8 = ScalarType::UInt8;
inline constexpr ScalarType kInt32 = ScalarType::Int32;
inline constexpr ScalarType kInt64 = ScalarType::Int64;
inline constexpr ScalarType kFloat16 = ScalarType::Float16;
inline constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
inline constexpr ScalarType kFloat32 = ScalarType::Float32;
inline constexpr ScalarType kFloat64 = ScalarType::Float64;

// IEEE 754 binary16, stored as bits; converts to and from float with round-to-nearest-even.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  Half(float f) : bits(from_float(f)) {}  // NOLINT: implicit like a numeric type
  operator float() const { return to_float(bits); }
  static uint16_t from_float(float f);
  static float to_float(uint16_t h);
};

// bfloat16: the top 16 bits of a float32, rounded to nearest even.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float f) : bits(from_float(f)) {}  // NOLINT
  operator float() const {
    uint32_t u = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  static uint16_t from_float(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);  // quiet NaN
    u += 0x7fffu + ((u >> 16) & 1u);
    return uint16_t(u >> 16);
  }
};

size_t element_size(ScalarType t);
std::string_view dtype_name(ScalarType t);  // "float32", "int64", ... (PyTorch's names)
bool is_floating(ScalarType t);
bool is_integral(ScalarType t, bool include_bool = false);

// PyTorch's promotion lattice for two tensor dtypes (no wrapped-number rules; see result_type).
ScalarType promote_types(ScalarType a, ScalarType b);

template <typename T> struct dtype_of;
template <> struct dtype_of<bool> { static constexpr ScalarType value = kBool; };
template <> struct dtype_of<uint8_t> { static constexpr ScalarType value = kUInt8; };
template <> struct dtype_of<int32_t> { static constexpr ScalarType value = kInt32; };
template <> struct dtype_of<int64_t> { static constexpr ScalarType value = kInt64; };
template <> struct dtype_of<Half> { static constexpr ScalarType value = kFloat16; };
template <> struct dtype_of<BFloat16> { static constexpr ScalarType value = kBFloat16; };
template <> struct dtype_of<float> { static constexpr ScalarType value = kFloat32; };
template <> struct dtype_of<double> { static constexpr ScalarType value = kFloat64; };
template <typename T> inline constexpr ScalarType dtype_of_v = dtype_of<T>::value;

// The type arithmetic happens in: float for the half types, T otherwise.
template <typename T>
using compute_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

// Calls f.template operator()<T>() with the C++ type of `t`.
template <typename F>
decltype(auto) visit_dtype(ScalarType t, F&& f) {
  switch (t) {
    case kBool: return f.template operator()<bool>();
    case kUInt8: return f.template operator()<uint8_t>();
    case kInt32: return f.template operator()<int32_t>();
    case kInt64: return f.template operator()<int64_t>();
    case kFloat16: return f.template operator()<Half>();
    case kBFloat16: return f.template operator()<BFloat16>();
    case kFloat32: return f.template operator()<float>();
    case kFloat64: break;
  }
  return f.template operator()<double>();
}

}  // namespace rt

RT_API_END
