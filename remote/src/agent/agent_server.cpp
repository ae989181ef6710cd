#include "agent/agent_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agent/batch_queue.h"
#include "rt/op_observer.h"
#include "rt/prof/session_registry.h"
#include "rt/remote/event_batch.h"
#include "rt/remote/frame.h"
#include "rt/thread_name.h"

namespace rt::remote {
namespace prof = rt::prof;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {
constexpr size_t kWriteAhead = 1u << 20;   // encoded bytes kept ready per client beyond what the socket took
constexpr size_t kReadChunk = 64u << 10;
constexpr auto kHeartbeat = std::chrono::seconds(1);
constexpr size_t kKeptSessions = 4;  // finished sessions the registry keeps while someone subscribes
constexpr uint64_t kRotateRecords = 2'000'000;  // Note [Bounded agent sessions] in agent_server.h
constexpr auto kTcpHandshakeTimeout = std::chrono::seconds(5);  // a TCP peer that says nothing is let go
}  // namespace

struct AgentServer::Connection {
  Connection(UniqueFd f, size_t capacity) : fd(std::move(f)), queue(capacity) {}
  UniqueFd fd;
  FrameReader reader;
  std::string out;           // encoded frames not yet sent
  bool greeted = false;      // Hello received and answered
  bool subscribed = false;
  bool closing = false;      // close once `out` is sent (after an Error frame)
  bool controls = false;     // sent a pause: while no such client remains, the process is never left paused
  std::string client;        // what Hello said it is
  // What this connection may do (rt/remote/tcp.h): the Unix socket's own user controls; a TCP client observes
  // or has its token's scope. Requests that change the run ask may_control().
  AccessScope scope = AccessScope::Control;
  bool may_control() const { return scope == AccessScope::Control; }
  std::unique_ptr<TokenGate> gate;  // TCP with tokens: the handshake until the Proof is checked
  bool tcp = false;
  Clock::time_point accepted = Clock::now();
  prof::SnapshotCursor cursor;
  uint64_t cursor_session = 0;  // the session `cursor` reads; another one is read from its start
  BatchQueue queue;
  Clock::time_point last_batch{};
};

AgentServer::AgentServer(AgentOptions options, AgentManifest manifest, UniqueFd listener,
                         std::filesystem::path manifest_path, std::optional<TcpAccess> tcp)
    : options_(std::move(options)), manifest_(std::move(manifest)), manifest_path_(std::move(manifest_path)),
      listener_(std::move(listener)), tcp_(std::move(tcp)) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
    throw rt::Error(fmt::format("remote attach: pipe(): {}", std::strerror(errno)));
  wake_read_.reset(p[0]);
  wake_write_.reset(p[1]);
  thread_ = std::thread([this] { run(); });
}

AgentServer::~AgentServer() { stop(std::chrono::milliseconds(0)); }

void AgentServer::stop(std::chrono::milliseconds flush_timeout) {
  if (!thread_.joinable()) return;
  flush_timeout_ = flush_timeout;
  stopping_.store(true);
  const char b = 1;
  [[maybe_unused]] auto n = ::write(wake_write_.get(), &b, 1);
  thread_.join();
  std::error_code ec;
  std::filesystem::remove(manifest_.socket, ec);
  std::filesystem::remove(manifest_path_, ec);
  if (tcp_ && !tcp_->connection_file.empty()) std::filesystem::remove(tcp_->connection_file, ec);
}

void AgentServer::abandon_after_fork() {
  // The thread and the session's flush thread exist only in the parent: never join, detach or stop them
  // (the caller leaks this object).
  for (auto& c : clients_) ::close(c->fd.release());
  clients_.clear();
  ::close(listener_.release());
  if (tcp_) ::close(tcp_->listener.release_fd());
  ::close(wake_read_.release());
  ::close(wake_write_.release());
  (void)owned_session_.release();
}

