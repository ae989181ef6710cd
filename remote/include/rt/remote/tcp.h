// rt/remote/tcp.h — attaching over TCP, only when asked (docs/remote-attach.md, "TCP and tokens"): an agent
// started with AgentOptions::listen = "ADDR:PORT" (`rtorch run --attach --listen ADDR:PORT`) also accepts TCP
// connections there. On any address but loopback a client must prove that it holds a token: random (32 bytes
// from the OS), scoped to observe or control, kept in a 0600 connection file beside the agent's manifest.
//
//   // on the training machine: rtorch run --attach --listen 0.0.0.0:7070 train.py
//   // copy <runtime_dir>/<job>.r0.<pid>.connection to the client (it holds both tokens; drop the control one
//   // to hand out observe-only access), then:
//   rt::remote::ConnectionFile file = rt::remote::read_connection_file("train.r0.4242.connection");
//   auto client = rt::remote::AgentClient::connect_tcp("gpu-node-3:7070", file.token(rt::remote::AccessScope::Observe));
//
// Contracts
// - observe: status, subscribe, debug_status (everything that watches). control: also what changes the run or
//   reads its tensors (pause, step, step_over, continue, paused_state). A Unix-socket client of the same user
//   has control; a TCP client without a token (loopback only) observes; one with a token has its scope.
// - The handshake (docs/remote-protocol.md) is an HMAC-SHA256 challenge and response over a fresh random
//   nonce from each side: a response recorded from one connection is worthless on another, the token never
//   crosses the wire, and the agent proves to the client that it holds the token too.
// - TCP is not encrypted: a token protects who may attach, not what they see. Use SSH (rt/remote/ssh.h) across
//   networks you do not trust.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "rt/export.h"
#include "rt/remote/manifest.h"

RT_API_BEGIN

namespace rt::remote {

enum class AccessScope { Observe, Control };

// "observe", "control".
const char* scope_name(AccessScope scope);
// The scope a name ("observe", "control") names; throws rt::ValueError for any other name.
AccessScope parse_scope(const std::string& name);

struct TcpToken {
  AccessScope scope = AccessScope::Observe;
  std::string hex;  // 64 hex digits: the 32-byte secret
};

// What an agent that listens on TCP with tokens writes beside its manifest (mode 0600).
struct ConnectionFile {
  std::string job;
  int rank = 0;
  int pid = 0;
  std::string host;    // gethostname of the agent's machine
  std::string listen;  // "ADDR:PORT" as bound (the real port when 0 was asked)
  std::string observe_token, control_token;  // hex; "" when the file does not hold that scope's token
  // The token of `scope`; throws rt::ValueError when the file holds none of that scope.
  TcpToken token(AccessScope scope) const;
};

// <stem>.connection beside the manifest's <stem>.sock.
std::filesystem::path connection_file_path(const AgentManifest& manifest);
// Throws rt::ValueError naming the file and the missing or malformed field; rt::Error when unreadable.
ConnectionFile read_connection_file(const std::filesystem::path& path);

}  // namespace rt::remote

RT_API_END
