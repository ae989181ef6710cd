// POSIX socket plumbing for the agent and its clients: a Unix listening socket made private, the peer's uid,
// and a file descriptor that closes itself.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>

namespace rt::remote {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }
  int get() const { return fd_; }
  int release() { const int fd = fd_; fd_ = -1; return fd; }
  void reset(int fd = -1);
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// A non-blocking listening socket at `path` (removed first when a stale socket is there), mode 0600.
// Throws rt::Error naming the path: too long for sun_path, or bind/listen failed.
UniqueFd listen_unix(const std::filesystem::path& path);
// A blocking connected socket; throws rt::Error naming the path and the reason (no agent there, refused).
UniqueFd connect_unix(const std::filesystem::path& path);
// The connected peer's uid (SO_PEERCRED); -1 when the kernel does not say.
long peer_uid(int fd);
void set_nonblocking(int fd);
// Sends all of `bytes` on a blocking socket within `timeout`; throws rt::Error on failure or timeout.
void send_all(int fd, std::string_view bytes, std::chrono::milliseconds timeout);

}  // namespace rt::remote
