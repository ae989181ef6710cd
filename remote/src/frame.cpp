#include "rt/remote/frame.h"

#include <lz4.h>

#include <cstring>

#include <fmt/format.h>

namespace rt::remote {
namespace {

void put_u16(char* p, uint16_t v) { p[0] = char(v & 0xff); p[1] = char(v >> 8); }
void put_u32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = char((v >> (8 * i)) & 0xff);
}
uint16_t get_u16(const char* p) { return uint16_t(uint8_t(p[0]) | (uint8_t(p[1]) << 8)); }
uint32_t get_u32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(uint8_t(p[i])) << (8 * i);
  return v;
}

bool known_type(uint8_t t) { return t >= uint8_t(FrameType::Hello) && t <= uint8_t(FrameType::Proof); }

uint32_t payload_limit(FrameType t) {
  return t == FrameType::EventBatch ? kMaxBatchBytes : kMaxControlBytes;
}

}  // namespace

std::string frame_type_name(uint8_t type) {
  switch (FrameType(type)) {
    case FrameType::Hello: return "Hello";
    case FrameType::Welcome: return "Welcome";
    case FrameType::Error: return "Error";
    case FrameType::Request: return "Request";
    case FrameType::Reply: return "Reply";
    case FrameType::EventBatch: return "EventBatch";
    case FrameType::Notice: return "Notice";
    case FrameType::Challenge: return "Challenge";
    case FrameType::Proof: return "Proof";
  }
  return fmt::format("type {}", type);
}

std::string encode_frame(FrameType type, std::string_view payload, bool compress) {
  std::string body;
  uint32_t raw = 0;
  uint8_t flags = 0;
  if (compress) {
    if (type != FrameType::EventBatch)
      throw ProtocolError(fmt::format("remote protocol: only EventBatch frames are compressed, not {}",
                                      frame_type_name(uint8_t(type))));
    if (payload.size() > kMaxRawBatchBytes)
      throw ProtocolError(fmt::format("remote protocol: an event batch of {} bytes is over the limit of {} bytes",
                                      payload.size(), kMaxRawBatchBytes));
    body.resize(size_t(LZ4_compressBound(int(payload.size()))));
    const int n = LZ4_compress_default(payload.data(), body.data(), int(payload.size()), int(body.size()));
    if (n <= 0) throw ProtocolError("remote protocol: LZ4 could not compress an event batch");
    body.resize(size_t(n));
    raw = uint32_t(payload.size());
    flags = kFlagLz4;
  } else {
    body.assign(payload);
  }
  if (body.size() > payload_limit(type))
    throw ProtocolError(fmt::format("remote protocol: a {} frame of {} bytes is over the limit of {} bytes",
                                    frame_type_name(uint8_t(type)), body.size(), payload_limit(type)));
  std::string out(kFrameHeaderBytes, '\0');
  std::memcpy(out.data(), kFrameMagic, 4);
  put_u16(out.data() + 4, kProtocolVersion);
  out[6] = char(type);
  out[7] = char(flags);
  put_u32(out.data() + 8, uint32_t(body.size()));
  put_u32(out.data() + 12, raw);
  out += body;
  return out;
}

std::string decompressed(const Frame& frame) {
  if (!(frame.flags & kFlagLz4)) return frame.payload;
  std::string out(frame.raw_bytes, '\0');
  const int n = LZ4_decompress_safe(frame.payload.data(), out.data(), int(frame.payload.size()), int(out.size()));
  if (n < 0 || uint32_t(n) != frame.raw_bytes)
    throw ProtocolError(fmt::format("remote protocol: a {} frame's LZ4 payload is corrupt (announced {} bytes, {})",
                                    frame_type_name(uint8_t(frame.type)), frame.raw_bytes,
                                    n < 0 ? std::string("undecodable") : fmt::format("decoded {}", n)));
  return out;
}

void FrameReader::feed(const char* data, size_t size) {
  if (consumed_ > 0 && consumed_ >= buffer_.size() / 2) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  buffer_.append(data, size);
}

std::optional<Frame> FrameReader::next() {
  const size_t available = buffer_.size() - consumed_;
  if (available < kFrameHeaderBytes) return std::nullopt;
  const char* h = buffer_.data() + consumed_;
  if (std::memcmp(h, kFrameMagic, 4) != 0)
    throw ProtocolError("remote protocol: wrong magic (the peer is not a RustyTorch agent or client, or the "
                        "stream lost its framing)");
  const uint16_t version = get_u16(h + 4);
  if (version != kProtocolVersion)
    throw ProtocolError(fmt::format("remote protocol version mismatch: the peer speaks version {}, this build "
                                    "speaks version {}; use the same RustyTorch release on both sides",
                                    version, kProtocolVersion));
  const uint8_t type = uint8_t(h[6]);
  const uint8_t flags = uint8_t(h[7]);
  const uint32_t length = get_u32(h + 8);
  const uint32_t raw = get_u32(h + 12);
  if (!known_type(type)) throw ProtocolError(fmt::format("remote protocol: unknown frame {}", frame_type_name(type)));
  const FrameType t = FrameType(type);
  if (flags & ~kFlagLz4) throw ProtocolError(fmt::format("remote protocol: {} frame with unknown flags {:#x}",
                                                          frame_type_name(type), flags));
  if ((flags & kFlagLz4) && t != FrameType::EventBatch)
    throw ProtocolError(fmt::format("remote protocol: a {} frame may not be compressed", frame_type_name(type)));
  if (!(flags & kFlagLz4) && raw != 0)
    throw ProtocolError(fmt::format("remote protocol: an uncompressed {} frame announces {} decompressed bytes",
                                    frame_type_name(type), raw));
  if ((flags & kFlagLz4) && raw > kMaxRawBatchBytes)
    throw ProtocolError(fmt::format("remote protocol: an event batch announces {} decompressed bytes, over the "
                                    "limit of {}", raw, kMaxRawBatchBytes));
  if (length > payload_limit(t))
    throw ProtocolError(fmt::format("remote protocol: a {} frame of {} bytes is over the limit of {} bytes",
                                    frame_type_name(type), length, payload_limit(t)));
  if (available < kFrameHeaderBytes + length) return std::nullopt;
  Frame f;
  f.type = t;
  f.flags = flags;
  f.raw_bytes = raw;
  f.payload.assign(h + kFrameHeaderBytes, length);
  consumed_ += kFrameHeaderBytes + length;
  return f;
}

}  // namespace rt::remote
