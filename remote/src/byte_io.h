// Little-endian byte writing and bounds-checked reading for the event batch codec. A reader never reads past
// its end: every read checks what is left and throws ProtocolError naming the field.
#pragma once
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
    const size_t at = out_.size();
    out_.resize(at + sizeof(T));
    std::memcpy(out_.data() + at, &v, sizeof(T));  // x86-64 and aarch64: little-endian
  }
  void put_string(std::string_view s) {
    put(uint32_t(s.size()));
    out_.append(s);
  }
  void reserve(size_t n) { out_.reserve(n); }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
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
