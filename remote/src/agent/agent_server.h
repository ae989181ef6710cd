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
#include "net/unix_socket.h"
#include "rt/prof/session.h"
#include "rt/remote/agent.h"
#include "rt/remote/manifest.h"

namespace rt::remote {

class AgentServer {
 public:
  AgentServer(AgentOptions options, AgentManifest manifest, UniqueFd listener, std::filesystem::path manifest_path);
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
  void accept_clients();
  bool read_from(Connection& c);
  void handle(Connection& c, const struct Frame& f);
  std::string answer(Connection& c, const std::string& method);
  void subscribe(Connection& c);
  void unsubscribe(Connection& c);
  void read_sessions(bool final_read);
  bool write_to(Connection& c);
  void release_session_if_unused();
  void flush_and_close(std::chrono::milliseconds timeout);

  AgentOptions options_;
  AgentManifest manifest_;
  std::filesystem::path manifest_path_;
  UniqueFd listener_;
  UniqueFd wake_read_, wake_write_;
  std::atomic<bool> stopping_{false};
  std::chrono::milliseconds flush_timeout_{0};
  std::vector<std::unique_ptr<Connection>> clients_;
  std::unique_ptr<rt::prof::Session> owned_session_;  // the agent's own, when no other session recorded
  uint64_t session_id_ = 0;                            // the SessionRegistry id subscribers read; 0: none
  DebugControl debug_;                                 // pause, step, continue (debug_control.h)
  std::thread thread_;
};

}  // namespace rt::remote
