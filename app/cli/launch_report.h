// app/cli/launch_report.h — what `rtorch launch` prints after a failed attempt: the first failure (rank,
// exit code or signal, its last lines of output) and how every other rank ended.
//
//   rtorch launch: rank 1 failed first: exit code 3 (pid 4242, local rank 1, restart 0); its last 2 lines:
//       Traceback (most recent call last):
//       ValueError: bad batch
//   rtorch launch: the other ranks: rank 0: signal SIGTERM (15), stopped by mpirun
#pragma once
#include <string>
#include <vector>

#include "launch_status.h"

namespace rt::cli {

// expected_ranks: the ranks this node ran; those without a status file are listed as such.
std::string failure_report(const std::vector<RankStatus>& statuses, const RankStatus& first,
                           const std::vector<int>& expected_ranks);

}  // namespace rt::cli
