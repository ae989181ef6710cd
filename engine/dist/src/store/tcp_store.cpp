// TCPStore, the client every rank holds (the master's also owns the server). Each request borrows an
// idle connection (or opens one), so a thread blocked in wait never holds up another thread's set.
// See Note [Client deadlines] for how timeouts keep each connection's stream in step.
#include <fmt/core.h>

#include <mutex>
#include <thread>

#include "rt/dist/store.h"
#include "rt/error.h"
#include "store/tcp_socket.h"
#include "store/tcp_store_protocol.h"
#include "store/tcp_store_server.h"

namespace rt::dist {

using namespace detail;

// Note [Client deadlines]
// Blocking requests (get, wait, waiting for workers) carry their timeout to the server, which answers
// Timeout when it passes, so a timed-out wait leaves the connection usable. The client itself waits a
// grace period longer; when even that passes (a stalled server, a broken network) it closes the
// connection, reports the timeout, and reconnects on the next call. Other requests wait at most the
// store's timeout for their answer.
namespace {
constexpr Milliseconds kGrace{2000};
}

struct TCPStore::State {
  std::string host;
  TCPStoreOptions options;
  uint16_t port = 0;
  std::unique_ptr<TCPStoreServer> server;
  std::vector<Socket> idle;  // connections between requests
  std::mutex mutex;          // guards `idle`

  std::string where() const {
    bool v6 = host.find(':') != std::string::npos;
    return v6 ? fmt::format("TCPStore at [{}]:{}", host, port) : fmt::format("TCPStore at {}:{}", host, port);
  }

  Socket connect(Milliseconds timeout) const {
    Socket socket;
    auto deadline = deadline_after(where(), timeout);
    auto pause = Milliseconds(10);
    int attempts = 0;
    std::string error;
    for (;;) {
      ++attempts;
      socket = connect_once(host, port, deadline, &error);
      if (socket.valid()) break;
      auto now = Clock::now();
      if (deadline && now >= *deadline)
        throw DistNetworkError(fmt::format(
            "{}: could not connect within {} ({} attempts; last error: {}). Hint: start the master (rank 0 or the "
            "launcher) and check that {}:{} is reachable from this host, or raise the timeout",
            where(), format_timeout(timeout), attempts, error, host, port));
      std::this_thread::sleep_for(deadline ? std::min<Clock::duration>(pause, *deadline - now) : Clock::duration(pause));
      pause = std::min(pause * 2, Milliseconds(1000));
    }
    std::string hello = encode_handshake();
    uint8_t reply[kHandshakeBytes];
    bool timed_out = false;
    if (!send_all(socket.fd(), hello.data(), hello.size(), deadline, &error) ||
        !recv_all(socket.fd(), reply, sizeof(reply), deadline, &error, &timed_out)) {
      socket.reset();
      throw DistNetworkError(fmt::format("{}: the handshake failed: {} (timeout {}). Hint: is {}:{} a TCPStore "
                                         "master of this version?",
                                         where(), error, format_timeout(timeout), host, port));
    }
    if (parse_handshake(reply, sizeof(reply), &error) != ParseStatus::Ok) {
      socket.reset();
      throw DistNetworkError(fmt::format("{}: the peer answered the handshake with {}. Hint: the port belongs to "
                                         "another program or another TCPStore version",
                                         where(), error));
    }
    return socket;
  }

  Socket borrow() {
    {
      std::lock_guard lock(mutex);
      if (!idle.empty()) {
        Socket s = std::move(idle.back());
        idle.pop_back();
        return s;
      }
    }
    return connect(options.timeout);
  }
  void give_back(Socket s) {
    std::lock_guard lock(mutex);
    idle.push_back(std::move(s));
  }