void AgentServer::run() {
  rt::set_this_thread_name("rt remote agent");
  auto next_read = Clock::now();
  while (!stopping_.load()) {
    std::vector<pollfd> fds;
    fds.push_back({listener_.get(), POLLIN, 0});
    fds.push_back({wake_read_.get(), POLLIN, 0});
    if (tcp_) fds.push_back({tcp_->listener.fd(), POLLIN, 0});
    const size_t first_client = fds.size();
    for (auto& c : clients_) {
      const bool has_output = !c->out.empty() || !c->queue.empty();
      fds.push_back({c->fd.get(), short(POLLIN | (has_output ? POLLOUT : 0)), 0});
    }
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_read - Clock::now());
    ::poll(fds.data(), fds.size(), int(std::max<int64_t>(0, wait.count())));
    if (stopping_.load()) break;
    const size_t polled_clients = clients_.size();
    if (fds[1].revents & POLLIN) {  // a wake-up (stop, a program's profile starting): empty the pipe
      char drain[64];
      while (::read(wake_read_.get(), drain, sizeof drain) > 0) {
      }
    }
    if (fds[0].revents & POLLIN) accept_clients(listener_.get(), false);
    if (tcp_ && (fds[2].revents & POLLIN)) accept_clients(tcp_->listener.fd(), true);
    for (size_t i = 0; i < polled_clients; ++i) {
      Connection& c = *clients_[i];
      const short revents = fds[first_client + i].revents;
      bool alive = true;
      if (revents & (POLLIN | POLLHUP | POLLERR)) alive = read_from(c);
      if (alive && (revents & POLLOUT)) alive = write_to(c);
      if (!alive) c.fd.reset();
    }
    if (yield_requested_.exchange(false) && owned_session_) {
      stop_own_session();  // a program starts its own profile: it records, subscribers follow it
      own_session_allowed_at_ = Clock::now() + std::chrono::seconds(1);
    }
    if (Clock::now() >= next_read) {
      read_sessions(false);
      // Note [Bounded agent sessions]: the agent's own session keeps what it recorded in memory; past
      // kRotateRecords it completes and the next one begins, so memory stays bounded however long a client stays.
      if (owned_session_ && owned_session_->recording()) {
        const prof::RecordCounts n = owned_session_->counts();
        if (n.ops + n.gpu + n.collectives + n.memory + n.counters + n.gradient_histograms > kRotateRecords) stop_own_session();
      }
      follow_session();
      next_read = Clock::now() + options_.batch_interval;
    }
    for (auto& c : clients_)
      if (c->fd && (!c->out.empty() || !c->queue.empty()) && !write_to(*c)) c->fd.reset();
    drop_silent_tcp_peers();
    std::erase_if(clients_, [](const auto& c) { return !c->fd; });
    release_session_if_unused();
    if (debug_.active() && std::none_of(clients_.begin(), clients_.end(), [](const auto& c) { return c->controls; }))
      debug_.release();  // the client that paused is gone: never leave training paused
    if (const std::string notice = debug_.tick(); !notice.empty())
      for (auto& c : clients_)
        if (c->greeted && !c->closing) c->queue.push_notice(notice);
  }
  flush_and_close(flush_timeout_);
}

void AgentServer::accept_clients(int listener, bool tcp) {
  for (;;) {
    UniqueFd fd(::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!fd) return;
    auto c = std::make_unique<Connection>(std::move(fd), options_.buffer_bytes);
    if (tcp) {  // no peer uid on TCP: a token says who may do what, else (loopback only) observe
      c->tcp = true;
      c->scope = AccessScope::Observe;
      if (tcp_->tokens) c->gate = std::make_unique<TokenGate>(*tcp_->tokens);
      clients_.push_back(std::move(c));
      continue;
    }
    const long uid = peer_uid(c->fd.get());
    if (uid != long(::geteuid())) {
      c->out = encode_frame(FrameType::Error,
                            json{{"error", fmt::format("refused: this agent serves only its own user (uid {}), "
                                                       "not uid {}", ::geteuid(), uid)}}.dump());
      c->closing = true;
    }
    clients_.push_back(std::move(c));
  }
}

void AgentServer::drop_silent_tcp_peers() {
  const auto now = Clock::now();
  for (auto& c : clients_)
    if (c->tcp && !c->greeted && !c->closing && c->fd && now - c->accepted > kTcpHandshakeTimeout) {
      c->out += encode_frame(FrameType::Error, json{{"error", "refused: no handshake within 5 s"}}.dump());
      c->closing = true;
      if (!write_to(*c)) c->fd.reset();
    }
}

