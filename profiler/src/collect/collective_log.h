// Collectives that finished while a session records (rt::CollectiveEvent), held until the session's next
// drain. They arrive on whatever thread saw them complete, a few per training step, so a mutex-guarded
// list is enough; thread buffers are for the op-per-microsecond hot path.
#pragma once
#include "rt/op_observer.h"
#include "rt/prof/events.h"

namespace rt::prof::collect {

// Copies `e` into the log; past kMaxPendingCollectives undrained ones it is counted as dropped instead.
void record_collective(const rt::CollectiveEvent& e) noexcept;
// Moves the logged collectives into out.collectives (strings interned in out.strings) and adds the
// dropped count to out.dropped_records.
void drain_collectives(SessionData& out);
// Forgets what was logged before a session starts.
void discard_collectives();

inline constexpr size_t kMaxPendingCollectives = 1 << 20;

}  // namespace rt::prof::collect
