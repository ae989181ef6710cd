#include "trace/trace_wire.h"

#include <fmt/core.h>

#include <cstring>

namespace rt::plugin::wire {
namespace {

template <typename T>
void put_int(std::string& out, T v) {
  using U = std::make_unsigned_t<T>;
  U u = static_cast<U>(v);
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
}

void put_string(std::string& out, std::string_view s) {
  put_int<uint32_t>(out, uint32_t(s.size()));
  out.append(s);
}

// Appends the record header, then lets `body` append the payload, then patches the length in.
template <typename Body>
void put_record(std::string& out, RecordType type, Body body) {
  put_int<uint32_t>(out, uint32_t(type));
  const size_t length_at = out.size();
  put_int<uint32_t>(out, 0);
  const size_t start = out.size();
  body();
  const uint32_t length = uint32_t(out.size() - start);
  for (size_t i = 0; i < 4; ++i) out[length_at + i] = static_cast<char>((length >> (8 * i)) & 0xff);
}

std::string_view or_empty(const char* s) { return s ? std::string_view(s) : std::string_view(); }

// Reads a payload field by field; every read checks what is left.
class PayloadReader {
 public:
  PayloadReader(std::string_view payload, uint64_t offset, uint64_t max_string, RecordType type)
      : p_(payload), offset_(offset), max_string_(max_string), type_(type) {}

  template <typename T>
  T integer(const char* field) {
    if (p_.size() < sizeof(T)) fail(fmt::format("its {} runs past the record's end", field));
    std::make_unsigned_t<T> u = 0;
    for (size_t i = 0; i < sizeof(T); ++i) u |= std::make_unsigned_t<T>(static_cast<unsigned char>(p_[i])) << (8 * i);
    p_.remove_prefix(sizeof(T));
    return static_cast<T>(u);
  }

  std::string string(const char* field, uint64_t max) {
    const uint32_t n = integer<uint32_t>(field);
    if (n > max) fail(fmt::format("its {} is {} bytes long, more than the {} allowed", field, n, max));
    if (n > p_.size()) fail(fmt::format("its {} ({} bytes) runs past the record's end", field, n));
    std::string s(p_.substr(0, n));
    if (s.find('\0') != std::string::npos) fail(fmt::format("its {} holds a NUL byte", field));
    p_.remove_prefix(n);
    return s;
  }
  std::string string(const char* field) { return string(field, max_string_); }

  void done() {
    if (!p_.empty()) fail(fmt::format("{} bytes are left over after its last field", p_.size()));
  }

  [[noreturn]] void fail(const std::string& what) {
    throw WireError(fmt::format("malformed {} record at byte {}: {}", record_name(type_), offset_, what));
  }