bool AgentServer::read_from(Connection& c) {
  char buf[kReadChunk];
  for (;;) {
    const ssize_t n = ::recv(c.fd.get(), buf, sizeof(buf), 0);
    if (n == 0) return false;
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    if (c.closing) continue;  // an Error was sent: ignore whatever else arrives
    c.reader.feed(buf, size_t(n));
    try {
      while (auto f = c.reader.next()) handle(c, *f);
    } catch (const std::exception& e) {
      c.out += encode_frame(FrameType::Error, json{{"error", e.what()}}.dump());
      c.closing = true;
      if (c.subscribed) unsubscribe(c);
    }
  }
}

void AgentServer::greet(Connection& c, const Frame& f) {
  std::string agent_proof;
  if (c.gate && f.type == FrameType::Proof) {  // the second step of a token handshake (token_auth.h)
    TokenGate::Verdict v = c.gate->verify(f.payload);
    c.scope = v.scope;
    agent_proof = std::move(v.agent_proof_hex);
    c.gate.reset();
  } else {
    if (c.gate && !c.client.empty())
      throw ProtocolError(fmt::format("remote protocol: Proof expected after a Challenge, not {}",
                                      frame_type_name(uint8_t(f.type))));
    if (f.type != FrameType::Hello)
      throw ProtocolError(fmt::format("remote protocol: the first frame must be Hello, not {}",
                                      frame_type_name(uint8_t(f.type))));
    const json hello = json::parse(f.payload, nullptr, false);
    if (hello.is_discarded() || !hello.is_object())
      throw ProtocolError("remote protocol: Hello is not a JSON object");
    const int version = hello.value("protocol", -1);
    if (version != kProtocolVersion)
      throw ProtocolError(fmt::format("remote protocol version mismatch: the client speaks version {}, this agent "
                                      "speaks version {}", version, kProtocolVersion));
    c.client = hello.value("client", std::string("unknown client"));
    if (c.gate) {
      c.out += encode_frame(FrameType::Challenge, c.gate->challenge(hello));
      return;
    }
  }
  json welcome = json::parse(manifest_json(manifest_));
  welcome["methods"] = {"status", "clock", "subscribe", "unsubscribe", "pause", "step", "step_over", "continue",
                        "paused_state", "read_tensor", "debug_status"};
  welcome["buffer_bytes"] = options_.buffer_bytes;
  welcome["scope"] = scope_name(c.scope);
  if (!agent_proof.empty()) welcome["proof"] = agent_proof;
  c.out += encode_frame(FrameType::Welcome, welcome.dump());
  c.greeted = true;
}

void AgentServer::handle(Connection& c, const Frame& f) {
  if (!c.greeted) return greet(c, f);
  if (f.type != FrameType::Request)
    throw ProtocolError(fmt::format("remote protocol: an agent accepts Request frames after Hello, not {}",
                                    frame_type_name(uint8_t(f.type))));
  const json request = json::parse(f.payload, nullptr, false);
  if (request.is_discarded() || !request.is_object() || !request.contains("id") || !request["id"].is_number_integer() ||
      !request.contains("method") || !request["method"].is_string())
    throw ProtocolError("remote protocol: a Request must be a JSON object with an integer \"id\" and a string \"method\"");
  json reply = {{"id", request["id"]}};
  try {
    reply["result"] = json::parse(answer(c, request["method"].get<std::string>(), request.value("params", json())));
  } catch (const ProtocolError&) {
    throw;
  } catch (const std::exception& e) {
    reply["error"] = e.what();
  }
  c.out += encode_frame(FrameType::Reply, reply.dump());
}

