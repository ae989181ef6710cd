#include "net/tcp_listener.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "rt/error.h"

namespace rt::remote {

std::string TcpEndpoint::text() const {
  const std::string h = host.empty() ? "127.0.0.1" : host;
  return h.find(':') != std::string::npos ? fmt::format("[{}]:{}", h, port) : fmt::format("{}:{}", h, port);
}

TcpEndpoint parse_endpoint(const std::string& text, const std::string& what) {
  auto bad = [&](const std::string& why) {
    return rt::ValueError(fmt::format("{} '{}': {}; give PORT, ADDR:PORT or [IPV6]:PORT (e.g. 127.0.0.1:7070)", what,
                                      text, why));
  };
  TcpEndpoint e;
  std::string port;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') throw bad("unclosed [");
    e.host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else if (const auto colon = text.rfind(':'); colon != std::string::npos) {
    e.host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (e.host.find(':') != std::string::npos) throw bad("an IPv6 address goes in brackets");
  } else {
    port = text;
  }
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos)
    throw bad("the port is not a number");
  const long p = std::stol(port);
  if (p > 65535) throw bad("the port is over 65535");
  e.port = uint16_t(p);
  if (e.host == "localhost") e.host = "127.0.0.1";
  return e;
}

namespace {

bool is_loopback(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET)
    return (ntohl(reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr) >> 24) == 127;
  if (a.ss_family == AF_INET6) {
    const in6_addr& v6 = reinterpret_cast<const sockaddr_in6&>(a).sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

}  // namespace

TcpListener TcpListener::bind(const TcpEndpoint& endpoint) {
  const std::string host = endpoint.host.empty() ? "127.0.0.1" : endpoint.host;
  sockaddr_storage addr{};
  socklen_t length = 0;
  if (in_addr v4{}; ::inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    auto& a = reinterpret_cast<sockaddr_in&>(addr);
    a.sin_family = AF_INET;
    a.sin_addr = v4;
    a.sin_port = htons(endpoint.port);
    length = sizeof(sockaddr_in);
  } else if (in6_addr v6{}; ::inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    auto& a = reinterpret_cast<sockaddr_in6&>(addr);
    a.sin6_family = AF_INET6;
    a.sin6_addr = v6;
    a.sin6_port = htons(endpoint.port);
    length = sizeof(sockaddr_in6);
  } else {
    throw rt::ValueError(fmt::format("remote attach: listen address '{}' is not a numeric IPv4 or IPv6 address "
                                     "(e.g. 127.0.0.1, 0.0.0.0, ::1)", host));
  }
  TcpListener l;
  l.fd_.reset(::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!l.fd_) throw rt::Error(fmt::format("remote attach: socket(): {}", std::strerror(errno)));
  const int one = 1;
  ::setsockopt(l.fd_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(l.fd_.get(), reinterpret_cast<const sockaddr*>(&addr), length) != 0 || ::listen(l.fd_.get(), 16) != 0)
    throw rt::Error(fmt::format("remote attach: cannot listen on TCP {}: {}", endpoint.text(), std::strerror(errno)));
  sockaddr_storage bound{};
  socklen_t bound_length = sizeof(bound);
  ::getsockname(l.fd_.get(), reinterpret_cast<sockaddr*>(&bound), &bound_length);
  l.loopback_ = is_loopback(bound);
  l.bound_.host = host;
  l.bound_.port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6&>(bound).sin6_port
                                                    : reinterpret_cast<const sockaddr_in&>(bound).sin_port);
  return l;
}

UniqueFd connect_tcp(const TcpEndpoint& endpoint, std::chrono::milliseconds timeout) {
  const std::string host = endpoint.host.empty() ? "127.0.0.1" : endpoint.host;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(endpoint.port);
  if (const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0)
    throw rt::Error(fmt::format("remote attach: cannot resolve '{}': {}", host, ::gai_strerror(rc)));
  std::string last_error = "no address";
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (addrinfo* ai = found; ai; ai = ai->ai_next) {
    UniqueFd fd(::socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) continue;
    int rc = ::connect(fd.get(), ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd p{fd.get(), POLLOUT, 0};
      if (::poll(&p, 1, int(std::max<int64_t>(0, left.count()))) == 1) {
        int err = 0;
        socklen_t len = sizeof(err);
        ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
        rc = err == 0 ? 0 : -1;
        errno = err;
      } else {
        errno = ETIMEDOUT;
      }
    }
    if (rc == 0) {
      ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
      const int one = 1;
      ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      ::freeaddrinfo(found);
      return fd;
    }
    last_error = std::strerror(errno);
  }
  ::freeaddrinfo(found);
  throw rt::Error(fmt::format("remote attach: cannot connect to TCP {}: {}", endpoint.text(), last_error));
}

}  // namespace rt::remote
