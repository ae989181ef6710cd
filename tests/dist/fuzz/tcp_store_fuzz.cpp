// libFuzzer target for the TCPStore server's input: the handshake and the request parser, fed the same
// way the server feeds them (a handshake, then frames back to back until one is incomplete or refused).
// Built only with a compiler that supports -fsanitize=fuzzer (clang); see tests/dist/CMakeLists.txt.
//   build/bin/tcp_store_fuzz -max_total_time=60 corpus/
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "store/tcp_store_protocol.h"

using namespace rt::dist::detail;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ParseStatus hello = parse_handshake(data, size, nullptr);
  // Also parse without a handshake in front, so the fuzzer reaches the frames from either start.
  size_t at = hello == ParseStatus::Ok ? kHandshakeBytes : 0;
  while (at < size) {
    ParsedRequest p = parse_request(data + at, size - at);
    if (p.status != ParseStatus::Ok) {
      if (p.consumed != 0) std::abort();
      if (p.status == ParseStatus::Refuse && p.why.empty()) std::abort();
      break;
    }
    if (p.consumed == 0 || p.consumed > size - at) std::abort();
    // What parses re-encodes to the same bytes: the parser neither invents nor drops fields.
    std::string again = encode_request(p.request);
    if (again.size() != p.consumed || again.compare(0, again.size(), reinterpret_cast<const char*>(data + at), p.consumed) != 0)
      std::abort();
    at += p.consumed;
  }
  return 0;
}
