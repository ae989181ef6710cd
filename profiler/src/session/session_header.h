// The part of a SessionData every delta read carries whole (rt/prof/session_delta.h): the header
// fields, the metadata and the thread records, without any op, GPU, memory, counter or step record.
//
//   SessionData& r = delta.records;
//   copy_session_header(session_data, r);   // then append the new records
#pragma once
#include "rt/prof/events.h"

namespace rt::prof {

inline void copy_session_header(const SessionData& from, SessionData& to) {
  to.name = from.name;
  to.clock_offset_ns = from.clock_offset_ns;
  to.start_ns = from.start_ns;
  to.end_ns = from.end_ns;
  to.complete = from.complete;
  to.dropped_records = from.dropped_records;
  to.metadata = from.metadata;
  to.threads = from.threads;
}

}  // namespace rt::prof
