#include "launch_report.h"

#include <fmt/core.h>

#include <algorithm>

namespace rt::cli {

std::string failure_report(const std::vector<RankStatus>& statuses, const RankStatus& first,
                           const std::vector<int>& expected_ranks) {
  std::string out = fmt::format("rtorch launch: rank {} failed first: {} (pid {}, local rank {}, restart {})",
                                first.rank, describe_exit(first), first.pid, first.local_rank, first.restart_count);
  if (first.last_lines.empty()) {
    out += "; it printed nothing\n";
  } else {
    out += fmt::format("; its last {} lines:\n", first.last_lines.size());
    for (const std::string& line : first.last_lines) out += "    " + line + "\n";
  }
  std::string others;
  for (const RankStatus& s : statuses) {
    if (&s == &first) continue;
    others += fmt::format("{}rank {}: {}", others.empty() ? "" : "; ", s.rank, s.failed() ? describe_exit(s) : "exit code 0");
    if (s.terminated_by != 0) others += ", stopped by mpirun";
  }
  for (int rank : expected_ranks) {
    const bool reported =
        std::any_of(statuses.begin(), statuses.end(), [&](const RankStatus& s) { return s.rank == rank; });
    if (!reported) others += fmt::format("{}rank {}: no status (killed before it could report)", others.empty() ? "" : "; ", rank);
  }
  if (!others.empty()) out += "rtorch launch: the other ranks: " + others + "\n";
  return out;
}

}  // namespace rt::cli
