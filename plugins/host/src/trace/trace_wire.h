// trace_wire.h — the framing between the host and its trace-plugin child (rtorch-trace-plugin).
//
//   std::string out;
//   wire::put_metadata(out, "sample_period_ns", "10000000");
//   wire::put_slice(out, slice);
//   wire::put_result(out, RT_STATUS_OK, "");
//
//   wire::RecordReader reader(limits.max_string_bytes);
//   reader.feed(bytes_from_the_pipe);
//   while (std::optional<wire::Record> r = reader.next()) handle(*r);   // throws WireError on garbage
//
// Note [Trace plugin framing]
// Records are [u32 type][u32 payload length][payload], little-endian. Strings in a payload are
// [u32 length][bytes], never holding a NUL; integers are fixed-size. Payloads:
//   Hello    1  u32 protocol version, string plugin id, string format     (child -> parent, first; a child
//                                                                        that cannot load the plugin sends
//                                                                        only a Result)
//   Metadata 2  string key, string value                                  (both ways)
//   Slice    3  u64 thread, i64 start, i64 end, i32 depth, string thread name, name, category (both ways)
//   Detect   4  i32 confidence                                            (child -> parent)
//   Bytes    5  string data (an exporter's output; at most kMaxBytesChunk)  (child -> parent)
//   Result   6  i32 status, string message                                (child -> parent, last)
//   End      7  empty                                                     (parent -> child, last)
// The reader trusts nothing: an unknown type, a length past the type's maximum, a string running past its
// payload or longer than the limit, a NUL in a string, or a payload with bytes left over is a WireError
// naming the byte offset. The child's stdout and stderr are not the channel (it is fd kRecordFd), so a
// plugin that prints cannot corrupt it.
#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "rt/plugin/abi.h"

namespace rt::plugin::wire {

inline constexpr uint32_t kProtocolVersion = 1;
inline constexpr int kRecordFd = 3;                     // the child's end of the record channel
inline constexpr uint32_t kMaxBytesChunk = 1u << 20;

enum class RecordType : uint32_t { Hello = 1, Metadata = 2, Slice = 3, Detect = 4, Bytes = 5, Result = 6, End = 7 };
const char* record_name(RecordType t);

class WireError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Record {
  RecordType type = RecordType::End;
  int64_t number = 0;  // Hello: version; Detect: confidence; Result: status
  uint64_t thread = 0;
  int64_t start_ns = 0, end_ns = 0;
  int32_t depth = 0;
  std::string text[3];  // Hello: id, format; Metadata: key, value; Slice: thread name, name, category;
                        // Bytes: data; Result: message
  // A Slice record as the ABI's struct; points into this record's strings.
  RtTraceSlice slice() const;
};

void put_hello(std::string& out, std::string_view plugin_id, std::string_view format);
void put_metadata(std::string& out, std::string_view key, std::string_view value);
void put_slice(std::string& out, const RtTraceSlice& slice);  // NULL strings are written empty
void put_detect(std::string& out, int32_t confidence);
void put_bytes(std::string& out, std::string_view data);      // at most kMaxBytesChunk
void put_result(std::string& out, int32_t status, std::string_view message);
void put_end(std::string& out);

class RecordReader {
 public:
  explicit RecordReader(uint64_t max_string_bytes) : max_string_(max_string_bytes) {}
  void feed(std::string_view bytes);
  // The next whole record, or nullopt until more bytes arrive. Throws WireError.
  std::optional<Record> next();
  bool holds_partial_record() const { return pos_ < buffer_.size(); }
  uint64_t offset() const { return consumed_; }  // bytes of whole records read so far

 private:
  uint64_t max_string_;
  std::string buffer_;
  size_t pos_ = 0;
  uint64_t consumed_ = 0;
};

}  // namespace rt::plugin::wire
