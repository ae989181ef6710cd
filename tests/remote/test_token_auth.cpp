// TCP attach and its tokens (rt/remote/tcp.h), over real TCP sockets to the agent in this process: loopback
// without a token (observe only), tokens required off loopback, refusals (no token, wrong token, a proof
// replayed from an earlier connection, an agent that cannot prove the token, an observe token trying to pause),
// scopes, the connection file,
// and a non-loopback listen without a token refused before anything is written. The replay test speaks the
// handshake itself from docs/remote-protocol.md ("TCP and tokens"), with libcrypto's HMAC.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "rt/remote/agent.h"
#include "rt/remote/client.h"
#include "rt/remote/frame.h"
#include "rt/remote/manifest.h"
#include "rt/remote/tcp.h"
#include "rt/rt.h"
#include "runtime_dir.h"

using namespace rt;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// The port of "ADDR:PORT".
std::string loopback_endpoint(const remote::AgentManifest& m) {
  return "127.0.0.1:" + m.listen.substr(m.listen.rfind(':') + 1);
}

std::string hex(const std::string& bytes) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) out += {d[c >> 4], d[c & 15]};
  return out;
}

std::string unhex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) out += char(std::stoi(h.substr(i, 2), nullptr, 16));
  return out;
}

// The client's proof as docs/remote-protocol.md defines it.
std::string client_mac(const std::string& token, const std::string& scope, const std::string& agent_nonce,
                       const std::string& client_nonce) {
  const std::string message = "rtorch-remote client v1\n" + scope + "\n" + agent_nonce + "\n" + client_nonce;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  HMAC(EVP_sha256(), token.data(), int(token.size()), reinterpret_cast<const unsigned char*>(message.data()),
       message.size(), mac, &n);
  return std::string(reinterpret_cast<char*>(mac), n);
}

