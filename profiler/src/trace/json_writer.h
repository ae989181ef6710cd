// Streaming JSON text output for the trace exporter: fmt into a buffer that is flushed to a sink
// (file, gzip stream or string) every megabyte. No DOM; the caller writes tokens in order.
#pragma once
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace rt::prof::trace {

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual void write(const char* data, size_t size) = 0;
  virtual void close() = 0;  // flushes; throws TraceError when the data could not be written
};

// A plain file, or a gzip stream when `path` ends in ".gz". Throws TraceError when it cannot be opened.
std::unique_ptr<ByteSink> open_file_sink(const std::filesystem::path& path, int gzip_level);
std::unique_ptr<ByteSink> string_sink(std::string& out);

class JsonWriter {
 public:
  explicit JsonWriter(ByteSink& sink) : sink_(sink) {}
  ~JsonWriter() = default;

  void raw(std::string_view text) { buf_.append(text.data(), text.data() + text.size()); maybe_flush(); }
  void ch(char c) { buf_.push_back(c); }
  // A quoted JSON string: quotes, backslash and control characters escaped, invalid UTF-8 -> U+FFFD.
  void string(std::string_view text);
  void integer(int64_t v) { const fmt::format_int f(v); buf_.append(f.data(), f.data() + f.size()); }
  void unsigned_integer(uint64_t v) { const fmt::format_int f(v); buf_.append(f.data(), f.data() + f.size()); }
  // Finite doubles in shortest round-trip form; callers must not pass NaN/Inf (written as null).
  void number(double v);
  // Nanoseconds as microseconds with exactly three decimals: 1234567 -> 1234.567.
  void micros(int64_t ns);
  void maybe_flush() { if (buf_.size() >= kFlushBytes) flush(); }
  void flush();
  uint64_t bytes_written() const { return flushed_ + buf_.size(); }

 private:
  static constexpr size_t kFlushBytes = size_t(1) << 20;
  ByteSink& sink_;
  fmt::memory_buffer buf_;
  uint64_t flushed_ = 0;
};

}  // namespace rt::prof::trace
