#include "rt/remote/client.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agent/token_auth.h"
#include "net/child_process.h"
#include "net/tcp_listener.h"
#include "net/unix_socket.h"
#include "rt/op_observer.h"
#include "rt/prof/session_delta.h"
#include "rt/remote/event_batch.h"
#include "rt/remote/frame.h"

namespace rt::remote {
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {
constexpr size_t kStderrTail = 8u << 10;  // what a relay command's stderr leaves for the error message
}  // namespace

struct AgentClient::Impl {
  UniqueFd fd;
  FrameReader reader;
  AgentManifest agent;
  AccessScope scope = AccessScope::Control;
  rt::prof::SessionData session;
  uint64_t resets = 0, batches = 0, dropped = 0;
  int64_t next_id = 1;
  std::vector<std::string> notices;
  std::vector<json> replies;
  std::string error;
  std::string peer;  // for messages: the socket path, "TCP HOST:PORT" or the command
  // connect_command(): the program and its stderr.
  std::optional<ChildProcess> child;
  UniqueFd child_stderr;
  std::string stderr_tail;

  ~Impl() {
    fd.reset();     // the program's stdin ends: a relay exits by itself
    child.reset();  // reaped (ChildProcess: grace, SIGTERM, SIGKILL)
  }

  void read_stderr() {
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(child_stderr.get(), buf, sizeof(buf));
      if (n > 0) {
        stderr_tail.append(buf, size_t(n));
        if (stderr_tail.size() > kStderrTail) stderr_tail.erase(0, stderr_tail.size() - kStderrTail);
        continue;
      }
      if (n == 0 || (errno != EINTR && errno != EAGAIN)) child_stderr.reset();
      return;
    }
  }

  // The connection ended: a program that served it says why on stderr and in its exit status.
  void connection_ended() {
    if (!child) return;
    const auto deadline = Clock::now() + std::chrono::seconds(2);
    while (child_stderr && Clock::now() < deadline) {
      pollfd p{child_stderr.get(), POLLIN, 0};
      if (::poll(&p, 1, 100) > 0) read_stderr();
    }
    const std::optional<int> status = child->wait_for(std::chrono::milliseconds(500));
    std::string said = stderr_tail;
    while (!said.empty() && std::isspace(static_cast<unsigned char>(said.back()))) said.pop_back();
    const bool failed = status && *status != 0;
    if (said.empty() && !failed) return;  // a clean end
    const std::string how = status ? describe_exit(*status) : "ended the connection";
    const std::string why = said.empty() ? fmt::format("{} {}", peer, how) : fmt::format("{} ({} {})", said, peer, how);
    error = error.empty() ? why : error + "; " + why;
  }