 private:
  std::string_view p_;
  uint64_t offset_;
  uint64_t max_string_;
  RecordType type_;
};

}  // namespace

const char* record_name(RecordType t) {
  switch (t) {
    case RecordType::Hello: return "hello";
    case RecordType::Metadata: return "metadata";
    case RecordType::Slice: return "slice";
    case RecordType::Detect: return "detect";
    case RecordType::Bytes: return "bytes";
    case RecordType::Result: return "result";
    case RecordType::End: return "end";
  }
  return "unknown";
}

RtTraceSlice Record::slice() const {
  return {.struct_size = sizeof(RtTraceSlice),
          .thread = thread,
          .thread_name = text[0].c_str(),
          .name = text[1].c_str(),
          .category = text[2].c_str(),
          .start_ns = start_ns,
          .end_ns = end_ns,
          .depth = depth};
}

void put_hello(std::string& out, std::string_view plugin_id, std::string_view format) {
  put_record(out, RecordType::Hello, [&] {
    put_int<uint32_t>(out, kProtocolVersion);
    put_string(out, plugin_id);
    put_string(out, format);
  });
}

void put_metadata(std::string& out, std::string_view key, std::string_view value) {
  put_record(out, RecordType::Metadata, [&] {
    put_string(out, key);
    put_string(out, value);
  });
}

void put_slice(std::string& out, const RtTraceSlice& s) {
  put_record(out, RecordType::Slice, [&] {
    put_int<uint64_t>(out, s.thread);
    put_int<int64_t>(out, s.start_ns);
    put_int<int64_t>(out, s.end_ns);
    put_int<int32_t>(out, RT_ABI_HAS_FIELD(&s, depth) ? s.depth : 0);
    put_string(out, or_empty(s.thread_name));
    put_string(out, or_empty(s.name));
    put_string(out, or_empty(s.category));
  });
}

void put_detect(std::string& out, int32_t confidence) {
  put_record(out, RecordType::Detect, [&] { put_int<int32_t>(out, confidence); });
}

void put_bytes(std::string& out, std::string_view data) {
  put_record(out, RecordType::Bytes, [&] { put_string(out, data); });
}

void put_result(std::string& out, int32_t status, std::string_view message) {
  put_record(out, RecordType::Result, [&] {
    put_int<int32_t>(out, status);
    put_string(out, message);
  });
}

void put_end(std::string& out) {
  put_record(out, RecordType::End, [] {});
}

void RecordReader::feed(std::string_view bytes) {
  if (pos_ > 0 && pos_ * 2 >= buffer_.size()) {
    buffer_.erase(0, pos_);
    pos_ = 0;
  }
  buffer_.append(bytes);
}

std::optional<Record> RecordReader::next() {
  const std::string_view rest = std::string_view(buffer_).substr(pos_);
  if (rest.size() < 8) return std::nullopt;
  PayloadReader header(rest.substr(0, 8), consumed_, max_string_, RecordType::End);
  const uint32_t type = header.integer<uint32_t>("type");
  const uint32_t length = header.integer<uint32_t>("length");
  if (type < uint32_t(RecordType::Hello) || type > uint32_t(RecordType::End))
    throw WireError(fmt::format("unknown record type {} at byte {}: the bytes are not the trace plugin framing",
                                type, consumed_));
  const auto t = RecordType(type);
  const uint64_t strings = 3 * (uint64_t(max_string_) + 4);
  uint64_t max_length = 0;
  switch (t) {
    case RecordType::Hello: max_length = 4 + 2 * (max_string_ + 4); break;
    case RecordType::Metadata: max_length = 2 * (max_string_ + 4); break;
    case RecordType::Slice: max_length = 28 + strings; break;
    case RecordType::Detect: max_length = 4; break;
    case RecordType::Bytes: max_length = 4 + kMaxBytesChunk; break;
    case RecordType::Result: max_length = 4 + max_string_ + 4; break;
    case RecordType::End: max_length = 0; break;
  }
  if (length > max_length)
    throw WireError(fmt::format("{} record at byte {} claims {} bytes, more than such a record may hold ({})",
                                record_name(t), consumed_, length, max_length));
  if (rest.size() < 8 + uint64_t(length)) return std::nullopt;

  PayloadReader p(rest.substr(8, length), consumed_, max_string_, t);
  Record r;
  r.type = t;
  switch (t) {
    case RecordType::Hello:
      r.number = p.integer<uint32_t>("protocol version");
      r.text[0] = p.string("plugin id");
      r.text[1] = p.string("format");
      break;
    case RecordType::Metadata:
      r.text[0] = p.string("key");
      r.text[1] = p.string("value");
      break;
    case RecordType::Slice:
      r.thread = p.integer<uint64_t>("thread");
      r.start_ns = p.integer<int64_t>("start");
      r.end_ns = p.integer<int64_t>("end");
      r.depth = p.integer<int32_t>("depth");
      r.text[0] = p.string("thread name");
      r.text[1] = p.string("name");
      r.text[2] = p.string("category");
      break;
    case RecordType::Detect: r.number = p.integer<int32_t>("confidence"); break;
    case RecordType::Bytes: r.text[0] = p.string("data", kMaxBytesChunk); break;
    case RecordType::Result:
      r.number = p.integer<int32_t>("status");
      r.text[0] = p.string("message");
      break;
    case RecordType::End: break;
  }
  p.done();
  pos_ += 8 + length;
  consumed_ += 8 + length;
  return r;
}

}  // namespace rt::plugin::wire
