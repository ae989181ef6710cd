// Splits a Chrome trace into its events without loading it whole: reads fixed-size chunks (plain or
// gzip), walks the top-level structure ([...] or {"traceEvents":[...], ...}) and hands out each event
// object as text with the simdjson padding behind it, plus its byte offset, for one-object parsing.
// Memory: one chunk plus the largest single event or top-level value.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rt::prof::trace {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual size_t read(char* dst, size_t capacity) = 0;  // 0 at end of input; throws TraceError on I/O errors
  virtual uint64_t input_position() const = 0;          // bytes consumed from the file (compressed for .gz)
  virtual uint64_t input_size() const = 0;
};

// Opens `path`, detecting gzip by its magic bytes. Throws TraceError when it cannot be read.
std::unique_ptr<ByteSource> open_file_source(const std::filesystem::path& path);
std::unique_ptr<ByteSource> memory_source(std::string_view text);

struct EventText {
  const char* data;  // readable for size + kEventPadding bytes
  size_t size;
  uint64_t offset;   // of data[0] in the (decompressed) stream
};
inline constexpr size_t kEventPadding = 64;

class EventStream {
 public:
  // `on_event` gets each element of the events array; `on_top_level` each other key of the
  // object form with its raw value text. `on_chunk` runs after each chunk is read.
  using EventFn = std::function<void(const EventText&)>;
  using TopLevelFn = std::function<void(std::string_view key, const EventText& value)>;
  EventStream(ByteSource& source, std::string source_name, size_t chunk_bytes);
  void run(const EventFn& on_event, const TopLevelFn& on_top_level, const std::function<void()>& on_chunk);

 private:
  bool fill();                                // false at end of input
  size_t scan_value(size_t from);             // end of the JSON value at `from` (relative), or npos: need more
  bool skip_whitespace();                     // false at end of input
  char peek() const { return buf_[pos_]; }
  EventText take_value(const char* what);
  std::string read_key();
  void stream_events_array();
  [[noreturn]] void fail(uint64_t offset, const std::string& what) const;
  [[noreturn]] void fail_here(const std::string& what) const { fail(base_ + pos_, what); }

  ByteSource& source_;
  std::string name_;
  size_t chunk_;
  std::vector<char> buf_;   // [0, end_) valid, followed by kEventPadding bytes
  size_t pos_ = 0, end_ = 0;
  uint64_t base_ = 0;       // stream offset of buf_[0]
  bool eof_ = false;
  const EventFn* on_event_ = nullptr;
  const std::function<void()>* on_chunk_ = nullptr;
};

}  // namespace rt::prof::trace
