// app/cli/launch_status.h — the per-job directory `rtorch launch` creates and the status file each rank's
// supervisor leaves in it when its script process ends.
//
//   std::filesystem::path dir = make_job_dir(job_id);          // $TMPDIR/rtorch-launch-<id>-XXXXXX
//   write_rank_status(dir, status);                            // dir/rank-3.json, written atomically
//   std::vector<RankStatus> all = read_rank_statuses(dir);     // sorted by rank
//   if (const RankStatus* f = first_failure(all)) fmt::print("{}", describe_exit(*f));  // "exit code 3"
//
// The file is JSON: {"rank", "local_rank", "pid", "signaled", "code", "terminated_by", "started_at",
// "ended_at", "restart_count", "last_lines"}; times are seconds since the epoch. `terminated_by` is the
// signal the supervisor received and forwarded to its script (mpirun tearing the job down), 0 if none:
// such a rank did not fail by itself.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace rt::cli {

struct RankStatus {
  int rank = 0;
  int local_rank = 0;
  long pid = 0;
  bool signaled = false;
  int code = 0;           // exit code, or the signal number when signaled
  int terminated_by = 0;  // signal forwarded to the script by its supervisor, 0 when none
  double started_at = 0, ended_at = 0;
  int restart_count = 0;
  std::vector<std::string> last_lines;

  bool failed() const { return signaled || code != 0; }
  int shell_code() const { return signaled ? 128 + code : code; }
};

std::filesystem::path make_job_dir(const std::string& job_id);  // throws std::runtime_error
void write_rank_status(const std::filesystem::path& dir, const RankStatus& status);
std::vector<RankStatus> read_rank_statuses(const std::filesystem::path& dir);  // unreadable files are skipped
void clear_rank_statuses(const std::filesystem::path& dir);

// The failure that started it all: a failed rank its supervisor was not asked to stop, the earliest to end;
// failing that, the earliest failed rank. Null when no rank failed.
const RankStatus* first_failure(const std::vector<RankStatus>& statuses);

// "exit code 3" or "signal SIGKILL (9)".
std::string describe_exit(const RankStatus& status);

double seconds_since_epoch();

}  // namespace rt::cli
