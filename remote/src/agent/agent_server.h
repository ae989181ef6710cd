// The agent's thread: accepts this user's connections on the Unix socket, answers their requests and streams
// the profiling session to subscribers (rt/remote/agent.h has the contracts).
#pragma once
#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/debug_control.h"
#include "agent/token_auth.h"
#include "net/tcp_listener.h"
#include "net/unix_socket.h"
#include "rt/prof/session.h"
#include "rt/remote/agent.h"
#include "rt/remote/manifest.h"

namespace rt::remote {

// The agent's optional TCP side (rt/remote/tcp.h): its listener and, when clients must prove a token, the
// tokens and the connection file that holds them.
struct TcpAccess {
  TcpListener listener;
  std::optional<AgentTokens> tokens;
  std::filesystem::path connection_file;
};

// Note [What subscribers follow]
// Subscribers receive the sessions this process records, one after another. At subscribe, the program's own
// profile (rt.profiler.profile, `rtorch run --profile`) when one records, else a session the agent records for
// them. The agent's session gives way (SessionOptions::on_yield) when the program starts a profile: it ends with a
// final increment and a "session_complete" notice, and the program's session follows from its start (a reset).
// When a session completes or leaves the registry, the next tick follows the oldest session started since (even
// one already stopped: a short profile may end between two ticks). Once subscribers followed a program's profile,
// the agent does not record again after it (a script that profiles its whole run ends with its own session
// last, which is what a viewer shows) until a client subscribes anew; its own sessions only follow each other
// (Note [Bounded agent sessions]). The first subscriber starts with the session recording then, if any; sessions
// that ended before it came are history it is not sent. Without subscribers nothing is recorded.
//
// Note [Bounded agent sessions]
// A profiling session keeps its records in memory (session.h, Note [Session memory]); the agent's own session
// would grow for as long as someone stays attached. It completes once it holds kRotateRecords records (about
// 120 MB) and the next one begins at the next tick: subscribers see a series of sessions, each whole
// (`rtorch attach --record` saves each), and the agent's memory stays bounded. A program's own profile is the
// program's to bound.
class AgentServer {
 public:
  AgentServer(AgentOptions options, AgentManifest manifest, UniqueFd listener, std::filesystem::path manifest_path,
              std::optional<TcpAccess> tcp = std::nullopt);
  ~AgentServer();
  AgentServer(const AgentServer&) = delete;
  AgentServer& operator=(const AgentServer&) = delete;

  const AgentManifest& manifest() const { return manifest_; }
  // Flushes subscribers (at most flush_timeout), closes everything, removes the socket and manifest, joins.
  void stop(std::chrono::milliseconds flush_timeout);
  // In a forked child, where the thread does not exist: closes the inherited descriptors and nothing else.
  void abandon_after_fork();

 private:
  struct Connection;
  void run();
  void accept_clients(int listener, bool tcp);
  void greet(Connection& c, const struct Frame& f);
  void drop_silent_tcp_peers();
  bool read_from(Connection& c);
  void handle(Connection& c, const struct Frame& f);
  std::string answer(Connection& c, const std::string& method, const nlohmann::json& params);
  void subscribe(Connection& c);
  void unsubscribe(Connection& c);
  bool has_subscribers() const;
  void follow_session();
  void stop_own_session();
  void read_sessions(bool final_read);
  bool write_to(Connection& c);
  void release_session_if_unused();
  void flush_and_close(std::chrono::milliseconds timeout);

  AgentOptions options_;
  AgentManifest manifest_;
  std::filesystem::path manifest_path_;
  UniqueFd listener_;
  std::optional<TcpAccess> tcp_;
  UniqueFd wake_read_, wake_write_;
  std::atomic<bool> stopping_{false};
  std::chrono::milliseconds flush_timeout_{0};
  std::vector<std::unique_ptr<Connection>> clients_;
  std::unique_ptr<rt::prof::Session> owned_session_;  // the agent's own, when no other session recorded
  uint64_t session_id_ = 0;                            // the SessionRegistry id subscribers read; 0: none
  uint64_t last_followed_id_ = 0;                      // the newest session subscribers were given
  bool followed_any_ = false;
  bool agent_may_record_ = false;  // Note [What subscribers follow]: false once a program's profile was followed
  DebugControl debug_;                                 // pause, step, continue (debug_control.h)
  std::atomic<bool> yield_requested_{false};           // a program's session wants to start (on_yield)
  std::chrono::steady_clock::time_point own_session_allowed_at_{};  // after a yield: let the program's start
  std::thread thread_;
};

}  // namespace rt::remote
