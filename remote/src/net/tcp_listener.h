// TCP for the agent and its clients, only when asked (rt/remote/tcp.h): "ADDR:PORT" endpoints, a listening
// socket that knows whether it is loopback-only, and a connect with a deadline.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

#include "net/unix_socket.h"

namespace rt::remote {

struct TcpEndpoint {
  std::string host;  // as given: a numeric address or (to connect) a host name; "" = 127.0.0.1
  uint16_t port = 0;
  std::string text() const;  // "HOST:PORT", IPv6 in brackets
};

// "PORT", "HOST:PORT" or "[IPV6]:PORT"; a missing host is 127.0.0.1 (loopback by default). Throws
// rt::ValueError naming `what` and the accepted forms.
TcpEndpoint parse_endpoint(const std::string& text, const std::string& what);

class TcpListener {
 public:
  // Binds a non-blocking listening socket on a numeric address ("localhost" is 127.0.0.1). Throws
  // rt::ValueError for an address that is not numeric, rt::Error naming the endpoint when bind fails.
  static TcpListener bind(const TcpEndpoint& endpoint);
  int fd() const { return fd_.get(); }
  int release_fd() { return fd_.release(); }  // a forked child closes the parent's listener with it
  bool loopback() const { return loopback_; }  // bound to 127.0.0.0/8 or ::1 only
  const TcpEndpoint& bound() const { return bound_; }  // with the port the kernel chose for port 0

 private:
  UniqueFd fd_;
  bool loopback_ = false;
  TcpEndpoint bound_;
};

// A blocking connected TCP socket (TCP_NODELAY) within `timeout`; throws rt::Error naming the endpoint.
UniqueFd connect_tcp(const TcpEndpoint& endpoint, std::chrono::milliseconds timeout);

}  // namespace rt::remote
