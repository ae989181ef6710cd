// rt/remote/agent.h — make this process attachable: one thread serves the profiler session to the studio or
// `rtorch attach` over a private Unix socket (docs/remote-attach.md; the protocol is docs/remote-protocol.md).
//
//   rt::remote::AgentManifest m = rt::remote::serve();      // or RT_ATTACH=1, `rtorch run --attach`,
//   std::printf("attach with: rtorch attach %s\n", m.job.c_str());   // `rtorch launch --attach`, rt.remote.serve()
//   train();                                                // unchanged: the agent only observes
//   rt::remote::stop_serving();                             // also at exit
//
// Contracts
// - One agent per process; serve() while serving returns the running agent's manifest. It listens on
//   <runtime_dir>/<job>.r<rank>.<pid>.sock (rt/remote/manifest.h: a 0700 folder, a 0600 socket) and writes the
//   manifest beside it; stop_serving() (or exit) removes both. Only connections from this user's uid are
//   served (SO_PEERCRED); others get an Error frame and are closed.
// - The agent never evaluates anything a client sends: it answers the requests listed in
//   docs/remote-protocol.md (status, subscribe, unsubscribe) and refuses every other one by name.
// - subscribe streams the profiling sessions this process records, one after another: a program's own
//   (rt.profiler.profile, `rtorch run --profile`) or, between them, one the agent records for its subscribers
//   (shapes, memory, module scopes; metadata "attached": "agent"), which gives way when the program starts a
//   profile and stops when the last subscriber leaves (Note [What subscribers follow] in
//   remote/src/agent/agent_server.h). While subscribed, the session registry keeps the last few finished
//   sessions, so a profile destroyed right after it stops still reaches the subscribers whole.
// - Never blocks training: records wait in a bounded queue per client (AgentOptions::buffer_bytes); a client
//   that does not keep up loses the oldest records and is told how many (EventBatch::dropped_by_agent).
// - fork(): the child has no agent thread; the inherited sockets are closed in the child, the parent's files
//   stay. A child may serve() for itself (a new manifest with its pid).
// - stop_serving() sends what subscribers have not received yet, for at most flush_timeout, then closes
//   every connection.
// - TCP only on request (rt/remote/tcp.h): listen = "ADDR:PORT" also accepts TCP connections there ("PORT"
//   alone is 127.0.0.1:PORT; port 0 picks a free one, AgentManifest::listen says which). On loopback no token is
//   needed (such clients observe) unless listen_auth = Token; on any other address tokens are required and
//   listen_auth = None is refused with the reason. An observe connection is refused the requests that pause
//   or read gradients (rt/remote/tcp.h lists the scopes). With tokens, serve() writes the connection file
//   (connection_file_path(manifest), 0600) that clients need; stop_serving() removes it. When listen is "",
//   $RT_ATTACH_LISTEN and $RT_ATTACH_LISTEN_AUTH (auto, token, none) are used, the port plus $LOCAL_RANK
//   (how `rtorch launch --attach --listen` gives each rank of a node its own port).
#pragma once
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include "rt/export.h"
#include "rt/remote/manifest.h"

RT_API_BEGIN

namespace rt::remote {

enum class TcpAuth {
  Auto,   // tokens on any address but loopback
  Token,  // tokens on every address, loopback too (a loopback client may then control)
  None,   // no token: loopback only (refused on any other address)
};

struct AgentOptions {
  std::string job;                  // "" = from the environment (AgentManifest::job)
  int rank = -1;                    // -1 = $RANK, else 0
  int world_size = -1;              // -1 = $WORLD_SIZE, else 1
  std::filesystem::path runtime_dir;  // "" = ensure_runtime_dir()
  size_t buffer_bytes = size_t(64) << 20;  // per client
  std::chrono::milliseconds batch_interval{50};
  std::string listen;               // "" = the Unix socket only; "ADDR:PORT" also TCP (rt/remote/tcp.h)
  TcpAuth listen_auth = TcpAuth::Auto;
};

AgentManifest serve(const AgentOptions& options = {});
void stop_serving(std::chrono::milliseconds flush_timeout = std::chrono::milliseconds(2000));
std::optional<AgentManifest> serving();

}  // namespace rt::remote

RT_API_END
