// tcp_store_protocol.h — TCPStore's wire format: the handshake, request and response frames, their
// limits, and the parser the server runs on every byte it receives (callable without sockets, so the
// fuzz harness and the tests feed it directly). docs/distributed.md documents it message by message.
//
//   std::string wire = encode_request(Request{Op::Set, {"k"}, bytes("v")});
//   ParsedRequest p = parse_request(wire.data(), wire.size());   // p.status == ParseStatus::Ok
//
// Contract: parse_request reads only [data, data + size), never throws, and answers Ok (a whole valid
// frame: `consumed` bytes), NeedMore (a valid prefix; nothing consumed) or Refuse (`why` says what is
// wrong; the server closes that connection).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "rt/dist/store.h"
#include "rt/export.h"
#include "store/store_checks.h"

namespace rt::dist::detail {

inline constexpr char kStoreMagic[6] = {'R', 'T', 'S', 'T', 'O', 'R'};
inline constexpr uint16_t kStoreProtocolVersion = 1;
inline constexpr size_t kHandshakeBytes = 8;  // magic + version (u16)
inline constexpr size_t kFrameHeaderBytes = 4;  // u32 body length
// The largest request body: compare_set with a key of 64 KiB and two values of 1 GiB.
inline constexpr uint64_t kMaxRequestBody = 1 + (4 + kMaxKeyBytes) + 2 * (4 + uint64_t(kMaxValueBytes));
// The largest response body: a status and a value of 1 GiB.
inline constexpr uint64_t kMaxResponseBody = 1 + 4 + uint64_t(kMaxValueBytes);
inline constexpr uint32_t kMaxKeysPerRequest = 1u << 16;

enum class Op : uint8_t {
  Set = 1,         // key, value                  -> Ok
  Get = 2,         // timeout_ms u64, key         -> Ok value | Timeout
  Add = 3,         // key, delta i64              -> Ok i64 | Error
  CompareSet = 4,  // key, expected, desired      -> Ok value
  Check = 5,       // keys                        -> Ok u8
  Wait = 6,        // timeout_ms u64, keys        -> Ok | Timeout
  DeleteKey = 7,   // key                         -> Ok u8
  NumKeys = 8,     //                             -> Ok i64
  Join = 9,        //                             -> Ok i64 (stores created so far)
  WaitJoined = 10, // timeout_ms u64, count i64   -> Ok | Timeout
};
enum class Status : uint8_t { Ok = 0, Timeout = 1, Error = 2 };

struct Request {
  Op op = Op::NumKeys;
  std::vector<std::string> keys;  // one for the single-key ops
  Bytes value;                    // Set's value, CompareSet's expected
  Bytes desired;                  // CompareSet's desired
  int64_t number = 0;             // Add's delta, WaitJoined's count
  uint64_t timeout_ms = 0;        // Get, Wait, WaitJoined; 0 = no timeout
};

enum class ParseStatus { Ok, NeedMore, Refuse };

struct ParsedRequest {
  ParseStatus status = ParseStatus::NeedMore;
  size_t consumed = 0;
  Request request;
  std::string why;
};

RT_API std::string encode_handshake();
// Ok when the 8 bytes are our magic and version; NeedMore with fewer bytes; Refuse otherwise.
RT_API ParseStatus parse_handshake(const uint8_t* data, size_t size, std::string* why);

RT_API std::string encode_request(const Request& request);
RT_API ParsedRequest parse_request(const uint8_t* data, size_t size);

// A response frame: header, status, payload (already encoded by the caller).
std::string encode_response(Status status, const std::string& payload = {});
void put_u8(std::string& out, uint8_t v);
void put_u32(std::string& out, uint32_t v);
void put_u64(std::string& out, uint64_t v);
void put_bytes(std::string& out, const void* data, size_t size);  // u32 length + bytes
uint64_t get_le(const uint8_t* p, int bytes);

const char* op_name(Op op);

}  // namespace rt::dist::detail
