#include "trace/json_writer.h"

#include <zlib.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "rt/prof/chrome_trace.h"

namespace rt::prof::trace {
namespace {

class FileSink final : public ByteSink {
 public:
  FileSink(const std::filesystem::path& path) : path_(path) {
    file_ = std::fopen(path.c_str(), "wb");
    if (!file_)
      throw TraceError(fmt::format("{}: cannot open for writing: {}", path.string(), std::strerror(errno)), -1);
  }
  ~FileSink() override { if (file_) std::fclose(file_); }
  void write(const char* data, size_t size) override {
    if (std::fwrite(data, 1, size, file_) != size)
      throw TraceError(fmt::format("{}: write failed: {}", path_.string(), std::strerror(errno)), -1);
  }
  void close() override {
    const int rc = std::fclose(file_);
    file_ = nullptr;
    if (rc != 0) throw TraceError(fmt::format("{}: write failed: {}", path_.string(), std::strerror(errno)), -1);
  }

 private:
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
};

class GzipSink final : public ByteSink {
 public:
  GzipSink(const std::filesystem::path& path, int level) : path_(path) {
    if (level < 1 || level > 9)
      throw TraceError(fmt::format("{}: gzip level {} is out of range; use 1 (fast) to 9 (small)", path.string(), level), -1);
    file_ = gzopen(path.c_str(), fmt::format("wb{}", level).c_str());
    if (!file_)
      throw TraceError(fmt::format("{}: cannot open for writing: {}", path.string(), std::strerror(errno)), -1);
    gzbuffer(file_, 1 << 20);
  }
  ~GzipSink() override { if (file_) gzclose(file_); }
  void write(const char* data, size_t size) override {
    while (size > 0) {
      const unsigned part = unsigned(std::min<size_t>(size, 1u << 30));
      if (gzwrite(file_, data, part) != int(part)) {
        int code = 0;
        const char* why = gzerror(file_, &code);
        throw TraceError(fmt::format("{}: gzip write failed: {}", path_.string(),
                                     code == Z_ERRNO ? std::strerror(errno) : why), -1);
      }
      data += part;
      size -= part;
    }
  }
  void close() override {
    const int rc = gzclose(file_);
    file_ = nullptr;
    if (rc != Z_OK) throw TraceError(fmt::format("{}: gzip close failed (code {})", path_.string(), rc), -1);
  }

 private:
  std::filesystem::path path_;
  gzFile file_ = nullptr;
};

class StringSink final : public ByteSink {
 public:
  explicit StringSink(std::string& out) : out_(out) {}
  void write(const char* data, size_t size) override { out_.append(data, size); }
  void close() override {}

 private:
  std::string& out_;
};

// Length of the valid UTF-8 sequence starting at p (at most n bytes), 0 when invalid.
size_t utf8_sequence_length(const unsigned char* p, size_t n) {
  const unsigned char c = p[0];
  auto cont = [&](size_t i) { return i < n && (p[i] & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (n < 2) return 0;
    const unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return p[1] >= lo && p[1] <= hi && cont(2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (n < 2) return 0;
    const unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return p[1] >= lo && p[1] <= hi && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

}  // namespace

std::unique_ptr<ByteSink> open_file_sink(const std::filesystem::path& path, int gzip_level) {
  if (path.extension() == ".gz") return std::make_unique<GzipSink>(path, gzip_level);
  return std::make_unique<FileSink>(path);
}

std::unique_ptr<ByteSink> string_sink(std::string& out) { return std::make_unique<StringSink>(out); }

void JsonWriter::string(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  buf_.push_back('"');
  size_t run_start = 0;
  auto flush_run = [&](size_t end) {
    buf_.append(text.data() + run_start, text.data() + end);
  };
  for (size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') { ++i; continue; }
    if (c >= 0x80) {
      const size_t len = utf8_sequence_length(p + i, n - i);
      if (len) { i += len; continue; }
      flush_run(i);
      buf_.append(std::string_view("\xEF\xBF\xBD"));
      run_start = ++i;
      continue;
    }
    flush_run(i);
    switch (c) {
      case '"': buf_.append(std::string_view("\\\"")); break;
      case '\\': buf_.append(std::string_view("\\\\")); break;
      case '\n': buf_.append(std::string_view("\\n")); break;
      case '\t': buf_.append(std::string_view("\\t")); break;
      case '\r': buf_.append(std::string_view("\\r")); break;
      default: {
        const char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
        buf_.append(esc, esc + 6);
      }
    }
    run_start = ++i;
  }
  flush_run(n);
  buf_.push_back('"');
}

void JsonWriter::number(double v) {
  if (!std::isfinite(v)) { raw("null"); return; }
  fmt::format_to(std::back_inserter(buf_), "{}", v);
}

void JsonWriter::micros(int64_t ns) {
  uint64_t magnitude = ns < 0 ? uint64_t(0) - uint64_t(ns) : uint64_t(ns);
  if (ns < 0) buf_.push_back('-');
  const fmt::format_int whole(magnitude / 1000);
  buf_.append(whole.data(), whole.data() + whole.size());
  buf_.push_back('.');
  const unsigned frac = unsigned(magnitude % 1000);
  const char digits[3] = {char('0' + frac / 100), char('0' + frac / 10 % 10), char('0' + frac % 10)};
  buf_.append(digits, digits + 3);
}

void JsonWriter::flush() {
  if (buf_.size() == 0) return;
  sink_.write(buf_.data(), buf_.size());
  flushed_ += buf_.size();
  buf_.clear();
}

}  // namespace rt::prof::trace