std::string AgentServer::answer(Connection& c, const std::string& method, const json& params) {
  if (method == "status") {
    json s = {{"pid", manifest_.pid},     {"job", manifest_.job},      {"rank", manifest_.rank},
              {"clients", clients_.size()}, {"session", session_id_},   {"subscribed", c.subscribed},
              {"dropped", c.queue.dropped()}, {"scope", scope_name(c.scope)}};
    if (session_id_ != 0)
      for (const auto& r : prof::SessionRegistry::instance().list())
        if (r.id == session_id_) {
          s["session_name"] = r.name;
          s["recording"] = r.recording;
          s["steps"] = r.counts.steps;
          s["ops"] = r.counts.ops;
        }
    return s.dump();
  }
  if (method == "clock") {  // Note [Rank clocks] in rt/prof/rank_merge.h: clients estimate this rank's clock offset
    const int64_t epoch =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    return json{{"steady_ns", rt::now_ns()}, {"epoch_ns", epoch}}.dump();
  }
  if (method == "subscribe") {
    subscribe(c);
    return json{{"session", session_id_}, {"agent_records", owned_session_ != nullptr}}.dump();
  }
  if (DebugControl::handles(method)) {
    if (method != "debug_status" && !c.may_control())  // pausing and reading gradients change or expose the run
      throw rt::ValueError(fmt::format("refused: '{}' needs control and this connection may only observe (scope "
                                       "{}): attach with the control token, over SSH or on this machine",
                                       method, scope_name(c.scope)));
    if (method == "pause") c.controls = true;
    return debug_.handle(method, params);
  }
  if (method == "unsubscribe") {
    unsubscribe(c);
    return "{}";
  }
  throw rt::ValueError(fmt::format("unknown method '{}': this agent answers status, clock, subscribe, unsubscribe, pause, "
                                   "step, step_over, continue, paused_state, read_tensor and debug_status (it observes and "
                                   "pauses; it never runs code sent to it)", method));
}


void AgentServer::subscribe(Connection& c) {
  if (c.subscribed) return;
  // A program's profile object may be destroyed right after it stops (a script that ends): the registry keeps
  // its final data so subscribers still receive all of it.
  auto& registry = prof::SessionRegistry::instance();
  if (registry.kept_finished_limit() < kKeptSessions) registry.keep_finished(kKeptSessions);
  c.subscribed = true;
  c.cursor = {};
  c.cursor_session = 0;
  agent_may_record_ = true;
  follow_session();
}

void AgentServer::unsubscribe(Connection& c) { c.subscribed = false; }

bool AgentServer::has_subscribers() const {
  return std::any_of(clients_.begin(), clients_.end(), [](const auto& c) { return c->subscribed && c->fd; });
}

// See Note [What subscribers follow] in agent_server.h.
void AgentServer::follow_session() {
  if (session_id_ != 0 || !has_subscribers()) return;
  auto& registry = prof::SessionRegistry::instance();
  // The oldest session started since the last one followed, recording or already stopped (a short profile
  // may end between two ticks): subscribers get it whole.
  const auto sessions = registry.list();
  if (!followed_any_) {  // the first subscriber: from the session recording now, not the history before it
    followed_any_ = true;
    for (const auto& r : sessions) last_followed_id_ = std::max(last_followed_id_, r.recording ? r.id - 1 : r.id);
  }
  uint64_t next = 0;
  for (const auto& r : sessions)
    if (r.id > last_followed_id_ && (next == 0 || r.id < next)) next = r.id;
  if (next != 0) {
    session_id_ = last_followed_id_ = next;
    agent_may_record_ = false;  // the program profiles: once it is done the agent does not start over
    return;
  }
  if (!agent_may_record_) return;
  if (Clock::now() < own_session_allowed_at_) return;  // a program's session is about to start
  prof::SessionOptions o;
  o.record_shapes = true;
  o.profile_memory = true;
  o.with_stack = true;
  o.name = fmt::format("{} rank {}", manifest_.job, manifest_.rank);
  o.metadata = {{"job_id", manifest_.job}, {"rank", std::to_string(manifest_.rank)}, {"attached", "agent"}};
  o.sort_at_stop = false;  // stopping is quick and the subscribers' cursors stay valid (rotation, yield)
  o.on_yield = [this] {  // under the profiler's lock: only signal (Note [Sessions that give way])
    yield_requested_.store(true);
    const char b = 1;
    [[maybe_unused]] auto n = ::write(wake_write_.get(), &b, 1);
  };
  auto session = std::make_unique<prof::Session>(std::move(o));
  try {
    session->start();
  } catch (const std::exception&) {
    return;  // another session started meanwhile: the next tick follows it
  }
  for (const auto& r : registry.list())
    if (r.recording) {
      session_id_ = last_followed_id_ = r.id;
      break;
    }
  owned_session_ = std::move(session);
}

