#include "agent/token_auth.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace rt::remote {
using json = nlohmann::json;

std::string random_bytes(size_t n) {
  std::string out(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), int(n)) != 1)
    throw rt::Error("remote attach: the OS random generator gave no bytes (RAND_bytes failed); cannot make a token");
  return out;
}

std::string to_hex(std::string_view bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

std::optional<std::string> from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  auto value = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out(hex.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = value(hex[2 * i]), lo = value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = char(hi * 16 + lo);
  }
  return out;
}

bool same_secret(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

namespace {

std::string proof(std::string_view role, std::string_view token, AccessScope scope, std::string_view agent_nonce,
                  std::string_view client_nonce) {
  std::string message(role);
  message += '\n';
  message += scope_name(scope);
  message += '\n';
  message.append(agent_nonce);
  message += '\n';
  message.append(client_nonce);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!HMAC(EVP_sha256(), token.data(), int(token.size()), reinterpret_cast<const unsigned char*>(message.data()),
            message.size(), mac, &length))
    throw rt::Error("remote attach: HMAC-SHA256 failed (libcrypto)");
  return std::string(reinterpret_cast<const char*>(mac), length);
}

}  // namespace

std::string client_proof(std::string_view token, AccessScope scope, std::string_view agent_nonce,
                         std::string_view client_nonce) {
  return proof("rtorch-remote client v1", token, scope, agent_nonce, client_nonce);
}

std::string agent_proof(std::string_view token, AccessScope scope, std::string_view agent_nonce,
                        std::string_view client_nonce) {
  return proof("rtorch-remote agent v1", token, scope, agent_nonce, client_nonce);
}

AgentTokens make_tokens() { return {random_bytes(kTokenBytes), random_bytes(kTokenBytes)}; }

void write_connection_file(const std::filesystem::path& path, const AgentManifest& m, const AgentTokens& tokens) {
  const json j = {{"job", m.job},          {"rank", m.rank},
                  {"pid", m.pid},          {"host", m.host},
                  {"listen", m.listen},    {"auth", kAuthMethod},
                  {"observe_token", to_hex(tokens.observe)}, {"control_token", to_hex(tokens.control)}};
  const std::string text = j.dump(1) + "\n";
  const std::filesystem::path tmp = path.string() + ".tmp";
  ::unlink(tmp.c_str());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw rt::Error(fmt::format("remote attach: cannot write {}: {}", tmp.string(), std::strerror(errno)));
  const bool ok = ::fchmod(fd, 0600) == 0 && ::write(fd, text.data(), text.size()) == ssize_t(text.size());
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw rt::Error(fmt::format("remote attach: cannot write the connection file {}: {}", path.string(),
                                std::strerror(errno)));
  }
}

std::string TokenGate::challenge(const json& hello) {
  const auto nonce = hello.contains("nonce") && hello["nonce"].is_string()
                         ? from_hex(hello["nonce"].get<std::string>())
                         : std::nullopt;
  if (!nonce)
    throw AuthError("refused: this agent requires a token on TCP (hmac-sha256); give the client the agent's "
                    "connection file (rtorch attach --tcp ADDR:PORT --connection-file FILE)");
  if (nonce->size() != kNonceBytes)
    throw AuthError(fmt::format("refused: the client's nonce has {} bytes, not {}", nonce->size(), kNonceBytes));
  client_nonce_ = *nonce;
  agent_nonce_ = random_bytes(kNonceBytes);
  return json{{"auth", kAuthMethod}, {"nonce", to_hex(agent_nonce_)}}.dump();
}

TokenGate::Verdict TokenGate::verify(const std::string& payload) {
  if (agent_nonce_.empty() || used_) throw AuthError("refused: a Proof without a fresh Challenge");
  used_ = true;
  const json p = json::parse(payload, nullptr, false);
  if (p.is_discarded() || !p.is_object() || !p.contains("scope") || !p["scope"].is_string() || !p.contains("mac") ||
      !p["mac"].is_string())
    throw AuthError("refused: a Proof must be a JSON object with string \"scope\" and \"mac\"");
  AccessScope scope;
  try {
    scope = parse_scope(p["scope"].get<std::string>());
  } catch (const rt::ValueError& e) {
    throw AuthError(fmt::format("refused: {}", e.what()));
  }
  const std::string& token = scope == AccessScope::Control ? tokens_.control : tokens_.observe;
  const auto mac = from_hex(p["mac"].get<std::string>());
  const std::string expected = client_proof(token, scope, agent_nonce_, client_nonce_);
  if (!mac || !same_secret(*mac, expected))
    throw AuthError(fmt::format("refused: authentication failed: the proof does not match this agent's {} token",
                                scope_name(scope)));
  return {scope, to_hex(agent_proof(token, scope, agent_nonce_, client_nonce_))};
}

}  // namespace rt::remote
