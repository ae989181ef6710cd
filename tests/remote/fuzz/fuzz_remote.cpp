// libFuzzer target for everything an agent or a client parses from a peer: frames (any split) and event batch
// payloads. Built and run over tests/remote/corpus by tests/remote/fuzz/run_fuzz.sh (ctest "remote: fuzz").
// The first input byte chooses what the rest is: even = a byte stream of frames, odd = an EventBatch payload
// decoded against (byte >> 1) strings the client already holds.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "rt/remote/event_batch.h"
#include "rt/remote/frame.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if ((data[0] & 1) == 0) {
      rt::remote::FrameReader reader;
      const size_t split = rest.empty() ? 0 : data[0] % rest.size();
      reader.feed(rest.data(), split);
      while (auto f = reader.next()) (void)rt::remote::decompressed(*f);
      reader.feed(rest.data() + split, rest.size() - split);
      while (auto f = reader.next()) {
        const std::string payload = rt::remote::decompressed(*f);
        if (f->type == rt::remote::FrameType::EventBatch) (void)rt::remote::decode_event_batch(payload, 1);
      }
    } else {
      (void)rt::remote::decode_event_batch(rest, data[0] >> 1);
    }
  } catch (const rt::remote::ProtocolError&) {
    // refused with a message: what should happen to bad input
  }
  return 0;
}
