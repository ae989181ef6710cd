// rt/scalar.h — a number passed to an op (`x + 1`, `x.clamp(0.0, 6.0)`).
//
// A Scalar remembers whether it is a bool, an integer or a floating value; promotion treats
// it like PyTorch's "wrapped number": it never widens a tensor within its category
// (int tensor + 1 stays int; float16 tensor * 2.5 stays float16; int tensor * 2.5 -> float32).
#pragma once
#include <cstdint>
#include <type_traits>

#include "rt/dtype.h"
#include "rt/export.h"

RT_API_BEGIN

namespace rt {

class Scalar {
 public:
  Scalar() = default;
  Scalar(bool v) : kind_(kBool), i_(v), d_(v) {}  // NOLINT(google-explicit-constructor)
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(kInt64), i_(int64_t(v)), d_(double(v)) {}  // NOLINT
  template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(kFloat64), i_(int64_t(v)), d_(double(v)) {}  // NOLINT

  bool is_floating() const { return kind_ == kFloat64; }
  bool is_integral() const { return kind_ == kInt64; }
  bool is_bool() const { return kind_ == kBool; }
  // kBool, kInt64 or kFloat64: the category used by promotion.
  ScalarType type() const { return kind_; }
  double to_double() const { return d_; }
  int64_t to_int() const { return i_; }
  template <typename T> T to() const {
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
      return T(static_cast<compute_t<T>>(d_));
    else if constexpr (std::is_same_v<T, bool>) return kind_ == kFloat64 ? d_ != 0.0 : i_ != 0;
    else return kind_ == kFloat64 ? T(d_) : T(i_);
  }

 private:
  ScalarType kind_ = kInt64;
  int64_t i_ = 0;
  double d_ = 0.0;
};

}  // namespace rt

RT_API_END
