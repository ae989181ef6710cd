#include "trace/child_process.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

#include "trace/trace_wire.h"

extern char** environ;

namespace rt::plugin {
namespace {

constexpr size_t kOutputTail = 4096;

// Moves `fd` to a close-on-exec descriptor above 9, so the child's dup2 targets 0..3 never collide with it.
int high_fd(int fd) {
  const int moved = fcntl(fd, F_DUPFD_CLOEXEC, 10);
  const int saved = errno;
  close(fd);
  if (moved < 0) throw std::runtime_error(fmt::format("cannot duplicate a descriptor: {}", strerror(saved)));
  return moved;
}

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

void keep_tail(std::string& tail, std::string_view bytes) {
  tail.append(bytes);
  if (tail.size() > kOutputTail) tail.erase(0, tail.size() - kOutputTail);
}

std::string signal_name(int sig) {
  if (const char* abbrev = sigabbrev_np(sig)) return std::string("SIG") + abbrev;
  return fmt::format("signal {}", sig);
}

}  // namespace

std::string ChildExit::describe(std::chrono::milliseconds timeout) const {
  if (timed_out) {
    const double seconds = double(timeout.count()) / 1000.0;
    return fmt::format("ran past its {:g} s timeout and was killed", seconds);
  }
  if (stopped) return "was stopped";
  if (signal == SIGKILL) return "was killed (SIGKILL)";
  if (signal != 0) return fmt::format("crashed ({})", signal_name(signal));
  if (exited && exit_code != 0) return fmt::format("exited with status {}", exit_code);
  return "ended";
}

ChildProcess::ChildProcess(const std::filesystem::path& program, const std::vector<std::string>& args) {
  int input[2], records[2], output[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, input) != 0)
    throw std::runtime_error(fmt::format("cannot create a socket pair: {}", strerror(errno)));
  if (pipe2(records, O_CLOEXEC) != 0 || pipe2(output, O_CLOEXEC) != 0) {
    const int saved = errno;
    close(input[0]);
    close(input[1]);
    throw std::runtime_error(fmt::format("cannot create a pipe: {}", strerror(saved)));
  }
  for (int* fd : {&input[0], &input[1], &records[0], &records[1], &output[0], &output[1]}) *fd = high_fd(*fd);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, input[1], 0);
  posix_spawn_file_actions_adddup2(&actions, output[1], 1);
  posix_spawn_file_actions_adddup2(&actions, output[1], 2);
  posix_spawn_file_actions_adddup2(&actions, records[1], wire::kRecordFd);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none, defaults;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGSEGV, SIGBUS, SIGABRT, SIGCHLD}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigdefault(&attr, &defaults);

  std::vector<std::string> argv_text{program.string()};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int rc = posix_spawn(&pid_, program.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(input[1]);
  close(records[1]);
  close(output[1]);
  input_fd_ = input[0];
  records_fd_ = records[0];
  output_fd_ = output[0];
  if (rc != 0) {
    pid_ = -1;
    close_fd(input_fd_);
    close_fd(records_fd_);
    close_fd(output_fd_);
    throw std::runtime_error(fmt::format("cannot start {}: {}", program.string(), strerror(rc)));
  }
  set_nonblocking(input_fd_);
  set_nonblocking(records_fd_);
  set_nonblocking(output_fd_);
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !reaped_) {
    kill_group();
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  close_fd(input_fd_);
  close_fd(records_fd_);
  close_fd(output_fd_);
}

void ChildProcess::kill_group() {
  if (pid_ <= 0 || reaped_) return;
  kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);
}

ChildExit ChildProcess::run(std::string_view input, const std::function<bool(std::string_view)>& on_records,
                            std::chrono::steady_clock::time_point deadline) {
  ChildExit result;
  size_t written = 0;
  if (input.empty()) close_fd(input_fd_);
  char buffer[64 << 10];
  int status = 0;

  // Reads what `fd` has now; returns false when it is closed (EOF or error).
  auto drain = [&](int& fd, bool records) {
    for (;;) {
      const ssize_t n = read(fd, buffer, sizeof buffer);
      if (n > 0) {
        if (records) {
          if (!on_records(std::string_view(buffer, size_t(n)))) {
            result.stopped = true;
            return true;
          }
        } else {
          keep_tail(result.output, std::string_view(buffer, size_t(n)));
        }
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      close_fd(fd);
      return false;
    }
  };

  while (!result.stopped) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      result.timed_out = true;
      break;
    }
    if (!reaped_) {
      const pid_t w = waitpid(pid_, &status, WNOHANG);
      if (w == pid_) reaped_ = true;
    }
    if (reaped_) {  // take what is left, then stop even if a grandchild holds the pipes open
      if (records_fd_ >= 0) drain(records_fd_, true);
      if (output_fd_ >= 0) drain(output_fd_, false);
      break;
    }
    pollfd fds[3];
    nfds_t count = 0;
    if (input_fd_ >= 0) fds[count++] = {input_fd_, POLLOUT, 0};
    if (records_fd_ >= 0) fds[count++] = {records_fd_, POLLIN, 0};
    if (output_fd_ >= 0) fds[count++] = {output_fd_, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    const int wait_ms = int(std::min<long long>(std::max<long long>(left, 1), 50));
    if (count == 0) {
      poll(nullptr, 0, wait_ms);
      continue;
    }
    if (poll(fds, count, wait_ms) < 0 && errno != EINTR)
      throw std::runtime_error(fmt::format("poll failed: {}", strerror(errno)));
    for (nfds_t i = 0; i < count && !result.stopped; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == input_fd_) {
        const size_t chunk = std::min<size_t>(input.size() - written, 256 << 10);
        const ssize_t n = send(input_fd_, input.data() + written, chunk, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) written += size_t(n);
        if ((n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) || written == input.size())
          close_fd(input_fd_);  // done, or the child stopped reading
      } else if (fds[i].fd == records_fd_) {
        drain(records_fd_, true);
      } else if (fds[i].fd == output_fd_) {
        drain(output_fd_, false);
      }
    }
  }
  if (!reaped_) {
    kill_group();
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
  }
  close_fd(input_fd_);
  close_fd(records_fd_);
  close_fd(output_fd_);
  if (WIFEXITED(status)) {
    result.exited = true;
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace rt::plugin