  // Sends one request and returns the response's payload once `valid(payload)` accepts it.
  // `blocking_timeout` is set for get/wait/wait_for_workers: see Note [Client deadlines].
  template <class Valid>
  std::string call(const Request& r, const std::vector<std::string>& keys, std::optional<Milliseconds> blocking_timeout,
                   Milliseconds store_timeout, Valid&& valid) {
    Socket socket = borrow();
    Milliseconds wait = blocking_timeout ? *blocking_timeout : store_timeout;
    SocketDeadline deadline;
    if (wait.count() > 0) deadline = Clock::now() + wait + (blocking_timeout ? kGrace : Milliseconds(0));
    std::string frame = encode_request(r);
    std::string error;
    bool timed_out = false;
    uint8_t header[kFrameHeaderBytes];
    std::string body;
    bool ok = send_all(socket.fd(), frame.data(), frame.size(), deadline, &error) &&
              recv_all(socket.fd(), header, sizeof(header), deadline, &error, &timed_out);
    if (ok) {
      uint64_t len = get_le(header, 4);
      if (len == 0 || len > kMaxResponseBody) {
        error = fmt::format("a response frame of {} bytes", len);
        ok = false;
      } else {
        body.resize(size_t(len));
        ok = recv_all(socket.fd(), body.data(), body.size(), deadline, &error, &timed_out);
      }
    }
    if (!ok) {
      socket.reset();  // the stream is out of step: see Note [Client deadlines]
      if (timed_out && blocking_timeout) throw_wait_timeout(where(), keys, *blocking_timeout);
      throw DistNetworkError(fmt::format("{}: {} of {} failed: {} (timeout {}). Hint: the master may have exited or "
                                         "refused the request; check rank 0's log",
                                         where(), op_name(r.op), keys.empty() ? std::string("the store") : format_keys(keys),
                                         error, format_timeout(wait)));
    }
    auto status = Status(uint8_t(body[0]));
    bool well_formed = status == Status::Ok ? valid(std::string_view(body).substr(1))
                                            : status == Status::Timeout ? body.size() == 1
                                            : status == Status::Error && body.size() >= 5 &&
                                                  get_le(reinterpret_cast<const uint8_t*>(body.data()) + 1, 4) == body.size() - 5;
    if (!well_formed) {
      socket.reset();
      throw DistNetworkError(fmt::format("{}: {} got a malformed response (status {}, {} bytes). Hint: the port belongs "
                                         "to another program or another TCPStore version",
                                         where(), op_name(r.op), int(uint8_t(body[0])), body.size()));
    }
    give_back(std::move(socket));
    if (status == Status::Timeout && blocking_timeout) {
      if (r.op == Op::WaitJoined)
        throw DistStoreError(fmt::format("{}: timed out after {} waiting for {} ranks (world_size) to create their "
                                         "TCPStore. Hint: start every rank, check world_size, or raise the timeout",
                                         where(), format_timeout(*blocking_timeout), r.number));
      throw_wait_timeout(where(), keys, *blocking_timeout);
    }
    if (status == Status::Error)
      throw DistStoreError(fmt::format("{}: {} refused by the server: {}", where(), op_name(r.op), body.substr(5)));
    return body.substr(1);
  }