  // One frame within `timeout`, or nullopt (timeout, or the connection ended: fd is then closed).
  std::optional<Frame> read_frame(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      if (auto f = reader.next()) return f;
      if (!fd) return std::nullopt;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      pollfd p[2] = {{fd.get(), POLLIN, 0}, {child_stderr.get(), POLLIN, 0}};
      if (::poll(p, child_stderr ? 2 : 1, int(std::max<int64_t>(0, left.count()))) <= 0) return std::nullopt;
      if (child_stderr && p[1].revents) read_stderr();
      if (!p[0].revents) continue;
      char buf[64 << 10];
      const ssize_t n = ::recv(fd.get(), buf, sizeof(buf), 0);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        fd.reset();
        if (n < 0) error = fmt::format("connection to the agent lost: {}", std::strerror(errno));
        connection_ended();
        return std::nullopt;
      }
      if (n > 0) reader.feed(buf, size_t(n));
    }
  }

  ClientEvent handle(const Frame& f) {
    switch (f.type) {
      case FrameType::EventBatch: {
        EventBatch b = decode_event_batch(decompressed(f), session.strings.size());
        dropped = b.dropped_by_agent;
        if (b.delta.reset) {
          session = std::move(b.delta.records);
          ++resets;
        } else {
          rt::prof::append_delta(session, std::move(b.delta));
        }
        ++batches;
        return ClientEvent::Batch;
      }
      case FrameType::Notice:
        notices.push_back(f.payload);
        return ClientEvent::Notice;
      case FrameType::Reply: {
        json r = json::parse(f.payload, nullptr, false);
        if (r.is_discarded() || !r.is_object()) throw ProtocolError("remote protocol: a Reply is not a JSON object");
        replies.push_back(std::move(r));
        return ClientEvent::Reply;
      }
      case FrameType::Error: {
        const json e = json::parse(f.payload, nullptr, false);
        error = e.is_object() && e.contains("error") && e["error"].is_string() ? e["error"].get<std::string>()
                                                                               : std::string("the agent sent an Error frame");
        fd.reset();
        return ClientEvent::Closed;
      }
      default:
        throw ProtocolError(fmt::format("remote protocol: an agent does not send {} frames after Welcome",
                                        frame_type_name(uint8_t(f.type))));
    }
  }

  void handshake(const std::string& client_name, std::chrono::milliseconds timeout,
                 const std::optional<TcpToken>& token);

  void send(FrameType type, const std::string& payload) {
    if (!fd) throw RemoteError("remote attach: not connected" + (error.empty() ? std::string() : ": " + error));
    send_all(fd.get(), encode_frame(type, payload), std::chrono::seconds(5));
  }
};

AgentClient::AgentClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
AgentClient::AgentClient(AgentClient&&) noexcept = default;
AgentClient& AgentClient::operator=(AgentClient&&) noexcept = default;
AgentClient::~AgentClient() = default;

namespace {

std::string quoted_command(const std::vector<std::string>& argv) {
  std::string text;
  for (const auto& a : argv) text += (text.empty() ? "" : " ") + a;
  return "`" + text + "`";
}

}  // namespace

