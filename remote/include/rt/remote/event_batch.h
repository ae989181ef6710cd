// rt/remote/event_batch.h — a profiling session's records on the wire: the agent sends what its session
// recorded since the previous batch (an rt::prof::SessionDelta) as one EventBatch frame, and the client
// rebuilds the same delta and appends it (rt::prof::append_delta), so a remote session grows exactly as a
// local live view's does.
//
//   // agent
//   rt::prof::SessionDelta delta = session.snapshot_since(cursor);
//   std::string frame = rt::remote::encode_frame(rt::remote::FrameType::EventBatch,
//                                                rt::remote::encode_event_batch({std::move(delta), dropped}), true);
//   // client
//   rt::remote::EventBatch b = rt::remote::decode_event_batch(rt::remote::decompressed(frame), data.strings.size());
//   if (b.delta.reset) data = std::move(b.delta.records); else rt::prof::append_delta(data, std::move(b.delta));
//
// Contracts
// - The encoding is docs/remote-protocol.md's "EventBatch payload": every record field of events.h, strings
//   as they are new to the session (a reset carries the whole table).
// - decode_event_batch validates everything before returning: counts against the bytes left, enum values,
//   each gradient histogram's counts (rt::prof::gradient_histogram_problem),
//   string ids against the strings the client will hold (known_strings, the size of its table: 0 before a
//   reset), that an increment continues the client's table (first_new_string == known_strings), and no bytes
//   left over. Anything else throws ProtocolError naming the field; it never crashes on hostile input.
// - The cursor is the agent's business: the decoded delta's cursor is default.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "rt/export.h"
#include "rt/prof/session_delta.h"

RT_API_BEGIN

namespace rt::remote {

struct EventBatch {
  rt::prof::SessionDelta delta;
  uint64_t dropped_by_agent = 0;  // records the agent's bounded buffer dropped for this client so far
};

std::string encode_event_batch(const EventBatch& batch);
EventBatch decode_event_batch(std::string_view payload, size_t known_strings);

// Records in a delta (ops, GPU activities, collectives, memory events, counters, gradient histograms), for drop
// accounting.
uint64_t record_count(const rt::prof::SessionData& d);

}  // namespace rt::remote

RT_API_END