void AgentServer::release_session_if_unused() {
  if (session_id_ == 0 || has_subscribers()) return;
  if (owned_session_) {
    if (owned_session_->recording()) owned_session_->stop();
    owned_session_.reset();
  }
  session_id_ = 0;
}

void AgentServer::stop_own_session() {
  if (!owned_session_) return;
  try {
    if (owned_session_->recording()) owned_session_->stop();
  } catch (const std::exception&) {
  }
  // The read after stop() is the last increment (sort_at_stop = false), complete: read_sessions queues it with a
  // "session_complete" notice and lets the session go.
  read_sessions(true);
  owned_session_.reset();
  session_id_ = 0;
}

void AgentServer::read_sessions(bool final_read) {
  if (session_id_ == 0) return;
  auto& registry = prof::SessionRegistry::instance();
  const auto now = Clock::now();
  bool ended = false;
  for (auto& c : clients_) {
    if (!c->subscribed || !c->fd) continue;
    if (c->cursor_session != session_id_) {  // a new session: this client reads it from its start
      c->cursor = {};
      c->cursor_session = session_id_;
    }
    std::optional<prof::SessionDelta> delta;
    try {
      delta = registry.read_since(session_id_, c->cursor);
    } catch (const std::exception&) {
      delta.reset();
    }
    if (!delta) {  // the session left the registry
      c->queue.push_notice(json{{"event", "session_ended"}, {"session", session_id_}}.dump());
      ended = true;
      continue;
    }
    c->cursor = delta->cursor;
    const auto& d = delta->records;
    const bool complete = d.complete;
    const bool news = delta->reset || record_count(d) > 0 || !delta->new_strings.empty() || !d.steps.empty() ||
                      delta->graphs_changed || complete;
    if (news || final_read || now - c->last_batch >= kHeartbeat) {
      c->queue.push(std::move(*delta));
      c->last_batch = now;
    }
    if (complete) {  // everything is queued: the client hears so after the last batch
      c->queue.push_notice(json{{"event", "session_complete"}, {"session", session_id_}}.dump());
      ended = true;
    }
  }
  if (ended) {  // subscribers follow the next session (Note [What subscribers follow])
    for (auto& c : clients_) c->cursor_session = 0;
    session_id_ = 0;
    if (owned_session_ && !owned_session_->recording()) owned_session_.reset();
  }
}

bool AgentServer::write_to(Connection& c) {
  while (c.out.size() < kWriteAhead) {
    auto item = c.queue.pop();
    if (!item) break;
    if (item->batch) {
      try {
        c.out += encode_frame(FrameType::EventBatch, encode_event_batch(*item->batch), true);
      } catch (const ProtocolError& e) {  // over the frame limits: the client hears what it misses
        c.out += encode_frame(FrameType::Notice, json{{"event", "batch_dropped"}, {"reason", e.what()},
                                                      {"records", record_count(item->batch->delta.records)}}.dump());
      }
    } else {
      c.out += encode_frame(FrameType::Notice, item->notice);
    }
  }
  while (!c.out.empty()) {
    const ssize_t n = ::send(c.fd.get(), c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      c.out.erase(0, size_t(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
    return false;
  }
  return !c.closing;
}


void AgentServer::flush_and_close(std::chrono::milliseconds timeout) {
  if (owned_session_)
    stop_own_session();
  else
    read_sessions(true);
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    std::vector<pollfd> fds;
    for (auto& c : clients_)
      if (c->fd && (!c->out.empty() || !c->queue.empty())) fds.push_back({c->fd.get(), POLLOUT, 0});
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (fds.empty() || left.count() <= 0) break;
    ::poll(fds.data(), fds.size(), int(std::min<int64_t>(left.count(), 100)));
    for (auto& c : clients_)
      if (c->fd && !write_to(*c)) c->fd.reset();
  }
  clients_.clear();
  owned_session_.reset();
  session_id_ = 0;
}

}  // namespace rt::remote
