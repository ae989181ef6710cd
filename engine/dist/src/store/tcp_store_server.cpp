#include "store/tcp_store_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <list>
#include <map>
#include <thread>
#include <unordered_map>

#include "store/tcp_socket.h"
#include "store/tcp_store_protocol.h"

namespace rt::dist::detail {

namespace {

constexpr size_t kReadChunk = 64 << 10;
constexpr size_t kMaxConnections = 4096;

struct Connection {
  Socket socket;
  bool greeted = false;
  std::vector<uint8_t> in;
  size_t in_start = 0;
  std::string out;
  size_t out_sent = 0;
  bool parked = false;  // a Get/Wait/WaitJoined is waiting: see Note [Parked requests]
  bool closing = false;
};

// Note [Parked requests]
// A blocking request that cannot be answered yet is parked: the server remembers it with its deadline
// and answers it when a write makes it ready, or with Timeout when its deadline passes. Its connection
// sends nothing meanwhile (the client waits for the answer); bytes arriving then break the protocol and
// close the connection, so a client cannot queue unbounded work behind a parked request.
struct Parked {
  int fd;
  Request request;
  std::optional<Clock::time_point> deadline;
};

}  // namespace

struct TCPStoreServer::Loop {
  Socket listener;
  uint16_t port = 0;
  int wake[2] = {-1, -1};
  std::thread thread;
  std::map<std::string, Bytes> keys;
  int64_t joined = 0;
  std::unordered_map<int, Connection> connections;
  std::list<Parked> parked;

  void run();
  void accept_all();
  void read_from(Connection& c);
  void process(Connection& c);
  void handle(Connection& c, Request&& r);
  bool ready(const Request& r) const;
  void answer_ready(Connection& c, const Request& r);
  void wake_parked();
  void expire_parked();
  void flush(Connection& c);
  void close_connection(int fd);
  std::string where() const { return fmt::format("TCPStore server on port {}", port); }
};

TCPStoreServer::TCPStoreServer(uint16_t port) : loop_(std::make_unique<Loop>()) {
  std::string error;
  loop_->listener = listen_any(port, &loop_->port, &error);
  if (!loop_->listener.valid())
    throw DistNetworkError(fmt::format("the master cannot listen on port {}: {}. Hint: another job may use "
                                       "that port; pass another port, or 0 to pick a free one",
                                       port, error));
  if (::pipe2(loop_->wake, O_CLOEXEC | O_NONBLOCK) != 0)
    throw DistNetworkError(fmt::format("the master on port {} cannot create its wake-up pipe: {}", loop_->port,
                                       std::strerror(errno)));
  loop_->thread = std::thread([l = loop_.get()] { l->run(); });
}

TCPStoreServer::~TCPStoreServer() {
  char stop = 's';
  while (::write(loop_->wake[1], &stop, 1) < 0 && errno == EINTR) {
  }
  loop_->thread.join();
  ::close(loop_->wake[0]);
  ::close(loop_->wake[1]);
}

uint16_t TCPStoreServer::port() const { return loop_->port; }

void TCPStoreServer::Loop::run() {
  std::vector<pollfd> fds;
  for (;;) {
    fds.clear();
    fds.push_back({wake[0], POLLIN, 0});
    fds.push_back({listener.fd(), short(connections.size() < kMaxConnections ? POLLIN : 0), 0});
    for (auto& [fd, c] : connections)
      fds.push_back({fd, short(POLLIN | (c.out_sent < c.out.size() ? POLLOUT : 0)), 0});
    int wait_ms = -1;
    for (const auto& p : parked) {
      if (!p.deadline) continue;
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*p.deadline - Clock::now()).count() + 1;
      wait_ms = wait_ms < 0 ? int(std::max<int64_t>(left, 0)) : std::min(wait_ms, int(std::max<int64_t>(left, 0)));
    }
    int n = ::poll(fds.data(), fds.size(), wait_ms);
    if (n < 0 && errno != EINTR) break;
    if (n > 0) {
      if (fds[0].revents) break;  // the master's TCPStore is being destroyed
      if (fds[1].revents & POLLIN) accept_all();
      for (size_t i = 2; i < fds.size(); ++i) {
        auto it = connections.find(fds[i].fd);
        if (it == connections.end() || !fds[i].revents) continue;
        Connection& c = it->second;
        try {
          if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) read_from(c);
          if (!c.closing) process(c);
          if (!c.closing) flush(c);
        } catch (const std::exception&) {
          c.closing = true;  // out of memory for a huge frame: drop that client, keep serving the others
        }
        if (c.closing) close_connection(fds[i].fd);
      }
    }
    expire_parked();
  }
  parked.clear();
  connections.clear();
  listener.reset();
}

