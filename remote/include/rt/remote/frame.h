// rt/remote/frame.h — the framing of the remote-attach protocol (docs/remote-protocol.md): every message
// between a training process's agent and a client (the studio, `rtorch attach`) is one frame, a 16-byte
// header and a payload.
//
//   std::string bytes = rt::remote::encode_frame(rt::remote::FrameType::Request, R"({"id":1,"method":"status"})");
//   rt::remote::FrameReader reader;                 // one per connection and direction
//   reader.feed(received.data(), received.size());  // whatever recv() returned, any split
//   while (std::optional<rt::remote::Frame> f = reader.next())   // throws ProtocolError on a bad frame
//     handle(*f);
//
// Header (little-endian):  magic "RTRA" | u16 version | u8 type | u8 flags | u32 payload bytes | u32 raw bytes
// - version: kProtocolVersion. A frame of another version is refused with both versions named: the peer
//   must speak this build's protocol (there is one version so far; a later one adds a negotiation).
// - flags: kFlagLz4 — the payload is an LZ4 block that decompresses to exactly `raw bytes`; without it
//   `raw bytes` is 0. Control frames (JSON) are never compressed; event batches are.
// - Limits: a control payload is at most kMaxControlBytes, an event batch at most kMaxBatchBytes compressed
//   and kMaxRawBatchBytes decompressed. The reader checks the header before buffering the payload, so a
//   peer that announces 4 GiB costs nothing.
//
// Contracts
// - FrameReader::next() returns frames in order, std::nullopt while the next one is incomplete, and throws
//   ProtocolError (what() names the problem: wrong magic, unknown type, bad flags, oversized) for a frame
//   it refuses; after a throw the connection is unusable (close it).
// - decompressed(frame) returns the payload itself for an uncompressed frame and throws ProtocolError
//   when an LZ4 payload is corrupt or does not decompress to its announced size.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rt/error.h"
#include "rt/export.h"

RT_API_BEGIN

namespace rt::remote {

inline constexpr char kFrameMagic[4] = {'R', 'T', 'R', 'A'};
inline constexpr uint16_t kProtocolVersion = 1;
inline constexpr size_t kFrameHeaderBytes = 16;
inline constexpr uint8_t kFlagLz4 = 1;
inline constexpr uint32_t kMaxControlBytes = 1u << 20;    // 1 MiB of JSON
inline constexpr uint32_t kMaxBatchBytes = 64u << 20;     // one compressed event batch
inline constexpr uint32_t kMaxRawBatchBytes = 256u << 20; // ... decompressed

enum class FrameType : uint8_t {
  Hello = 1,       // client -> agent, JSON: who connects and what it wants (docs/remote-protocol.md)
  Welcome = 2,     // agent -> client, JSON: the agent's manifest
  Error = 3,       // either way, JSON {"error": "..."}; the sender closes after it
  Request = 4,     // client -> agent, JSON {"id": n, "method": "...", "params": {...}}
  Reply = 5,       // agent -> client, JSON {"id": n, "result": ...} or {"id": n, "error": "..."}
  EventBatch = 6,  // agent -> client, binary (rt/remote/event_batch.h), LZ4
  Notice = 7,      // agent -> client, JSON, unasked: {"event": "paused", ...}
  Challenge = 8,   // agent -> client, JSON {"auth": "hmac-sha256", "nonce": hex}: prove a token (TCP, rt/remote/tcp.h)
  Proof = 9,       // client -> agent, JSON {"scope": "observe"|"control", "mac": hex}: the answer to a Challenge
};

// The type's name ("EventBatch"), or "type N" for one this build does not know.
std::string frame_type_name(uint8_t type);

// Every protocol violation; what() says what was wrong with which frame.
class ProtocolError : public rt::Error {
 public:
  using rt::Error::Error;
};

struct Frame {
  FrameType type = FrameType::Error;
  uint8_t flags = 0;
  uint32_t raw_bytes = 0;  // kFlagLz4: the decompressed size
  std::string payload;     // as sent (compressed when kFlagLz4)
};

// A frame's bytes. compress: LZ4 the payload (EventBatch only). Throws ProtocolError when the payload is
// over its type's limit.
std::string encode_frame(FrameType type, std::string_view payload, bool compress = false);

// The payload of `frame`, decompressed when it is LZ4.
std::string decompressed(const Frame& frame);

class FrameReader {
 public:
  void feed(const char* data, size_t size);
  std::optional<Frame> next();
  size_t buffered() const { return buffer_.size() - consumed_; }

 private:
  std::string buffer_;
  size_t consumed_ = 0;
};

}  // namespace rt::remote

RT_API_END
