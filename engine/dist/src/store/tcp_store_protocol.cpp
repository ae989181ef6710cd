#include "store/tcp_store_protocol.h"

#include <fmt/core.h>

#include <cstring>

namespace rt::dist::detail {

void put_u8(std::string& out, uint8_t v) { out += char(v); }
void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += char((v >> (8 * i)) & 0xff);
}
void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += char((v >> (8 * i)) & 0xff);
}
void put_bytes(std::string& out, const void* data, size_t size) {
  put_u32(out, uint32_t(size));
  out.append(static_cast<const char*>(data), size);
}
uint64_t get_le(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

const char* op_name(Op op) {
  switch (op) {
    case Op::Set: return "set";
    case Op::Get: return "get";
    case Op::Add: return "add";
    case Op::CompareSet: return "compare_set";
    case Op::Check: return "check";
    case Op::Wait: return "wait";
    case Op::DeleteKey: return "delete_key";
    case Op::NumKeys: return "num_keys";
    case Op::Join: return "join";
    case Op::WaitJoined: return "wait_for_workers";
  }
  return "?";
}

std::string encode_handshake() {
  std::string out(kStoreMagic, sizeof(kStoreMagic));
  out += char(kStoreProtocolVersion & 0xff);
  out += char(kStoreProtocolVersion >> 8);
  return out;
}

ParseStatus parse_handshake(const uint8_t* data, size_t size, std::string* why) {
  size_t n = std::min(size, sizeof(kStoreMagic));
  if (std::memcmp(data, kStoreMagic, n) != 0) {
    if (why) *why = "the peer did not start with the TCPStore magic 'RTSTOR'";
    return ParseStatus::Refuse;
  }
  if (size < kHandshakeBytes) return ParseStatus::NeedMore;
  uint16_t version = uint16_t(get_le(data + sizeof(kStoreMagic), 2));
  if (version != kStoreProtocolVersion) {
    if (why) *why = fmt::format("protocol version {} (this side speaks {})", version, kStoreProtocolVersion);
    return ParseStatus::Refuse;
  }
  return ParseStatus::Ok;
}

std::string encode_request(const Request& r) {
  std::string body;
  put_u8(body, uint8_t(r.op));
  auto key = [&](size_t i) { put_bytes(body, r.keys.at(i).data(), r.keys.at(i).size()); };
  switch (r.op) {
    case Op::Set: key(0); put_bytes(body, r.value.data(), r.value.size()); break;
    case Op::Get: put_u64(body, r.timeout_ms); key(0); break;
    case Op::Add: key(0); put_u64(body, uint64_t(r.number)); break;
    case Op::CompareSet:
      key(0);
      put_bytes(body, r.value.data(), r.value.size());
      put_bytes(body, r.desired.data(), r.desired.size());
      break;
    case Op::Wait: put_u64(body, r.timeout_ms); [[fallthrough]];
    case Op::Check:
      put_u32(body, uint32_t(r.keys.size()));
      for (size_t i = 0; i < r.keys.size(); ++i) key(i);
      break;
    case Op::DeleteKey: key(0); break;
    case Op::NumKeys:
    case Op::Join: break;
    case Op::WaitJoined: put_u64(body, r.timeout_ms); put_u64(body, uint64_t(r.number)); break;
  }
  std::string frame;
  frame.reserve(kFrameHeaderBytes + body.size());
  put_u32(frame, uint32_t(body.size()));
  frame += body;
  return frame;
}

namespace {

// Reads fields from one complete body; the first failure sticks and names what was wrong.
struct BodyReader {
  const uint8_t* p;
  size_t left;
  std::string why;

  bool fail(std::string w) {
    if (why.empty()) why = std::move(w);
    return false;
  }
  bool need(size_t n, const char* what) {
    if (!why.empty()) return false;
    if (left < n) return fail(fmt::format("the frame ends inside {}", what));
    return true;
  }
  uint64_t u(int bytes, const char* what) {
    if (!need(size_t(bytes), what)) return 0;
    uint64_t v = get_le(p, bytes);
    p += bytes;
    left -= size_t(bytes);
    return v;
  }
  bool blob(size_t max, bool non_empty, const char* what, void (*assign)(void*, const uint8_t*, size_t), void* out) {
    uint64_t n = u(4, what);
    if (!why.empty()) return false;
    if (n > max) return fail(fmt::format("{} of {} bytes is over the limit of {}", what, n, max));
    if (non_empty && n == 0) return fail(fmt::format("{} is empty", what));
    if (!need(size_t(n), what)) return false;
    assign(out, p, size_t(n));
    p += n;
    left -= size_t(n);
    return true;
  }
  void key(std::vector<std::string>& keys) {
    keys.emplace_back();
    blob(kMaxKeyBytes, true, "a key", [](void* o, const uint8_t* d, size_t n) {
      static_cast<std::string*>(o)->assign(reinterpret_cast<const char*>(d), n);
    }, &keys.back());
  }
  void value(Bytes& v) {
    blob(kMaxValueBytes, false, "a value", [](void* o, const uint8_t* d, size_t n) {
      static_cast<Bytes*>(o)->assign(d, d + n);
    }, &v);
  }
};

}  // namespace

ParsedRequest parse_request(const uint8_t* data, size_t size) {
  ParsedRequest out;
  if (size < kFrameHeaderBytes) return out;
  uint64_t body_len = get_le(data, 4);
  if (body_len == 0 || body_len > kMaxRequestBody) {
    out.status = ParseStatus::Refuse;
    out.why = fmt::format("a request frame of {} bytes (allowed: 1 to {})", body_len, kMaxRequestBody);
    return out;
  }
  if (size - kFrameHeaderBytes < body_len) return out;
  BodyReader r{data + kFrameHeaderBytes, size_t(body_len), {}};
  Request& q = out.request;
  uint8_t op = uint8_t(r.u(1, "the operation"));
  if (op < uint8_t(Op::Set) || op > uint8_t(Op::WaitJoined)) {
    out.status = ParseStatus::Refuse;
    out.why = fmt::format("unknown operation {}", op);
    return out;
  }
  q.op = Op(op);
  switch (q.op) {
    case Op::Set: r.key(q.keys); r.value(q.value); break;
    case Op::Get: q.timeout_ms = r.u(8, "the timeout"); r.key(q.keys); break;
    case Op::Add: r.key(q.keys); q.number = int64_t(r.u(8, "the delta")); break;
    case Op::CompareSet: r.key(q.keys); r.value(q.value); r.value(q.desired); break;
    case Op::Wait: q.timeout_ms = r.u(8, "the timeout"); [[fallthrough]];
    case Op::Check: {
      uint64_t count = r.u(4, "the key count");
      if (r.why.empty() && (count == 0 || count > kMaxKeysPerRequest))
        r.fail(fmt::format("a key count of {} (allowed: 1 to {})", count, kMaxKeysPerRequest));
      for (uint64_t i = 0; i < count && r.why.empty(); ++i) r.key(q.keys);
      break;
    }
    case Op::DeleteKey: r.key(q.keys); break;
    case Op::NumKeys:
    case Op::Join: break;
    case Op::WaitJoined:
      q.timeout_ms = r.u(8, "the timeout");
      q.number = int64_t(r.u(8, "the count"));
      break;
  }
  if (r.why.empty() && r.left != 0) r.fail(fmt::format("{} bytes after the last field", r.left));
  if (!r.why.empty()) {
    out.status = ParseStatus::Refuse;
    out.why = fmt::format("{} request: {}", op_name(q.op), r.why);
    out.request = Request{};
    return out;
  }
  out.status = ParseStatus::Ok;
  out.consumed = kFrameHeaderBytes + size_t(body_len);
  return out;
}

std::string encode_response(Status status, const std::string& payload) {
  std::string frame;
  put_u32(frame, uint32_t(1 + payload.size()));
  put_u8(frame, uint8_t(status));
  frame += payload;
  return frame;
}

}  // namespace rt::dist::detail
