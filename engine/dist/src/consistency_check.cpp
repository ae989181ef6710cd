// RT_DISTRIBUTED_DEBUG=DETAIL: every member of a group compares each collective's fingerprint with the
// others' through the store before the backend runs it (PyTorch's TORCH_DISTRIBUTED_DEBUG=DETAIL check).
#include <fmt/core.h>

#include "rt/dist/ledger.h"
#include "rt/dist/process_group.h"

namespace rt::dist {

namespace {
std::string key(uint64_t seq, int rank) { return fmt::format("detail/{}/{}", seq, rank); }

std::string call_text(uint64_t ledger_id) {
  for (const CollectiveRecord& r : ledger_snapshot())
    if (r.id == ledger_id) return describe_record(r);
  return "?";
}
}  // namespace

void ProcessGroup::check_consistency(const Call& c) {
  Store& store = *consistency_store_;
  const std::string mine = fmt::format("{:016x}\n{}", c.fingerprint, call_text(c.ledger_id));
  store.set(key(c.seq, rank()), mine);
  if (c.seq > 2) store.delete_key(key(c.seq - 2, rank()));  // bounded: the others have read it by now
  for (int r = 0; r < size(); ++r) {
    if (r == rank()) continue;
    const std::string k = key(c.seq, r);
    std::string theirs;
    try {
      store.wait({k}, timeout());
      theirs = store.get_string(k);
    } catch (const DistError& e) {
      throw DistBackendError(fmt::format("RT_DISTRIBUTED_DEBUG=DETAIL: {} could not read the fingerprint of rank {} "
                                         "of group '{}' (this rank called {}): {}",
                                         c.what, global_rank(r), group_name(), mine.substr(mine.find('\n') + 1),
                                         e.what()));
    }
    if (theirs.compare(0, 16, mine, 0, 16) != 0)
      throw DistBackendError(fmt::format("RT_DISTRIBUTED_DEBUG=DETAIL: collective mismatch in group '{}' at sequence "
                                         "{}: rank {} called {} where rank {} called {}",
                                         group_name(), c.seq, global_rank(r), theirs.substr(theirs.find('\n') + 1),
                                         global_rank(rank()), mine.substr(mine.find('\n') + 1)));
  }
}

}  // namespace rt::dist
