// app/cli/launch_process.h — starting, signalling and waiting for the processes `rtorch launch` runs
// (mpirun from the launcher, the script's `rtorch run` from each rank's supervisor).
//
//   ChildSpec spec{{"/usr/bin/mpirun", "-np", "2", ...}};
//   spec.parent_death_signal = SIGTERM;       // PR_SET_PDEATHSIG: sent to the child when we die
//   pid_t pid = spawn_child(spec);            // throws std::runtime_error when fork/exec fails
//   SignalForwarding forward(pid);            // SIGINT/SIGTERM/SIGHUP sent to us go to `pid` instead
//   ExitStatus st = wait_child(pid);          // st.signaled ? st.code is the signal : st.code is exit code
//
// Contracts: spawn_child reports an exec failure (missing program, no permission) as an exception in the
// parent, not as a child that exits 127. Only one SignalForwarding may be alive at a time; it restores the
// previous handlers when destroyed.
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

namespace rt::cli {

struct ChildSpec {
  std::vector<std::string> argv;  // argv[0] is the program's path (no PATH search)
  int parent_death_signal = 0;  // 0: none
  int stdout_fd = -1;  // -1: inherit; else dup2'ed onto 1 in the child
  int stderr_fd = -1;
  std::vector<int> close_in_child;  // e.g. the read ends of the pipes given as stdout_fd/stderr_fd
};

pid_t spawn_child(const ChildSpec& spec);

struct ExitStatus {
  bool signaled = false;
  int code = 0;  // the exit code, or the signal number when signaled
  int shell_code() const { return signaled ? 128 + code : code; }  // how a shell reports it ($?)
};

ExitStatus wait_child(pid_t pid);                     // blocks; retries on EINTR
bool try_wait_child(pid_t pid, ExitStatus& status);  // false while the child runs

// "SIGKILL" for 9; "signal 64" when the number has no name.
std::string signal_name(int sig);

class SignalForwarding {
 public:
  explicit SignalForwarding(pid_t target);
  ~SignalForwarding();
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;
  int received() const;  // the last forwarded signal, 0 when none
};

// The first executable named `program` in PATH, or an empty string.
std::string find_on_path(const std::string& program);

// This executable (/proc/self/exe).
std::string self_executable();

}  // namespace rt::cli