  // The response payloads: a value (u32 length + bytes), a number of `bytes` bytes, or nothing.
  Bytes call_value(const Request& r, std::optional<Milliseconds> blocking, Milliseconds t) {
    std::string p = call(r, r.keys, blocking, t, [](std::string_view p) {
      return p.size() >= 4 && get_le(reinterpret_cast<const uint8_t*>(p.data()), 4) == p.size() - 4;
    });
    return Bytes(p.begin() + 4, p.end());
  }
  uint64_t call_number(const Request& r, size_t bytes, Milliseconds t) {
    std::string p = call(r, r.keys, std::nullopt, t, [bytes](std::string_view p) { return p.size() == bytes; });
    return get_le(reinterpret_cast<const uint8_t*>(p.data()), int(bytes));
  }
  void call_empty(const Request& r, std::optional<Milliseconds> blocking, Milliseconds t) {
    call(r, r.keys, blocking, t, [](std::string_view p) { return p.empty(); });
  }
};

TCPStore::TCPStore(std::string host, uint16_t port, int world_size, bool is_master, Milliseconds timeout)
    : TCPStore(std::move(host), TCPStoreOptions{port, is_master, world_size, true, timeout}) {}

TCPStore::TCPStore(std::string host, const TCPStoreOptions& options) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.host = std::move(host);
  s.options = options;
  s.port = options.port;
  timeout_ = options.timeout;
  if (s.host.empty()) throw ValueError("TCPStore: the host name is empty. Hint: pass the master's address");
  if (options.port == 0 && !options.is_master)
    throw ValueError(fmt::format("TCPStore at {}:0: only the master may ask for port 0 (a free port). Hint: pass "
                                 "the port the master reports (TCPStore::port())",
                                 s.host));
  deadline_after(s.where(), options.timeout);  // refuses a negative timeout
  if (options.is_master) {
    try {
      s.server = std::make_unique<TCPStoreServer>(options.port);
    } catch (const DistNetworkError& e) {
      throw DistNetworkError(s.where() + ": " + e.what());
    }
    s.port = s.server->port();
  }
  s.idle.push_back(s.connect(options.timeout));
  // Every TCPStore counts itself in; the master waits for world_size of them (PyTorch's wait_for_workers).
  Request join;
  join.op = Op::Join;
  s.call_number(join, 8, options.timeout);
  if (options.is_master && options.wait_for_workers && options.world_size > 0) {
    Request all;
    all.op = Op::WaitJoined;
    all.number = options.world_size;
    all.timeout_ms = uint64_t(options.timeout.count());
    s.call_empty(all, options.timeout, options.timeout);
  }
}

TCPStore::~TCPStore() {
  state_->idle.clear();
  state_->server.reset();
}

namespace {
Request single(Op op, const std::string& key) {
  Request r;
  r.op = op;
  r.keys = {key};
  return r;
}
}  // namespace

void TCPStore::set(const std::string& key, const Bytes& value) {
  check_key(describe(), "set", key);
  check_value(describe(), "set", key, value);
  Request r = single(Op::Set, key);
  r.value = value;
  state_->call_empty(r, std::nullopt, timeout());
}

Bytes TCPStore::get(const std::string& key) {
  check_key(describe(), "get", key);
  deadline_after(describe(), timeout());
  Request r = single(Op::Get, key);
  r.timeout_ms = uint64_t(timeout().count());
  return state_->call_value(r, timeout(), timeout());
}

int64_t TCPStore::add(const std::string& key, int64_t delta) {
  check_key(describe(), "add", key);
  Request r = single(Op::Add, key);
  r.number = delta;
  return int64_t(state_->call_number(r, 8, timeout()));
}

Bytes TCPStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  check_key(describe(), "compare_set", key);
  check_value(describe(), "compare_set", key, expected);
  check_value(describe(), "compare_set", key, desired);
  Request r = single(Op::CompareSet, key);
  r.value = expected;
  r.desired = desired;
  return state_->call_value(r, std::nullopt, timeout());
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  check_keys(describe(), "check", keys);
  if (keys.empty()) return true;
  Request r;
  r.op = Op::Check;
  r.keys = keys;
  return state_->call_number(r, 1, timeout()) != 0;
}

void TCPStore::wait(const std::vector<std::string>& keys, Milliseconds timeout) {
  check_keys(describe(), "wait", keys);
  deadline_after(describe(), timeout);
  if (keys.empty()) return;
  Request r;
  r.op = Op::Wait;
  r.keys = keys;
  r.timeout_ms = uint64_t(timeout.count());
  state_->call_empty(r, timeout, this->timeout());
}

bool TCPStore::delete_key(const std::string& key) {
  check_key(describe(), "delete_key", key);
  return state_->call_number(single(Op::DeleteKey, key), 1, timeout()) != 0;
}

int64_t TCPStore::num_keys() {
  Request r;
  r.op = Op::NumKeys;
  return int64_t(state_->call_number(r, 8, timeout()));
}

std::string TCPStore::describe() const { return state_->where(); }
const std::string& TCPStore::host() const { return state_->host; }
uint16_t TCPStore::port() const { return state_->port; }

}  // namespace rt::dist