// Hello, then (TCP with a token) Challenge and Proof, then Welcome: docs/remote-protocol.md.
void AgentClient::Impl::handshake(const std::string& client_name, std::chrono::milliseconds timeout,
                                  const std::optional<TcpToken>& token) {
  Impl& impl = *this;
  json hello{{"protocol", kProtocolVersion}, {"client", client_name}};
  std::string secret, client_nonce;
  if (token) {
    const auto bytes = from_hex(token->hex);
    if (!bytes || bytes->size() != kTokenBytes)
      throw rt::ValueError(fmt::format("remote attach: a token is {} hex digits", 2 * kTokenBytes));
    secret = *bytes;
    client_nonce = random_bytes(kNonceBytes);
    hello["nonce"] = to_hex(client_nonce);
  }
  try {
    impl.send(FrameType::Hello, hello.dump());
  } catch (const rt::Error&) {
    // The peer may already have said why it closes (an Error frame, a relay's stderr): read that below.
  }
  const auto deadline = Clock::now() + timeout;
  auto next = [&](const char* waiting_for) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    auto f = impl.read_frame(std::max(left, std::chrono::milliseconds(0)));
    if (!f && !impl.fd)
      throw RemoteError(fmt::format("remote attach: {} closed the connection before answering {}{}", impl.peer,
                                    waiting_for, impl.error.empty() ? "" : ": " + impl.error));
    if (!f)
      throw RemoteError(fmt::format("remote attach: {} did not answer {} within {} ms", impl.peer, waiting_for,
                                    timeout.count()));
    if (f->type == FrameType::Error) {
      impl.handle(*f);
      throw RemoteError(fmt::format("remote attach: {} refused the connection: {}", impl.peer, impl.error));
    }
    return std::move(*f);
  };
  Frame f = next("Hello");
  std::string agent_nonce;
  if (f.type == FrameType::Challenge) {
    if (!token)
      throw RemoteError(fmt::format("remote attach: {} requires a token: pass the agent's connection file "
                                    "(rtorch attach --tcp ADDR:PORT --connection-file FILE)", impl.peer));
    const json c = json::parse(f.payload, nullptr, false);
    const auto nonce = c.is_object() && c.value("auth", "") == kAuthMethod && c.contains("nonce") && c["nonce"].is_string()
                           ? from_hex(c["nonce"].get<std::string>())
                           : std::nullopt;
    if (!nonce || nonce->size() != kNonceBytes)
      throw ProtocolError(fmt::format("remote protocol: {} sent a Challenge this client cannot answer "
                                      "(wants {{\"auth\": \"{}\", \"nonce\": 64 hex digits}})", impl.peer, kAuthMethod));
    agent_nonce = *nonce;
    impl.send(FrameType::Proof, json{{"scope", scope_name(token->scope)},
                                     {"mac", to_hex(client_proof(secret, token->scope, agent_nonce, client_nonce))}}.dump());
    f = next("the token's proof");
  } else if (token) {
    throw ProtocolError(fmt::format("remote protocol: {} did not ask for the token, so it cannot prove it is the "
                                    "agent the connection file names; refusing it", impl.peer));
  }
  if (f.type != FrameType::Welcome)
    throw ProtocolError(fmt::format("remote protocol: expected Welcome, got {}", frame_type_name(uint8_t(f.type))));
  try {
    impl.agent = parse_manifest(f.payload);
  } catch (const rt::ValueError& e) {
    throw ProtocolError(fmt::format("remote protocol: the Welcome is not a manifest: {}", e.what()));
  }
  const json welcome = json::parse(f.payload, nullptr, false);
  impl.scope = welcome.contains("scope") && welcome["scope"] == "observe" ? AccessScope::Observe : AccessScope::Control;
  if (token) {
    const auto proof = welcome.contains("proof") && welcome["proof"].is_string()
                           ? from_hex(welcome["proof"].get<std::string>())
                           : std::nullopt;
    if (!proof || !same_secret(*proof, agent_proof(secret, token->scope, agent_nonce, client_nonce)))
      throw ProtocolError(fmt::format("remote protocol: {} could not prove that it holds the token; refusing it",
                                      impl.peer));
    impl.scope = token->scope;
  }
}

AgentClient AgentClient::connect(const std::filesystem::path& socket, const std::string& client_name,
                                 std::chrono::milliseconds timeout) {
  auto impl = std::make_unique<Impl>();
  impl->peer = socket.string();
  impl->fd = connect_unix(socket);
  impl->handshake(client_name, timeout, std::nullopt);
  return AgentClient(std::move(impl));
}

