#include "store/tcp_socket.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/core.h>

#include <cerrno>
#include <cstring>

namespace rt::dist::detail {

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = o.release();
  }
  return *this;
}

void Socket::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

namespace {

// Milliseconds left for poll(): -1 without a deadline, 0 once it has passed.
int poll_ms(SocketDeadline deadline) {
  if (!deadline) return -1;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) return 0;
  return int(std::min<int64_t>(left.count() + 1, 1 << 30));
}

// Waits for `events` on fd; false when the deadline passed first (or poll failed: *error).
bool wait_for(int fd, short events, SocketDeadline deadline, std::string* error, bool* timed_out) {
  for (;;) {
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, poll_ms(deadline));
    if (n > 0) return true;
    if (n == 0) {
      *error = "timed out";
      if (timed_out) *timed_out = true;
      return false;
    }
    if (errno != EINTR) {
      *error = std::string("poll: ") + std::strerror(errno);
      return false;
    }
  }
}

Socket listen_family(int family, uint16_t port, uint16_t* bound, std::string* error) {
  Socket s(::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) {
    *error = std::string("socket: ") + std::strerror(errno);
    return {};
  }
  int one = 1, zero = 0;
  ::setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_storage addr{};
  socklen_t len = 0;
  if (family == AF_INET6) {
    ::setsockopt(s.fd(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));  // IPv4 clients too
    auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_any;
    a->sin6_port = htons(port);
    len = sizeof(*a);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&addr);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_ANY);
    a->sin_port = htons(port);
    len = sizeof(*a);
  }
  if (::bind(s.fd(), reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(s.fd(), SOMAXCONN) != 0) {
    *error = std::strerror(errno);
    return {};
  }
  len = sizeof(addr);
  ::getsockname(s.fd(), reinterpret_cast<sockaddr*>(&addr), &len);
  *bound = ntohs(family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                                    : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  set_nonblocking(s.fd());
  return s;
}

}  // namespace

Socket listen_any(uint16_t port, uint16_t* bound, std::string* error) {
  std::string v6_error;
  Socket s = listen_family(AF_INET6, port, bound, &v6_error);
  if (s.valid()) return s;
  s = listen_family(AF_INET, port, bound, error);
  if (!s.valid() && v6_error != *error) *error = fmt::format("{} (IPv6: {})", *error, v6_error);
  return s;
}

Socket connect_once(const std::string& host, uint16_t port, SocketDeadline deadline, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (rc != 0) {
    *error = fmt::format("cannot resolve '{}': {}", host, ::gai_strerror(rc));
    return {};
  }
  Socket result;
  for (addrinfo* a = found; a && !result.valid(); a = a->ai_next) {
    Socket s(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (!s.valid()) {
      *error = std::string("socket: ") + std::strerror(errno);
      continue;
    }
    set_nonblocking(s.fd());
    if (::connect(s.fd(), a->ai_addr, a->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        *error = std::strerror(errno);
        continue;
      }
      if (!wait_for(s.fd(), POLLOUT, deadline, error, nullptr)) continue;
      int so_error = 0;
      socklen_t len = sizeof(so_error);
      ::getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &so_error, &len);
      if (so_error != 0) {
        *error = std::strerror(so_error);
        continue;
      }
    }
    ::fcntl(s.fd(), F_SETFL, ::fcntl(s.fd(), F_GETFL) & ~O_NONBLOCK);
    int one = 1;
    ::setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    result = std::move(s);
  }
  ::freeaddrinfo(found);
  return result;
}

bool send_all(int fd, const void* data, size_t size, SocketDeadline deadline, std::string* error) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    if (!wait_for(fd, POLLOUT, deadline, error, nullptr)) return false;
    ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      *error = std::strerror(errno);
      return false;
    }
    p += n;
    size -= size_t(n);
  }
  return true;
}

bool recv_all(int fd, void* data, size_t size, SocketDeadline deadline, std::string* error, bool* timed_out) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    if (!wait_for(fd, POLLIN, deadline, error, timed_out)) return false;
    ssize_t n = ::recv(fd, p, size, MSG_DONTWAIT);
    if (n == 0) {
      *error = "the server closed the connection";
      return false;
    }
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      *error = std::strerror(errno);
      return false;
    }
    p += n;
    size -= size_t(n);
  }
  return true;
}

}  // namespace rt::dist::detail
