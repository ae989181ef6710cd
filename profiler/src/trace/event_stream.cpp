#include "trace/event_stream.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "rt/prof/chrome_trace.h"

namespace rt::prof::trace {
namespace {

// zlib reads plain files transparently, so one source serves .json and .json.gz.
class FileSource final : public ByteSource {
 public:
  explicit FileSource(const std::filesystem::path& path) : path_(path.string()) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
      throw TraceError(fmt::format("{}: is a directory, not a trace file", path_), -1);
    size_ = std::filesystem::file_size(path, ec);
    if (ec) throw TraceError(fmt::format("{}: cannot open: {}", path_, ec.message()), -1);
    file_ = gzopen(path_.c_str(), "rb");
    if (!file_) throw TraceError(fmt::format("{}: cannot open: {}", path_, std::strerror(errno)), -1);
    gzbuffer(file_, 1 << 20);
  }
  ~FileSource() override { gzclose(file_); }

  size_t read(char* dst, size_t capacity) override {
    const unsigned want = unsigned(std::min<size_t>(capacity, 1u << 30));
    const int got = gzread(file_, dst, want);
    if (got < 0) {
      int code = 0;
      const char* why = gzerror(file_, &code);
      throw TraceError(fmt::format("{}: {} at byte {} of the decompressed data: {}", path_,
                                   code == Z_BUF_ERROR ? "truncated gzip data" : "corrupt gzip data", produced_,
                                   code == Z_ERRNO ? std::strerror(errno) : why),
                       int64_t(produced_));
    }
    produced_ += uint64_t(got);
    return size_t(got);
  }
  uint64_t input_position() const override { return uint64_t(std::max<z_off_t>(0, gzoffset(file_))); }
  uint64_t input_size() const override { return size_; }

 private:
  std::string path_;
  gzFile file_ = nullptr;
  uint64_t size_ = 0, produced_ = 0;
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::string_view text) : text_(text) {}
  size_t read(char* dst, size_t capacity) override {
    const size_t n = std::min(capacity, text_.size() - pos_);
    std::memcpy(dst, text_.data() + pos_, n);
    pos_ += n;
    return n;
  }
  uint64_t input_position() const override { return pos_; }
  uint64_t input_size() const override { return text_.size(); }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

std::string describe(char c) {
  if (c >= 0x20 && c < 0x7f) return fmt::format("'{}'", c);
  return fmt::format("byte 0x{:02x}", static_cast<unsigned char>(c));
}

}  // namespace

std::unique_ptr<ByteSource> open_file_source(const std::filesystem::path& path) {
  return std::make_unique<FileSource>(path);
}
std::unique_ptr<ByteSource> memory_source(std::string_view text) { return std::make_unique<MemorySource>(text); }

EventStream::EventStream(ByteSource& source, std::string source_name, size_t chunk_bytes)
    : source_(source), name_(std::move(source_name)), chunk_(std::max<size_t>(chunk_bytes, 4096)) {
  buf_.resize(chunk_ + kEventPadding);
}

void EventStream::fail(uint64_t offset, const std::string& what) const {
  throw TraceError(fmt::format("{}: invalid JSON at byte {}: {}", name_, offset, what), int64_t(offset));
}

bool EventStream::fill() {
  if (eof_) return false;
  if (pos_ > 0) {
    std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
    base_ += pos_;
    end_ -= pos_;
    pos_ = 0;
  }
  if (end_ == buf_.size() - kEventPadding) buf_.resize(buf_.size() * 2 + kEventPadding);
  const size_t got = source_.read(buf_.data() + end_, buf_.size() - kEventPadding - end_);
  if (got == 0) {
    eof_ = true;
    return false;
  }
  end_ += got;
  std::memset(buf_.data() + end_, ' ', kEventPadding);
  if (*on_chunk_) (*on_chunk_)();
  return true;
}

bool EventStream::skip_whitespace() {
  while (true) {
    while (pos_ < end_ && is_space(buf_[pos_])) ++pos_;
    if (pos_ < end_) return true;
    if (!fill()) return false;
  }
}

