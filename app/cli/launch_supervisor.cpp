#include "launch_supervisor.h"

#include <fcntl.h>
#include <signal.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "launch_output.h"
#include "launch_status.h"

namespace rt::cli {
namespace {

struct Pipe {
  int read = -1, write = -1;
  Pipe() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    read = fds[0];
    write = fds[1];
  }
};

// Reads what is available on fd into `stream`; false at end of file (the fd is then closed).
bool pump(int& fd, TaggedStream& stream) {
  char buf[65536];
  ssize_t n;
  do {
    n = ::read(fd, buf, sizeof buf);
  } while (n < 0 && errno == EINTR);
  if (n > 0) {
    stream.feed(buf, static_cast<size_t>(n));
    return true;
  }
  if (n < 0 && errno == EAGAIN) return true;
  stream.finish();
  close(fd);
  fd = -1;
  return false;
}

}  // namespace

SupervisedResult supervise(const SupervisedRun& run) {
  Pipe out, err;
  ChildSpec spec{run.argv, SIGKILL, out.write, err.write, {out.read, err.read}};
  SupervisedResult result;
  result.started_at = seconds_since_epoch();
  result.pid = spawn_child(spec);
  close(out.write);
  close(err.write);
  SignalForwarding forwarding(result.pid);

  LineTail tail(run.tail_lines);
  TaggedStream out_stream(run.prefix, STDOUT_FILENO, tail), err_stream(run.prefix, STDERR_FILENO, tail);
  int fds[2] = {out.read, err.read};
  TaggedStream* streams[2] = {&out_stream, &err_stream};
  const int interval_ms = std::max(1, static_cast<int>(run.poll_interval_s * 1000));
  bool exited = false;
  while (fds[0] >= 0 || fds[1] >= 0) {
    pollfd pfd[2];
    nfds_t count = 0;
    int which[2];
    for (int i = 0; i < 2; ++i)
      if (fds[i] >= 0) {
        pfd[count] = {fds[i], POLLIN, 0};
        which[count++] = i;
      }
    // Once the script has ended, only what is already written is read: a process it left behind may hold
    // the pipes open for ever.
    const int ready = poll(pfd, count, exited ? 0 : interval_ms);
    if (ready < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    if (ready > 0) {
      for (nfds_t k = 0; k < count; ++k)
        if (pfd[k].revents != 0) pump(fds[which[k]], *streams[which[k]]);
      continue;
    }
    if (exited) break;
    exited = try_wait_child(result.pid, result.exit);
  }
  for (int i = 0; i < 2; ++i)
    if (fds[i] >= 0) {
      streams[i]->finish();
      close(fds[i]);
    }
  if (!exited) result.exit = wait_child(result.pid);
  result.ended_at = seconds_since_epoch();
  result.terminated_by = forwarding.received();
  result.last_lines = tail.lines();
  return result;
}

}  // namespace rt::cli
