// tcp_socket.h — the few POSIX socket calls TCPStore needs: a listening socket on every interface
// (IPv6 dual-stack, else IPv4), connecting by host name (IPv4 or IPv6) before a deadline, and sending
// or receiving whole buffers before a deadline. Failures come back as text; callers add host:port.
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "rt/export.h"

namespace rt::dist::detail {

using SocketDeadline = std::optional<std::chrono::steady_clock::time_point>;  // nullopt: none

class RT_API Socket {  // RT_API: the tests open raw connections
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& o) noexcept : fd_(o.release()) {}
  Socket& operator=(Socket&& o) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() { reset(); }
  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset();

 private:
  int fd_ = -1;
};

// Listens on `port` (0: a free one, written to *bound) with SO_REUSEADDR, non-blocking.
RT_API Socket listen_any(uint16_t port, uint16_t* bound, std::string* error);
// One attempt over every address `host` resolves to; the socket is blocking, with TCP_NODELAY.
RT_API Socket connect_once(const std::string& host, uint16_t port, SocketDeadline deadline, std::string* error);
// false with *error set ("timed out" when the deadline passed, else the system's reason).
bool send_all(int fd, const void* data, size_t size, SocketDeadline deadline, std::string* error);
bool recv_all(int fd, void* data, size_t size, SocketDeadline deadline, std::string* error, bool* timed_out);
void set_nonblocking(int fd);

}  // namespace rt::dist::detail
