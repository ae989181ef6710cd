// A program started with chosen descriptors as its stdin, stdout and stderr (posix_spawnp: no fork of a
// multi-threaded caller), and reaped by whoever owns it: the transport under `ssh HOST rtorch relay` and
// `ssh HOST rtorch relay --list`.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace rt::remote {

class ChildProcess {
 public:
  // Starts argv[0] (searched in PATH) with stdin_fd, stdout_fd and stderr_fd as its descriptors 0, 1 and 2;
  // the caller keeps (and later closes) its own copies. Throws rt::Error naming the program when it cannot
  // start (not installed: the message says so).
  static ChildProcess spawn(const std::vector<std::string>& argv, int stdin_fd, int stdout_fd, int stderr_fd);

  ChildProcess() = default;
  ChildProcess(ChildProcess&& o) noexcept : pid_(o.pid_), status_(o.status_) { o.pid_ = -1; }
  ChildProcess& operator=(ChildProcess&& o) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  // Reaps the child: waits `grace` for it to exit by itself, then SIGTERM, then SIGKILL.
  ~ChildProcess() { reap(std::chrono::milliseconds(500)); }

  pid_t pid() const { return pid_; }
  // The exit status once it exited (as waitpid reports it), waiting at most `timeout`; nullopt while it runs.
  std::optional<int> wait_for(std::chrono::milliseconds timeout);
  void reap(std::chrono::milliseconds grace);

 private:
  pid_t pid_ = -1;
  int status_ = 0;
};

// "exited with status 255", "killed by signal 9".
std::string describe_exit(int status);

}  // namespace rt::remote