// A TCP connection that speaks frames by hand.
struct RawConnection {
  int fd = -1;
  remote::FrameReader reader;
  explicit RawConnection(const std::string& endpoint) {
    const auto colon = endpoint.rfind(':');
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(uint16_t(std::stoi(endpoint.substr(colon + 1))));
    ::inet_pton(AF_INET, endpoint.substr(0, colon).c_str(), &a.sin_addr);
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  ~RawConnection() { ::close(fd); }
  void send(remote::FrameType type, const std::string& payload) {
    const std::string bytes = remote::encode_frame(type, payload);
    REQUIRE(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == ssize_t(bytes.size()));
  }
  remote::Frame read() {
    char buf[4096];
    for (;;) {
      if (auto f = reader.next()) return *f;
      const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      REQUIRE(n > 0);
      reader.feed(buf, size_t(n));
    }
  }
};

std::string random_hex(size_t bytes) {
  std::string b(bytes, '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(b.data()), int(bytes));
  return hex(b);
}

void matmuls(int n) {
  auto w = rt::randn({16, 16});
  for (int i = 0; i < n; ++i) (void)rt::matmul(rt::randn({16, 16}), w);
}

int64_t count_ops(const prof::SessionData& d, const std::string& name) {
  int64_t n = 0;
  for (const auto& op : d.ops)
    if (d.strings.at(op.name) == name) ++n;
  return n;
}

}  // namespace

TEST_CASE("loopback TCP needs no token, streams the session end to end, and only observes", "[remote][tcp]") {
  RuntimeDir dir;
  const remote::AgentManifest m = remote::serve({.job = "tcp-job", .listen = "127.0.0.1:0"});
  REQUIRE_THAT(m.listen, Catch::StartsWith("127.0.0.1:"));
  CHECK(m.listen != "127.0.0.1:0");  // the port the kernel chose
  CHECK_FALSE(fs::exists(remote::connection_file_path(m)));  // no tokens on loopback by default
  CHECK(remote::list_manifests(dir.path).at(0).listen == m.listen);

  auto client = remote::AgentClient::connect_tcp(m.listen, std::nullopt, "test_token_auth");
  CHECK(client.agent().job == "tcp-job");
  CHECK(client.scope() == remote::AccessScope::Observe);
  CHECK_THAT(client.request("status"), Catch::Contains("\"scope\":\"observe\""));
  CHECK_THROWS_WITH(client.request("pause"), Catch::Contains("needs control"));  // tokenless loopback observes
  client.request("subscribe");
  matmuls(12);
  for (int i = 0; i < 100 && count_ops(client.session(), "matmul") < 12; ++i) client.poll(50ms);
  CHECK(count_ops(client.session(), "matmul") == 12);

  // The same user's Unix socket controls.
  auto local = remote::AgentClient::connect(m.socket, "test_token_auth");
  CHECK(local.scope() == remote::AccessScope::Control);
  CHECK_THAT(local.request("status"), Catch::Contains("\"scope\":\"control\""));

  // A client holding a token refuses an agent that does not ask for it: it could be anyone on that port.
  const remote::TcpToken stray{remote::AccessScope::Observe, random_hex(32)};
  CHECK_THROWS_WITH(remote::AgentClient::connect_tcp(m.listen, stray), Catch::Contains("did not ask for the token"));
}

TEST_CASE("off loopback every client proves a token and gets the token's scope", "[remote][tcp]") {
  RuntimeDir dir;
  const remote::AgentManifest m = remote::serve({.job = "tok-job", .listen = "0.0.0.0:0"});
  const fs::path file_path = remote::connection_file_path(m);
  REQUIRE(fs::exists(file_path));
  struct stat st{};
  REQUIRE(::stat(file_path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  const remote::ConnectionFile file = remote::read_connection_file(file_path);
  CHECK(file.job == "tok-job");
  CHECK(file.listen == m.listen);
  CHECK(file.observe_token.size() == 64);
  CHECK(file.control_token.size() == 64);
  CHECK(file.observe_token != file.control_token);
  const std::string at = loopback_endpoint(m);

  SECTION("no token") {
    CHECK_THROWS_WITH(remote::AgentClient::connect_tcp(at), Catch::Contains("requires a token"));
  }
  SECTION("wrong token") {
    const remote::TcpToken wrong{remote::AccessScope::Control, random_hex(32)};
    CHECK_THROWS_WITH(remote::AgentClient::connect_tcp(at, wrong), Catch::Contains("authentication failed"));
  }
  SECTION("the observe token presented as a control token") {
    const remote::TcpToken swapped{remote::AccessScope::Control, file.observe_token};
    CHECK_THROWS_WITH(remote::AgentClient::connect_tcp(at, swapped), Catch::Contains("authentication failed"));
  }
  SECTION("observe token: an observe-scoped connection") {
    auto client = remote::AgentClient::connect_tcp(at, file.token(remote::AccessScope::Observe));
    CHECK(client.scope() == remote::AccessScope::Observe);
    CHECK_THAT(client.request("status"), Catch::Contains("\"scope\":\"observe\""));
    CHECK_THAT(client.request("subscribe"), Catch::Contains("\"session\""));
    CHECK_THAT(client.request("debug_status"), Catch::Contains("\"attached\":false"));  // watching is observing
    for (const char* method : {"pause", "step", "continue", "paused_state", "read_tensor"})
      CHECK_THROWS_WITH(client.request(method), Catch::Contains("needs control") && Catch::Contains("observe"));
    CHECK_THAT(client.request("debug_status"), Catch::Contains("\"attached\":false"));  // nothing was paused
  }
  SECTION("control token: a control-scoped connection") {
    auto client = remote::AgentClient::connect_tcp(at, file.token(remote::AccessScope::Control));
    CHECK(client.scope() == remote::AccessScope::Control);
    CHECK_THAT(client.request("status"), Catch::Contains("\"scope\":\"control\""));
    CHECK_NOTHROW(client.request("pause"));  // a backward would now stop; leaving releases it (agent.h)
    CHECK_THAT(client.request("debug_status"), Catch::Contains("\"attached\":true"));
  }
  SECTION("a proof replayed from an earlier connection is refused") {
    const std::string token = unhex(file.observe_token);
    const std::string client_nonce = std::string(32, 'n');
    std::string recorded_proof;
    {  // an honest connection, recorded
      RawConnection c(at);
      c.send(remote::FrameType::Hello, json{{"protocol", remote::kProtocolVersion}, {"client", "honest"},
                                            {"nonce", hex(client_nonce)}}.dump());
      const remote::Frame challenge = c.read();
      REQUIRE(challenge.type == remote::FrameType::Challenge);
      const json ch = json::parse(challenge.payload);
      CHECK(ch["auth"] == "hmac-sha256");
      const std::string agent_nonce = unhex(ch["nonce"].get<std::string>());
      recorded_proof = json{{"scope", "observe"}, {"mac", hex(client_mac(token, "observe", agent_nonce, client_nonce))}}.dump();
      c.send(remote::FrameType::Proof, recorded_proof);
      const remote::Frame welcome = c.read();
      REQUIRE(welcome.type == remote::FrameType::Welcome);
      CHECK(json::parse(welcome.payload)["scope"] == "observe");
    }
    // The eavesdropper replays the same Hello and Proof: the agent's nonce is new, the proof is worthless.
    RawConnection replay(at);
    replay.send(remote::FrameType::Hello, json{{"protocol", remote::kProtocolVersion}, {"client", "replay"},
                                               {"nonce", hex(client_nonce)}}.dump());
    REQUIRE(replay.read().type == remote::FrameType::Challenge);
    replay.send(remote::FrameType::Proof, recorded_proof);
    const remote::Frame answer = replay.read();
    REQUIRE(answer.type == remote::FrameType::Error);
    CHECK_THAT(answer.payload, Catch::Contains("authentication failed"));
  }
  SECTION("requests before the proof are refused") {
    RawConnection c(at);
    c.send(remote::FrameType::Hello, json{{"protocol", remote::kProtocolVersion}, {"nonce", random_hex(32)}}.dump());
    REQUIRE(c.read().type == remote::FrameType::Challenge);
    c.send(remote::FrameType::Request, json{{"id", 1}, {"method", "subscribe"}}.dump());
    const remote::Frame answer = c.read();
    REQUIRE(answer.type == remote::FrameType::Error);
    CHECK_THAT(answer.payload, Catch::Contains("Proof expected"));
  }
  SECTION("a peer that never finishes the handshake is let go") {
    RawConnection c(at);
    c.send(remote::FrameType::Hello, json{{"protocol", remote::kProtocolVersion}, {"nonce", random_hex(32)}}.dump());
    REQUIRE(c.read().type == remote::FrameType::Challenge);
    timeval tv{30, 0};  // the agent lets go after 5 s; this only bounds a broken agent
    ::setsockopt(c.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    const remote::Frame answer = c.read();
    REQUIRE(answer.type == remote::FrameType::Error);
    CHECK_THAT(answer.payload, Catch::Contains("no handshake"));
  }
  remote::stop_serving(0ms);
  CHECK_FALSE(fs::exists(file_path));  // the tokens die with the agent
}

TEST_CASE("loopback with listen_auth Token requires a token there too", "[remote][tcp]") {
  RuntimeDir dir;
  const remote::AgentManifest m =
      remote::serve({.job = "tok-lo", .listen = "0", .listen_auth = remote::TcpAuth::Token});
  REQUIRE_THAT(m.listen, Catch::StartsWith("127.0.0.1:"));
  const auto file = remote::read_connection_file(remote::connection_file_path(m));
  CHECK_THROWS_WITH(remote::AgentClient::connect_tcp(m.listen), Catch::Contains("requires a token"));
  auto client = remote::AgentClient::connect_tcp(m.listen, file.token(remote::AccessScope::Control));
  CHECK(client.scope() == remote::AccessScope::Control);
}

TEST_CASE("listening off loopback without a token is refused with the reason, leaving nothing behind",
          "[remote][tcp]") {
  RuntimeDir dir;
  CHECK_THROWS_WITH(remote::serve({.job = "open", .listen = "0.0.0.0:0", .listen_auth = remote::TcpAuth::None}),
                    Catch::Contains("without a token") && Catch::Contains("0.0.0.0"));
  CHECK_FALSE(remote::serving());
  CHECK(remote::list_manifests(dir.path).empty());
  CHECK(fs::is_empty(dir.path));
  // Loopback without a token is allowed.
  CHECK_NOTHROW(remote::serve({.job = "lo", .listen = "127.0.0.1:0", .listen_auth = remote::TcpAuth::None}));
}

TEST_CASE("bad listen addresses and connection files get clear errors", "[remote][tcp]") {
  RuntimeDir dir;
  CHECK_THROWS_WITH(remote::serve({.job = "x", .listen = "127.0.0.1:99999"}), Catch::Contains("over 65535"));
  CHECK_THROWS_WITH(remote::serve({.job = "x", .listen = "example.org:80"}), Catch::Contains("not a numeric"));
  CHECK_THROWS_WITH(remote::serve({.job = "x", .listen = "::1:80"}), Catch::Contains("brackets"));
  CHECK_THROWS_WITH(remote::AgentClient::connect_tcp("127.0.0.1:x"), Catch::Contains("not a number"));
  const fs::path bad = dir.path / "bad.connection";
  std::ofstream(bad) << R"({"job": "j", "listen": "1.2.3.4:5", "observe_token": "abc"})";
  CHECK_THROWS_WITH(remote::read_connection_file(bad), Catch::Contains("64 hex digits"));
  CHECK_THROWS_WITH(remote::parse_scope("admin"), Catch::Contains("observe or control"));
}
