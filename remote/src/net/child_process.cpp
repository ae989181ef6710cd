#include "net/child_process.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "rt/error.h"

extern char** environ;

namespace rt::remote {

ChildProcess& ChildProcess::operator=(ChildProcess&& o) noexcept {
  if (this != &o) {
    reap(std::chrono::milliseconds(500));
    pid_ = o.pid_;
    status_ = o.status_;
    o.pid_ = -1;
  }
  return *this;
}

ChildProcess ChildProcess::spawn(const std::vector<std::string>& argv, int stdin_fd, int stdout_fd, int stderr_fd) {
  if (argv.empty() || argv[0].empty()) throw rt::Error("remote attach: no command to start");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // dup2 onto 0, 1, 2 clears close-on-exec on the copies; the originals close at exec (SOCK_CLOEXEC, O_CLOEXEC).
  posix_spawn_file_actions_adddup2(&actions, stdin_fd, 0);
  posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, stderr_fd, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0)
    throw rt::Error(fmt::format("remote attach: cannot start '{}': {}{}", argv[0], std::strerror(rc),
                                rc == ENOENT ? " (is it installed and on PATH? RT_SSH names another ssh command)" : ""));
  ChildProcess child;
  child.pid_ = pid;
  return child;
}

std::optional<int> ChildProcess::wait_for(std::chrono::milliseconds timeout) {
  if (pid_ < 0) return status_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno == ECHILD)) {
      status_ = r == pid_ ? status : 0;
      pid_ = -1;
      return status_;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void ChildProcess::reap(std::chrono::milliseconds grace) {
  if (pid_ < 0) return;
  if (wait_for(grace)) return;
  ::kill(pid_, SIGTERM);
  if (wait_for(std::chrono::milliseconds(1000))) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  status_ = status;
  pid_ = -1;
}

std::string describe_exit(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {}", WTERMSIG(status));
  return fmt::format("ended with wait status {}", status);
}

}  // namespace rt::remote
