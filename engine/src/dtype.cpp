#include "rt/dtype.h"

#include <cmath>

namespace rt {

uint16_t Half::from_float(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t absx = x & 0x7fffffffu;
  if (absx > 0x7f800000u) return uint16_t(sign | 0x7e00u);  // NaN
  if (absx >= 0x477ff000u) return uint16_t(sign | 0x7c00u); // overflow (after rounding) -> inf
  if (absx < 0x38800000u) {                                 // subnormal half or zero
    if (absx < 0x33000000u) return uint16_t(sign);           // rounds to zero
    // value = mant * 2^(e-150); in half subnormal units (2^-24) that is mant >> (126 - e).
    const uint32_t mant = (absx & 0x007fffffu) | 0x00800000u;
    const int shift = 126 - int(absx >> 23);  // 14..24
    const uint32_t units = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1);
    const uint32_t r = units + ((rem > halfway || (rem == halfway && (units & 1u))) ? 1u : 0u);
    return uint16_t(sign | r);
  }
  // normal: rebias exponent 127 -> 15, round mantissa 23 -> 10 bits to nearest even
  uint32_t h = ((absx >> 13) - (112u << 10));
  const uint32_t rem = absx & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return uint16_t(sign | h);
}

float Half::to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1fu) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {
      float v = std::ldexp(float(mant), -24);
      std::memcpy(&bits, &v, 4);
      bits |= sign;
    }
  } else {
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

size_t element_size(ScalarType t) {
  switch (t) {
    case kBool: case kUInt8: return 1;
    case kFloat16: case kBFloat16: return 2;
    case kInt32: case kFloat32: return 4;
    case kInt64: case kFloat64: return 8;
  }
  return 0;
}

std::string_view dtype_name(ScalarType t) {
  switch (t) {
    case kBool: return "bool";
    case kUInt8: return "uint8";
    case kInt32: return "int32";
    case kInt64: return "int64";
    case kFloat16: return "float16";
    case kBFloat16: return "bfloat16";
    case kFloat32: return "float32";
    case kFloat64: return "float64";
  }
  return "unknown";
}

bool is_floating(ScalarType t) { return t == kFloat16 || t == kBFloat16 || t == kFloat32 || t == kFloat64; }

bool is_integral(ScalarType t, bool include_bool) {
  return t == kUInt8 || t == kInt32 || t == kInt64 || (include_bool && t == kBool);
}

// PyTorch's table for these eight types: bool < uint8 < int32 < int64 < (any float);
// float16 with bfloat16 gives float32; otherwise the wider float wins.
ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  const bool fa = is_floating(a), fb = is_floating(b);
  if (fa && fb) {
    if ((a == kFloat16 && b == kBFloat16) || (a == kBFloat16 && b == kFloat16)) return kFloat32;
    return uint8_t(a) > uint8_t(b) ? a : b;
  }
  if (fa) return a;
  if (fb) return b;
  return uint8_t(a) > uint8_t(b) ? a : b;
}

}  // namespace rt