void TCPStoreServer::Loop::accept_all() {
  while (connections.size() < kMaxConnections) {
    int fd = ::accept4(listener.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or a connection that died before we took it
    connections[fd].socket = Socket(fd);
  }
}

void TCPStoreServer::Loop::read_from(Connection& c) {
  for (;;) {
    size_t old = c.in.size();
    c.in.resize(old + kReadChunk);
    ssize_t n = ::recv(c.socket.fd(), c.in.data() + old, kReadChunk, 0);
    c.in.resize(old + size_t(std::max<ssize_t>(n, 0)));
    if (n > 0) {
      if (c.parked) {  // See Note [Parked requests]
        c.closing = true;
        return;
      }
      if (size_t(n) < kReadChunk) return;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    c.closing = true;  // the peer closed, or the connection broke
    return;
  }
}

void TCPStoreServer::Loop::process(Connection& c) {
  const uint8_t* data = c.in.data() + c.in_start;
  size_t size = c.in.size() - c.in_start;
  if (!c.greeted) {
    ParseStatus s = parse_handshake(data, size, nullptr);
    if (s == ParseStatus::Refuse) c.closing = true;
    if (s != ParseStatus::Ok) return;
    c.greeted = true;
    c.in_start += kHandshakeBytes;
    c.out += encode_handshake();
  }
  while (!c.parked && !c.closing) {
    ParsedRequest p = parse_request(c.in.data() + c.in_start, c.in.size() - c.in_start);
    if (p.status == ParseStatus::Refuse) c.closing = true;
    if (p.status != ParseStatus::Ok) break;
    c.in_start += p.consumed;
    handle(c, std::move(p.request));
  }
  if (c.parked && c.in_start < c.in.size()) c.closing = true;  // See Note [Parked requests]
  if (c.in_start == c.in.size()) {
    c.in.clear();
    c.in_start = 0;
  } else if (c.in_start > (1u << 20)) {
    c.in.erase(c.in.begin(), c.in.begin() + std::ptrdiff_t(c.in_start));
    c.in_start = 0;
  }
}

bool TCPStoreServer::Loop::ready(const Request& r) const {
  if (r.op == Op::WaitJoined) return joined >= r.number;
  for (const auto& k : r.keys)
    if (!keys.count(k)) return false;
  return true;
}

void TCPStoreServer::Loop::answer_ready(Connection& c, const Request& r) {
  if (r.op == Op::Get) {
    const Bytes& v = keys.at(r.keys[0]);
    std::string payload;
    put_bytes(payload, v.data(), v.size());
    c.out += encode_response(Status::Ok, payload);
  } else {
    c.out += encode_response(Status::Ok);
  }
}

void TCPStoreServer::Loop::handle(Connection& c, Request&& r) {
  std::string payload;
  bool wrote = false;
  switch (r.op) {
    case Op::Set:
      keys[r.keys[0]] = std::move(r.value);
      wrote = true;
      break;
    case Op::Get:
    case Op::Wait:
    case Op::WaitJoined:
      if (ready(r)) {
        answer_ready(c, r);
        return;
      }
      c.parked = true;
      {
        std::optional<Clock::time_point> deadline;
        if (r.timeout_ms) deadline = Clock::now() + std::chrono::milliseconds(std::min<uint64_t>(r.timeout_ms, 1ull << 40));
        parked.push_back({c.socket.fd(), std::move(r), deadline});
      }
      return;
    case Op::Add: {
      const std::string& key = r.keys[0];
      try {
        auto it = keys.find(key);
        int64_t current = it == keys.end() ? 0 : parse_counter(where(), key, it->second);
        int64_t result = add_counter(where(), key, current, r.number);
        keys[key] = counter_bytes(result);
        put_u64(payload, uint64_t(result));
        wrote = true;
      } catch (const DistStoreError& e) {
        std::string msg = e.what();
        put_bytes(payload, msg.data(), msg.size());
        c.out += encode_response(Status::Error, payload);
        return;
      }
      break;
    }
    case Op::CompareSet: {
      auto it = keys.find(r.keys[0]);
      std::optional<Bytes> current;
      if (it != keys.end()) current = it->second;
      CompareSetOutcome o = compare_set_outcome(current, r.value, r.desired);
      if (o.store) {
        keys[r.keys[0]] = std::move(*o.store);
        wrote = true;
      }
      put_bytes(payload, o.result.data(), o.result.size());
      break;
    }
    case Op::Check: put_u8(payload, ready(r) ? 1 : 0); break;
    case Op::DeleteKey: put_u8(payload, keys.erase(r.keys[0]) ? 1 : 0); break;
    case Op::NumKeys: put_u64(payload, uint64_t(keys.size())); break;
    case Op::Join:
      put_u64(payload, uint64_t(++joined));
      wrote = true;
      break;
  }
  c.out += encode_response(Status::Ok, payload);
  if (wrote) wake_parked();
}

void TCPStoreServer::Loop::wake_parked() {
  for (auto it = parked.begin(); it != parked.end();) {
    if (!ready(it->request)) {
      ++it;
      continue;
    }
    auto c = connections.find(it->fd);
    if (c != connections.end()) {
      answer_ready(c->second, it->request);
      c->second.parked = false;
      flush(c->second);
    }
    it = parked.erase(it);
  }
}

void TCPStoreServer::Loop::expire_parked() {
  auto now = Clock::now();
  for (auto it = parked.begin(); it != parked.end();) {
    if (!it->deadline || *it->deadline > now) {
      ++it;
      continue;
    }
    auto c = connections.find(it->fd);
    if (c != connections.end()) {
      c->second.out += encode_response(Status::Timeout);
      c->second.parked = false;
      flush(c->second);
    }
    it = parked.erase(it);
  }
}

void TCPStoreServer::Loop::flush(Connection& c) {
  while (c.out_sent < c.out.size()) {
    ssize_t n = ::send(c.socket.fd(), c.out.data() + c.out_sent, c.out.size() - c.out_sent, MSG_NOSIGNAL);
    if (n > 0) {
      c.out_sent += size_t(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    c.closing = true;
    return;
  }
  c.out.clear();
  c.out_sent = 0;
}

void TCPStoreServer::Loop::close_connection(int fd) {
  parked.remove_if([fd](const Parked& p) { return p.fd == fd; });
  connections.erase(fd);
}

}  // namespace rt::dist::detail