size_t EventStream::scan_value(size_t from) {
  constexpr size_t npos = std::string_view::npos;
  const char* b = buf_.data();
  size_t i = from;
  auto skip_string = [&](size_t at) -> size_t {  // `at` is just after the opening quote
    while (at < end_) {
      const char c = b[at];
      if (c == '"') return at + 1;
      at += c == '\\' ? 2 : 1;
    }
    return npos;
  };
  const char first = b[i];
  if (first == '"') return skip_string(i + 1);
  if (first == '{' || first == '[') {
    int64_t depth = 0;
    while (i < end_) {
      const char c = b[i];
      if (c == '"') {
        i = skip_string(i + 1);
        if (i == npos) return npos;
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      else if ((c == '}' || c == ']') && --depth == 0) return i + 1;
      ++i;
    }
    return npos;
  }
  while (i < end_ && !is_space(b[i]) && b[i] != ',' && b[i] != ']' && b[i] != '}') ++i;
  return i == end_ && !eof_ ? npos : i;
}

EventText EventStream::take_value(const char* what) {
  while (true) {
    const size_t end = scan_value(pos_);
    if (end != std::string_view::npos && end <= end_) {
      EventText text{buf_.data() + pos_, end - pos_, base_ + pos_};
      pos_ = end;
      return text;
    }
    const uint64_t start = base_ + pos_;
    if (!fill()) fail(start, fmt::format("truncated input: the {} that starts here is not complete", what));
  }
}

std::string EventStream::read_key() {
  if (peek() != '"') fail_here(fmt::format("expected a key string in the top-level object, found {}", describe(peek())));
  const EventText key = take_value("key");
  return std::string(key.data + 1, key.size - 2);
}

void EventStream::stream_events_array() {
  auto truncated = [&] { fail_here("truncated input: the traceEvents array is not closed (missing ']')"); };
  if (!skip_whitespace()) truncated();
  if (peek() == ']') { ++pos_; return; }
  while (true) {
    if (!skip_whitespace()) truncated();
    if (peek() != '{') fail_here(fmt::format("a trace event must be a JSON object, found {}", describe(peek())));
    (*on_event_)(take_value("trace event"));
    if (!skip_whitespace()) truncated();
    const char c = peek();
    ++pos_;
    if (c == ']') return;
    if (c != ',') { --pos_; fail_here(fmt::format("expected ',' or ']' after a trace event, found {}", describe(c))); }
  }
}

void EventStream::run(const EventFn& on_event, const TopLevelFn& on_top_level, const std::function<void()>& on_chunk) {
  on_event_ = &on_event;
  on_chunk_ = &on_chunk;
  if (!skip_whitespace()) fail(0, "empty input: a Chrome trace is a JSON array or object");
  if (base_ == 0 && pos_ == 0 && end_ >= 3 && std::memcmp(buf_.data(), "\xEF\xBB\xBF", 3) == 0) {
    pos_ = 3;
    if (!skip_whitespace()) fail(3, "empty input after the UTF-8 byte order mark");
  }
  const char first = peek();
  if (first == '[') {
    ++pos_;
    stream_events_array();
  } else if (first == '{') {
    ++pos_;
    bool saw_events = false;
    auto truncated = [&] { fail_here("truncated input: the top-level object is not closed (missing '}')"); };
    while (true) {
      if (!skip_whitespace()) truncated();
      if (peek() == '}') { ++pos_; break; }
      const std::string key = read_key();
      if (!skip_whitespace()) truncated();
      if (peek() != ':') fail_here(fmt::format("expected ':' after key \"{}\", found {}", key, describe(peek())));
      ++pos_;
      if (!skip_whitespace()) truncated();
      if (key == "traceEvents") {
        if (peek() != '[') fail_here(fmt::format("\"traceEvents\" must be an array, found {}", describe(peek())));
        ++pos_;
        stream_events_array();
        saw_events = true;
      } else {
        on_top_level(key, take_value("top-level value"));
      }
      if (!skip_whitespace()) truncated();
      const char c = peek();
      if (c == '}') { ++pos_; break; }
      if (c != ',') fail_here(fmt::format("expected ',' or '}}' in the top-level object, found {}", describe(c)));
      ++pos_;
    }
    if (!saw_events) fail(base_ + pos_, "the top-level object has no \"traceEvents\" array, so this is not a Chrome trace");
  } else {
    fail_here(fmt::format("not a Chrome trace: expected '[' or '{{' but found {}", describe(first)));
  }
  if (skip_whitespace()) fail_here("unexpected data after the end of the trace");
}

}  // namespace rt::prof::trace
