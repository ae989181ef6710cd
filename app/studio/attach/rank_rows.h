// app/studio/attach/rank_rows.h — what the Attach dialog's rank table shows, as text, without Qt: one row per
// rank of a listed job, with the live figures of the studio's attachment when the job is attached.
//
//   for (const RankRow& row : rank_rows(listing, AttachedSessions::instance().find(listing.job).get()))
//     table.add({row.rank, row.host, row.pid, row.step, row.step_time, row.ops, row.dropped, row.state});
//
// Contracts
// - Not attached (attached == nullptr, or an attachment of another job): what the listing's status said —
//   step = steps recorded so far, ops, state "recording" / "idle" / "not answering: <why>"; step time and
//   dropped are "—" (only an attachment measures them).
// - Attached: the attachment's ranks (those listed when it attached) with their mirrored counts, the last
//   finished step's duration, the records the agent dropped for the studio, and the phase ("live",
//   "process exited", "connection lost: <why>", ...). `ended` marks a rank whose attachment ended,
//   `problem` one that did not answer or lost its connection.
#pragma once
#include <string>
#include <vector>

#include "attach/attach_host.h"
#include "attach/attached_job.h"

namespace rt::studio {

struct RankRow {
  std::string rank, host, pid, step, step_time, ops, dropped, state;
  bool ended = false;
  bool problem = false;
};

std::vector<RankRow> rank_rows(const JobListing& job, const AttachedJob* attached);

// "1.25 ms", "312 µs", "2.4 s"; "—" for a negative duration.
std::string duration_text(int64_t ns);

}  // namespace rt::studio
