// What the process groups call to fill the ledger (rt/dist/ledger.h). See Note [Ledger slots].
#pragma once
#include <cstdint>
#include <string>

#include "rt/dist/ledger.h"
#include "rt/export.h"
#include "rt/tensor.h"

namespace rt::dist::detail {

// Note [Ledger slots]
// The ledger is a ring of kLedgerCapacity records; a call's id picks its slot ((id - 1) % capacity).
// record() fills the slot under one uncontended lock (tens of nanoseconds; the collective itself costs
// microseconds at least) and returns the id, with start_ns = enqueue_ns; start(id) and finish(id) stamp
// start_ns and end_ns only while the slot still holds that id, so a record overwritten by newer ones is
// never touched. A backend that queues work calls start when it takes the call up (gloo's workers); the
// others start it as they issue it. Backends call finish from whatever thread sees the operation complete
// (gloo's worker, an MPI test, an event query); finish also hands the record to the profiler, if one
// records (rt::report_collective).
struct LedgerEntry {
  const char* op;
  uint64_t seq;
  uint32_t group;
  bool point_to_point;
  int32_t peer;
  const Tensor* first;          // the tensor whose shape is shown
  int64_t numel;                // elements moved, all tensors
  uint64_t shapes_hash;
};
// Exported for the ledger's tests (tests/dist/test_ledger.cpp).
RT_API uint64_t ledger_record(const LedgerEntry& e);
RT_API void ledger_start(uint64_t id);
RT_API void ledger_finish(uint64_t id);
RT_API uint32_t ledger_group_id(const std::string& name);
RT_API uint64_t hash_shape(uint64_t h, const Tensor& t);

}  // namespace rt::dist::detail
