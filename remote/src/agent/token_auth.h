// Tokens and the HMAC-SHA256 challenge and response of TCP attach (rt/remote/tcp.h has the contracts,
// docs/remote-protocol.md "TCP and tokens" the messages). OpenSSL's libcrypto does the cryptography:
// RAND_bytes for tokens and nonces, HMAC for the proofs, CRYPTO_memcmp to compare them in constant time.
//
//   AgentTokens tokens = make_tokens();                         // the agent, once
//   TokenGate gate(&tokens);                                    // per TCP connection
//   std::string challenge = gate.challenge(hello);              // -> Challenge frame
//   TokenGate::Verdict v = gate.verify(proof_payload);          // throws AuthError on a wrong proof
//   // v.scope is what the connection may do; v.agent_proof goes into the Welcome
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rt/error.h"
#include "rt/remote/manifest.h"
#include "rt/remote/tcp.h"

namespace rt::remote {

inline constexpr size_t kTokenBytes = 32;
inline constexpr size_t kNonceBytes = 32;
inline constexpr const char* kAuthMethod = "hmac-sha256";

// A client that cannot prove it holds a token, or a handshake out of order.
class AuthError : public rt::Error {
 public:
  using rt::Error::Error;
};

// `n` bytes from the OS's random generator (RAND_bytes); throws rt::Error when it has none.
std::string random_bytes(size_t n);
std::string to_hex(std::string_view bytes);
// The bytes of `hex` (an even number of hex digits), or nullopt.
std::optional<std::string> from_hex(std::string_view hex);
// Constant-time equality (CRYPTO_memcmp) of two byte strings of the same length; false when lengths differ.
bool same_secret(std::string_view a, std::string_view b);

// What each side proves: HMAC-SHA256(token, role "\n" scope "\n" agent nonce "\n" client nonce), role
// "rtorch-remote client v1" or "rtorch-remote agent v1", nonces as raw bytes. Returns the raw 32-byte MAC.
std::string client_proof(std::string_view token, AccessScope scope, std::string_view agent_nonce,
                         std::string_view client_nonce);
std::string agent_proof(std::string_view token, AccessScope scope, std::string_view agent_nonce,
                        std::string_view client_nonce);

struct AgentTokens {
  std::string observe, control;  // raw bytes, kTokenBytes each
};
AgentTokens make_tokens();

// Writes the connection file (rt/remote/tcp.h) atomically with mode 0600.
void write_connection_file(const std::filesystem::path& path, const AgentManifest& manifest,
                           const AgentTokens& tokens);

// The agent's side of one TCP connection's handshake.
class TokenGate {
 public:
  explicit TokenGate(const AgentTokens& tokens) : tokens_(tokens) {}
  // The Challenge payload for a Hello: {"auth": "hmac-sha256", "nonce": hex}. Throws AuthError when the
  // Hello brings no client nonce (a client without a token).
  std::string challenge(const nlohmann::json& hello);
  struct Verdict {
    AccessScope scope;
    std::string agent_proof_hex;  // for the Welcome's "proof"
  };
  // Checks a Proof payload {"scope": "...", "mac": hex}; throws AuthError (wrong token, malformed, or no
  // challenge sent yet). One proof per connection: a second is refused.
  Verdict verify(const std::string& proof_payload);

 private:
  const AgentTokens& tokens_;
  std::string agent_nonce_, client_nonce_;
  bool used_ = false;
};

}  // namespace rt::remote
