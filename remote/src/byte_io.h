// Little-endian byte writing and bounds-checked reading for the event batch codec. A reader never reads past
// its end: every read checks what is left and throws ProtocolError naming the field.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "rt/remote/frame.h"

namespace rt::remote {

class ByteWriter {
 public:
  template <typename T>
  void put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    ensure(sizeof(T));
    std::memcpy(out_.data() + used_, &v, sizeof(T));  // x86-64 and aarch64: little-endian
    used_ += sizeof(T);
  }
  void put_string(std::string_view s) {
    put(uint32_t(s.size()));
    ensure(s.size());
    std::memcpy(out_.data() + used_, s.data(), s.size());
    used_ += s.size();
  }
  void reserve(size_t n) { ensure(n); }
  std::string take() {
    out_.resize(used_);
    used_ = 0;
    return std::move(out_);
  }

 private:
  // The buffer grows by doubling; fields are copied into its spare room (no per-field resize).
  void ensure(size_t n) {
    if (used_ + n <= out_.size()) return;
    out_.resize(std::max(out_.size() * 2, used_ + n + 256));
  }
  std::string out_;
  size_t used_ = 0;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}
  template <typename T>
  T get(const char* field) {
    need(sizeof(T), field);
    T v;
    std::memcpy(&v, in_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  std::string get_string(const char* field) {
    const uint32_t n = get<uint32_t>(field);
    need(n, field);
    std::string s(in_.substr(at_, n));
    at_ += n;
    return s;
  }
  // A count of records of at least `min_bytes` each: refused when the rest cannot hold them, so a hostile
  // count never makes the reader reserve memory the payload does not back.
  uint32_t get_count(const char* field, size_t min_bytes) {
    const uint32_t n = get<uint32_t>(field);
    if (min_bytes > 0 && uint64_t(n) * min_bytes > left())
      throw ProtocolError(std::string("remote protocol: event batch claims ") + std::to_string(n) + " " + field +
                          ", more than its remaining " + std::to_string(left()) + " bytes can hold");
    return n;
  }
  size_t left() const { return in_.size() - at_; }

 private:
  void need(size_t n, const char* field) const {
    if (n > left())
      throw ProtocolError(std::string("remote protocol: event batch truncated in ") + field + " (needs " +
                          std::to_string(n) + " bytes, " + std::to_string(left()) + " left)");
  }
  std::string_view in_;
  size_t at_ = 0;
};

}  // namespace rt::remote
