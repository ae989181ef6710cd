// tcp_store_server.h — the TCPStore server: one thread, poll(2) over non-blocking sockets, the keys in a
// map, and blocking requests (get, wait, wait_for_workers) parked until their keys appear or their
// deadline passes. Started by the master's TCPStore; destroying it stops the thread and closes every
// connection.
//
// Rules it enforces (see docs/distributed.md, "TCPStore wire protocol"): a connection first sends the
// handshake; then one request at a time, the next only after the previous one's response. Anything
// else (a wrong magic or version, a malformed or oversized frame, bytes sent while a request is parked)
// closes that connection and only that one.
#pragma once
#include <cstdint>
#include <memory>

namespace rt::dist::detail {

class TCPStoreServer {
 public:
  // Listens on every interface (IPv6 dual-stack, else IPv4); port 0 picks a free port. Throws
  // DistNetworkError naming the port when it cannot listen (TCPStore puts its host:port in front).
  explicit TCPStoreServer(uint16_t port);
  ~TCPStoreServer();
  TCPStoreServer(const TCPStoreServer&) = delete;
  TCPStoreServer& operator=(const TCPStoreServer&) = delete;
  uint16_t port() const;

 private:
  struct Loop;
  std::unique_ptr<Loop> loop_;
};

}  // namespace rt::dist::detail
