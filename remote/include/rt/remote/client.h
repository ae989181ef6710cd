// rt/remote/client.h — the client side of remote attach: connect to one rank's agent, ask it questions and
// mirror its profiling session as it grows. `rtorch attach` and the studio are built on it; it blocks, so a
// GUI runs it on a worker thread.
//
//   rt::remote::AgentClient client = rt::remote::AgentClient::connect(manifest.socket, "my tool");
//   std::puts(client.request("status").c_str());        // {"pid": ..., "recording": true, ...}
//   client.request("subscribe");
//   while (client.poll(std::chrono::milliseconds(500)) != rt::remote::ClientEvent::Closed)
//     draw(client.session());                            // the rank's session so far (events.h)
//
// Contracts
// - connect() says Hello and reads the Welcome within `timeout`; it throws rt::Error when nothing listens there
//   and ProtocolError when the peer is not an agent of this protocol version (both versions named) or refuses.
// - request() returns the result as JSON text, or throws RemoteError with the agent's message (an unknown
//   method, a session that cannot start). Frames that arrive meanwhile are handled as poll() handles them.
// - poll() waits at most `timeout` for one frame: an EventBatch is applied to session() (a reset replaces it,
//   rt/prof/session_delta.h); a Notice is kept in notices(); an Error frame or a closed socket ends the
//   connection (Closed; error() says why, "" for a clean close). A malformed frame throws ProtocolError and
//   closes the connection; session() keeps what arrived before.
// - Every read is bounded (frame.h's limits) and timed: a slow or hostile agent never makes it hang longer
//   than the timeout it was given, nor allocate more than a frame's limit.
// - connect_command() speaks the same protocol over a program's stdin and stdout (a socketpair), typically
//   `ssh HOST rtorch relay --job J --rank R` (rt/remote/ssh.h builds that command). What the program writes to
//   stderr is kept (the last 8 KiB) and becomes error() and the exceptions' text when the connection ends
//   ("ssh: connect to host x port 22: Connection refused"). The program is reaped when the client is
//   destroyed (SIGTERM, then SIGKILL, if it does not exit by itself once its stdin closes).
// - connect_tcp() reaches an agent that listens on TCP (rt/remote/tcp.h). With a token it answers the agent's
//   challenge and checks the agent's own proof (ProtocolError when the agent cannot prove it holds the token
//   or does not ask for it); without one, an agent that requires a token refuses (RemoteError saying so).
// - scope() is what the agent granted: control over its Unix socket, observe or the token's scope on TCP.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rt/error.h"
#include "rt/export.h"
#include "rt/prof/events.h"
#include "rt/remote/manifest.h"
#include "rt/remote/tcp.h"

RT_API_BEGIN

namespace rt::remote {

class RemoteError : public rt::Error {
 public:
  using rt::Error::Error;
};

enum class ClientEvent { Nothing, Batch, Notice, Reply, Closed };

// The agent's steady clock minus the client's (AgentClient::estimate_clock).
struct ClockEstimate {
  int64_t offset_ns = 0;     // agent time - client time
  int64_t error_ns = 0;      // at most this far off: half the shortest round trip
  int round_trips = 0;
};

class AgentClient {
 public:
  static AgentClient connect(const std::filesystem::path& socket, const std::string& client_name = "rtorch",
                             std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // argv[0] is searched in PATH; e.g. {"ssh", "gpu-node-3", "rtorch", "relay", "--job", "J", "--rank", "0"}.
  static AgentClient connect_command(const std::vector<std::string>& argv, const std::string& client_name = "rtorch",
                                     std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // endpoint: "HOST:PORT" or "[IPV6]:PORT".
  static AgentClient connect_tcp(const std::string& endpoint, const std::optional<TcpToken>& token = std::nullopt,
                                 const std::string& client_name = "rtorch",
                                 std::chrono::milliseconds timeout = std::chrono::seconds(5));
  AgentClient(AgentClient&&) noexcept;
  AgentClient& operator=(AgentClient&&) noexcept;
  ~AgentClient();

  const AgentManifest& agent() const;   // what the Welcome said
  AccessScope scope() const;            // what the agent lets this connection do
  std::string request(const std::string& method,
                      std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // With the Request's "params": a JSON object's text, e.g. R"({"side": "grad_outputs", "index": 0})";
  // ValueError when it is not one.
  std::string request(const std::string& method, const std::string& params_json,
                      std::chrono::milliseconds timeout = std::chrono::seconds(10));
  ClientEvent poll(std::chrono::milliseconds timeout);
  // How far the agent's steady clock (its rt::now_ns, what its sessions' times are in) is from this process's,
  // NTP-style: of `round_trips` "clock" requests, the one that came back soonest gives
  // offset = agent_now - (sent + received) / 2, wrong by at most half that round trip. On one machine the
  // offset is about 0; across machines it puts each rank on the client's clock (prof::RankSession::clock).
  ClockEstimate estimate_clock(int round_trips = 8, std::chrono::milliseconds timeout = std::chrono::seconds(2));

  const rt::prof::SessionData& session() const;
  uint64_t resets() const;              // how many times session() was replaced (a new or re-read session)
  uint64_t batches() const;             // event batches applied
  uint64_t dropped_by_agent() const;    // records the agent dropped because this client fell behind
  const std::vector<std::string>& notices() const;  // JSON texts, oldest first
  bool connected() const;
  const std::string& error() const;     // why the connection ended ("" while connected or closed cleanly)

 private:
  struct Impl;
  explicit AgentClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rt::remote

RT_API_END