AgentClient AgentClient::connect_command(const std::vector<std::string>& argv, const std::string& client_name,
                                         std::chrono::milliseconds timeout) {
  if (argv.empty()) throw rt::ValueError("remote attach: connect_command needs a command to run");
  auto impl = std::make_unique<Impl>();
  impl->peer = quoted_command(argv);
  int pair[2], err[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
    throw rt::Error(fmt::format("remote attach: socketpair/pipe: {}", std::strerror(errno)));
  UniqueFd child_end(pair[1]), err_write(err[1]);
  impl->fd.reset(pair[0]);
  impl->child_stderr.reset(err[0]);
  set_nonblocking(err[0]);
  impl->child = ChildProcess::spawn(argv, child_end.get(), child_end.get(), err_write.get());
  child_end.reset();  // only the program holds its end now: its exit closes the connection
  err_write.reset();
  impl->handshake(client_name, timeout, std::nullopt);
  return AgentClient(std::move(impl));
}

AgentClient AgentClient::connect_tcp(const std::string& endpoint, const std::optional<TcpToken>& token,
                                     const std::string& client_name, std::chrono::milliseconds timeout) {
  const TcpEndpoint where = parse_endpoint(endpoint, "remote attach: TCP address");
  auto impl = std::make_unique<Impl>();
  impl->peer = "TCP " + where.text();
  impl->fd = ::rt::remote::connect_tcp(where, timeout);
  impl->handshake(client_name, timeout, token);
  return AgentClient(std::move(impl));
}

const AgentManifest& AgentClient::agent() const { return impl_->agent; }
AccessScope AgentClient::scope() const { return impl_->scope; }

std::string AgentClient::request(const std::string& method, std::chrono::milliseconds timeout) {
  return request(method, std::string(), timeout);
}

std::string AgentClient::request(const std::string& method, const std::string& params_json,
                                 std::chrono::milliseconds timeout) {
  json frame = {{"method", method}};
  if (!params_json.empty()) {
    json params = json::parse(params_json, nullptr, false);
    if (params.is_discarded() || !params.is_object())
      throw rt::ValueError(fmt::format("remote attach: the params of '{}' must be a JSON object, not {}", method,
                                       params_json));
    frame["params"] = std::move(params);
  }
  const int64_t id = impl_->next_id++;
  frame["id"] = id;
  impl_->send(FrameType::Request, frame.dump());
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    for (auto it = impl_->replies.begin(); it != impl_->replies.end(); ++it) {
      if (!(*it).contains("id") || (*it)["id"] != id) continue;
      const json r = std::move(*it);
      impl_->replies.erase(it);
      if (r.contains("error")) throw RemoteError(fmt::format("remote attach: the agent refused '{}': {}", method,
                                                              r["error"].is_string() ? r["error"].get<std::string>() : r["error"].dump()));
      return r.contains("result") ? r["result"].dump() : "null";
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0 || !impl_->fd)
      throw RemoteError(fmt::format("remote attach: no reply to '{}'{}", method,
                                    impl_->fd ? fmt::format(" within {} ms", timeout.count())
                                              : ": " + (impl_->error.empty() ? std::string("the agent closed the connection") : impl_->error)));
    if (auto f = impl_->read_frame(left)) impl_->handle(*f);
  }
}

ClockEstimate AgentClient::estimate_clock(int round_trips, std::chrono::milliseconds timeout) {
  if (round_trips < 1)
    throw rt::ValueError(fmt::format("estimate_clock: round_trips is {}; it must be at least 1", round_trips));
  ClockEstimate best;
  int64_t best_rtt = std::numeric_limits<int64_t>::max();
  for (int i = 0; i < round_trips; ++i) {
    const int64_t sent = rt::now_ns();
    const json reply = json::parse(request("clock", timeout), nullptr, false);
    const int64_t received = rt::now_ns();
    if (reply.is_discarded() || !reply.contains("steady_ns") || !reply["steady_ns"].is_number_integer())
      throw RemoteError("remote attach: the agent's reply to 'clock' has no integer \"steady_ns\"");
    const int64_t rtt = received - sent;
    if (rtt < best_rtt) {
      best_rtt = rtt;
      best.offset_ns = reply["steady_ns"].get<int64_t>() - (sent + rtt / 2);
      best.error_ns = (rtt + 1) / 2;
    }
  }
  best.round_trips = round_trips;
  return best;
}

ClientEvent AgentClient::poll(std::chrono::milliseconds timeout) {
  if (!impl_->fd && impl_->reader.buffered() == 0) return ClientEvent::Closed;
  try {
    auto f = impl_->read_frame(timeout);
    if (!f) return impl_->fd ? ClientEvent::Nothing : ClientEvent::Closed;
    return impl_->handle(*f);
  } catch (...) {
    impl_->fd.reset();
    throw;
  }
}

const rt::prof::SessionData& AgentClient::session() const { return impl_->session; }
uint64_t AgentClient::resets() const { return impl_->resets; }
uint64_t AgentClient::batches() const { return impl_->batches; }
uint64_t AgentClient::dropped_by_agent() const { return impl_->dropped; }
const std::vector<std::string>& AgentClient::notices() const { return impl_->notices; }
bool AgentClient::connected() const { return bool(impl_->fd); }
const std::string& AgentClient::error() const { return impl_->error; }

}  // namespace rt::remote
