#include "rt/remote/relay.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "net/unix_socket.h"
#include "rt/error.h"
#include "rt/remote/frame.h"

namespace rt::remote {
namespace {

constexpr size_t kRelayBuffer = 256u << 10;

// Bytes on their way from one descriptor to another, at most kRelayBuffer of them.
struct Pipe {
  int from, to;
  std::string bytes;
  bool from_open = true;
  bool wants_input() const { return from_open && bytes.size() < kRelayBuffer; }
  // false when the source failed or ended.
  bool fill() {
    char buf[64 << 10];
    const ssize_t n = ::read(from, buf, std::min(sizeof(buf), kRelayBuffer - bytes.size()));
    if (n > 0) {
      bytes.append(buf, size_t(n));
      return true;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
    from_open = false;
    return false;
  }
  // false when the destination is gone.
  bool drain() {
    while (!bytes.empty()) {
      const ssize_t n = ::send(to, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      const ssize_t m = n < 0 && errno == ENOTSOCK ? ::write(to, bytes.data(), bytes.size()) : n;
      if (m > 0) {
        bytes.erase(0, size_t(m));
        continue;
      }
      return m < 0 && (errno == EAGAIN || errno == EINTR);
    }
    return true;
  }
};

}  // namespace

AgentManifest find_local_agent(const std::string& job, int rank) {
  const auto all = list_manifests(ensure_runtime_dir());
  std::vector<std::string> jobs;
  std::vector<const AgentManifest*> ranks;
  for (const auto& m : all) {
    if (jobs.empty() || jobs.back() != m.job) jobs.push_back(m.job);
    if (m.job == job) ranks.push_back(&m);
  }
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  if (ranks.empty())
    throw rt::ValueError(fmt::format("no attachable job '{}' on {}{}", job, host,
                                     jobs.empty() ? std::string(" (none runs)") : fmt::format("; running: {}", fmt::join(jobs, ", "))));
  const AgentManifest* chosen = nullptr;
  std::vector<int> numbers;
  for (const AgentManifest* m : ranks) {
    if (numbers.empty() || numbers.back() != m->rank) numbers.push_back(m->rank);
    if (m->rank == rank && (!chosen || m->start_time_ms >= chosen->start_time_ms)) chosen = m;
  }
  if (rank < 0 && numbers.size() == 1) {
    chosen = ranks.front();
    for (const AgentManifest* m : ranks)
      if (m->start_time_ms >= chosen->start_time_ms) chosen = m;
  }
  if (!chosen)
    throw rt::ValueError(fmt::format("job '{}' on {} has rank{} {}; {}", job, host, numbers.size() == 1 ? "" : "s",
                                     fmt::join(numbers, ", "), rank < 0 ? "name one with --rank" : "not rank " + std::to_string(rank)));
  return *chosen;
}

void write_error_frame(int fd, const std::string& message) {
  try {
    const std::string frame = encode_frame(FrameType::Error, nlohmann::json{{"error", message}}.dump());
    std::string_view left = frame;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!left.empty() && std::chrono::steady_clock::now() < deadline) {
      const ssize_t n = ::write(fd, left.data(), left.size());
      if (n > 0) {
        left.remove_prefix(size_t(n));
      } else if (n < 0 && errno == EAGAIN) {
        pollfd p{fd, POLLOUT, 0};
        ::poll(&p, 1, 100);
      } else if (!(n < 0 && errno == EINTR)) {
        return;
      }
    }
  } catch (const std::exception&) {
  }
}

int relay_stdio(const AgentManifest& agent, int in_fd, int out_fd) {
  UniqueFd sock;
  try {
    sock = connect_unix(agent.socket);
  } catch (const std::exception& e) {
    const std::string why = fmt::format("rtorch relay: job '{}' rank {}: {}", agent.job, agent.rank, e.what());
    write_error_frame(out_fd, why);
    fmt::print(stderr, "{}\n", why);
    return 1;
  }
  set_nonblocking(sock.get());
  set_nonblocking(in_fd);
  set_nonblocking(out_fd);
  Pipe up{in_fd, sock.get(), {}}, down{sock.get(), out_fd, {}};
  bool checked = false, shut = false;
  for (;;) {
    if (!checked && up.bytes.size() >= sizeof(kFrameMagic)) {
      if (std::memcmp(up.bytes.data(), kFrameMagic, sizeof(kFrameMagic)) != 0) {
        const std::string why =
            "rtorch relay: what arrived on stdin is not the remote-attach protocol (no RTRA frame): rtorch relay is "
            "the far end of `ssh HOST rtorch relay`, started by `rtorch attach HOST:JOB` or the studio";
        write_error_frame(out_fd, why);
        fmt::print(stderr, "{}\n", why);
        return 2;
      }
      checked = true;
    }
    if (!up.from_open && up.bytes.empty() && !shut) {
      ::shutdown(sock.get(), SHUT_WR);  // the client is done: the agent closes after its last frames
      shut = true;
    }
    if (!down.from_open && down.bytes.empty()) return 0;
    pollfd p[4];
    int n = 0;
    int up_in = -1, down_in = -1, up_out = -1, down_out = -1;
    if (up.wants_input()) p[up_in = n++] = {in_fd, POLLIN, 0};
    if (down.wants_input()) p[down_in = n++] = {sock.get(), POLLIN, 0};
    if (checked && !up.bytes.empty()) p[up_out = n++] = {sock.get(), POLLOUT, 0};
    if (!down.bytes.empty()) p[down_out = n++] = {out_fd, POLLOUT, 0};
    if (n == 0) return 0;
    if (::poll(p, nfds_t(n), -1) < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    if (up_in >= 0 && p[up_in].revents) up.fill();
    if (down_in >= 0 && p[down_in].revents) down.fill();
    if (up_out >= 0 && p[up_out].revents && !up.drain()) {  // the agent stopped reading: deliver what it sent
      up.bytes.clear();
      up.from_open = false;
      shut = true;
    }
    if (down_out >= 0 && p[down_out].revents && !down.drain()) return 0;  // ssh went away
    if (!up.from_open && !checked && !up.bytes.empty()) {
      write_error_frame(out_fd, "rtorch relay: stdin ended inside the first frame header");
      return 2;
    }
  }
}

}  // namespace rt::remote
