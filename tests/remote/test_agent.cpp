// The agent in this process and clients over its real Unix socket: the manifest, the handshake, a live session
// mirrored by a client, refusals (strangers, other protocol versions, garbage, unknown methods), fork safety,
// and a client too slow to keep up losing the oldest records with a count instead of stalling training.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "rt/remote/agent.h"
#include "rt/remote/client.h"
#include "rt/remote/frame.h"
#include "rt/remote/manifest.h"
#include "rt/prof/session.h"
#include "rt/rt.h"
#include "runtime_dir.h"

using namespace rt;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

void matmuls(int n) {
  auto w = rt::randn({32, 32});
  for (int i = 0; i < n; ++i) (void)rt::matmul(rt::randn({32, 32}), w);
}

int64_t count_ops(const prof::SessionData& d, const std::string& name) {
  int64_t n = 0;
  for (const auto& op : d.ops)
    if (d.strings.at(op.name) == name) ++n;
  return n;
}

// CPU time (user + system) the agent's thread ("rt remote agent") has used, from /proc.
double agent_thread_cpu_seconds() {
  for (const auto& task : fs::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    if (name != "rt remote agent") continue;
    std::ifstream stat(task.path() / "stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    std::istringstream fields(text.substr(text.rfind(')') + 2));
    std::string f;
    long long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && fields >> f; ++i) {
      if (i == 14) utime = std::stoll(f);
      if (i == 15) stime = std::stoll(f);
    }
    return double(utime + stime) / double(::sysconf(_SC_CLK_TCK));
  }
  return 0;
}

// Sends raw bytes to the agent and returns the Error frame's text it answers with ("" when none).
std::string error_for_raw_bytes(const std::string& socket, const std::string& bytes) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, socket.c_str(), sizeof(a.sun_path) - 1);
  REQUIRE(::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof(a)) == 0);
  REQUIRE(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == ssize_t(bytes.size()));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  remote::FrameReader reader;
  char buf[4096];
  for (int i = 0; i < 50; ++i) {
    if (auto f = reader.next()) return f->type == remote::FrameType::Error ? f->payload : "";
    timeval tv{0, 100000};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n == 0) break;
    if (n > 0) reader.feed(buf, size_t(n));
  }
  if (auto f = reader.next()) return f->type == remote::FrameType::Error ? f->payload : "";
  return "";
}

}  // namespace

TEST_CASE("an attached client mirrors the session the agent records from attach time", "[remote][agent]") {
  RuntimeDir dir;
  const remote::AgentManifest m = remote::serve({.job = "unit-job", .rank = 3, .world_size = 4});
  CHECK(m.pid == int(::getpid()));
  CHECK(fs::exists(m.socket));
  struct stat st{};
  REQUIRE(::stat(m.socket.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  const auto listed = remote::list_manifests(dir.path);
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].job == "unit-job");
  CHECK(listed[0].rank == 3);
  CHECK(listed[0].world_size == 4);
  CHECK(remote::serve().socket == m.socket);  // one agent per process

  matmuls(5);  // before anyone attached: not recorded
  auto client = remote::AgentClient::connect(m.socket, "test_agent");
  CHECK(client.agent().job == "unit-job");
  CHECK_THAT(client.request("status"), Catch::Contains("\"rank\":3"));
  CHECK_THAT(client.request("subscribe"), Catch::Contains("\"agent_records\":true"));
  matmuls(40);
  for (int i = 0; i < 100 && count_ops(client.session(), "matmul") < 40; ++i) client.poll(50ms);
  CHECK(count_ops(client.session(), "matmul") == 40);
  CHECK(client.session().metadata.at("job_id") == "unit-job");
  CHECK(client.session().metadata.at("attached") == "agent");
  CHECK_FALSE(client.session().complete);

  matmuls(7);
  remote::stop_serving(2000ms);  // flushes, then closes
  while (client.poll(200ms) != remote::ClientEvent::Closed) {
  }
  CHECK(count_ops(client.session(), "matmul") == 47);
  CHECK(client.session().complete);
  REQUIRE_FALSE(client.notices().empty());
  CHECK_THAT(client.notices().back(), Catch::Contains("session_complete"));
  CHECK_FALSE(fs::exists(m.socket));
  CHECK(remote::list_manifests(dir.path).empty());
}

TEST_CASE("the agent refuses what it does not serve and keeps serving", "[remote][agent]") {
  RuntimeDir dir;
  const remote::AgentManifest m = remote::serve({.job = "refusals"});

  SECTION("unknown methods are refused by name; the agent never runs code") {
    auto client = remote::AgentClient::connect(m.socket);
    CHECK_THROWS_WITH(client.request("exec"), Catch::Contains("unknown method 'exec'") &&
                                                   Catch::Contains("never runs code"));
    CHECK_THAT(client.request("status"), Catch::Contains("refusals"));
  }
  SECTION("garbage gets an Error naming it") {
    CHECK_THAT(error_for_raw_bytes(m.socket, "GET / HTTP/1.1\r\n\r\n"), Catch::Contains("wrong magic"));
  }
  SECTION("another protocol version is refused with both versions named") {
    std::string hello = remote::encode_frame(remote::FrameType::Hello, R"({"protocol":1})");
    hello[4] = 9;  // header version 9
    const std::string e = error_for_raw_bytes(m.socket, hello);
    CHECK_THAT(e, Catch::Contains("version mismatch") && Catch::Contains("version 9") && Catch::Contains("version 1"));
    CHECK_THAT(error_for_raw_bytes(m.socket, remote::encode_frame(remote::FrameType::Hello, R"({"protocol":2})")),
               Catch::Contains("client speaks version 2"));
  }
  SECTION("a request before Hello is refused") {
    CHECK_THAT(error_for_raw_bytes(m.socket, remote::encode_frame(remote::FrameType::Request, R"({"id":1,"method":"status"})")),
               Catch::Contains("first frame must be Hello"));
  }
  SECTION("a connection from another user is refused even when the socket is reachable") {
    if (::geteuid() != 0) {
      WARN("not root: cannot connect as another uid, the SO_PEERCRED check is not exercised");
      return;
    }
    // Defence in depth: open the folder and socket, then connect as nobody; SO_PEERCRED still refuses.
    ::chmod(dir.path.c_str(), 0711);
    ::chmod(m.socket.c_str(), 0666);
    const pid_t child = ::fork();
    if (child == 0) {
      if (::setuid(65534) != 0) ::_exit(3);
      try {
        (void)remote::AgentClient::connect(m.socket, "stranger", 2000ms);
        ::_exit(1);
      } catch (const remote::RemoteError& e) {
        ::_exit(std::strstr(e.what(), "serves only its own user") ? 0 : 2);
      } catch (...) {
        ::_exit(4);
      }
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    ::chmod(dir.path.c_str(), 0700);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  // Whatever the refusal, the agent still serves well-behaved clients.
  auto after = remote::AgentClient::connect(m.socket);
  CHECK_THAT(after.request("status"), Catch::Contains("\"pid\""));
}

TEST_CASE("a forked child has no agent and may serve for itself", "[remote][agent][fork]") {
#if defined(__SANITIZE_ADDRESS__)
  // GCC 12's AddressSanitizer does not lock its allocator around fork(): a child forked while the agent thread
  // allocates can wait forever on that lock (seen once in CI). The release and TSan trees run this test.
  WARN("skipped under AddressSanitizer: its allocator is not fork-safe with other threads running");
  return;
#endif
  RuntimeDir dir;
  const remote::AgentManifest m = remote::serve({.job = "forks"});
  auto client = remote::AgentClient::connect(m.socket);
  client.request("subscribe");
  const pid_t child = ::fork();
  if (child == 0) {
    int code = 0;
    if (remote::serving().has_value()) code = 1;
    matmuls(3);  // the child trains on: no agent thread to serve it, nothing blocks
#if !defined(__SANITIZE_THREAD__)  // ThreadSanitizer refuses new threads after a multi-threaded fork
    const remote::AgentManifest mine = remote::serve({.job = "forks"});
    if (mine.pid != int(::getpid()) || mine.socket == m.socket) code = 2;
    remote::stop_serving(0ms);
#endif
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  // The parent's agent and files are untouched.
  CHECK(fs::exists(m.socket));
  matmuls(4);
  for (int i = 0; i < 100 && count_ops(client.session(), "matmul") < 4; ++i) client.poll(50ms);
  CHECK(count_ops(client.session(), "matmul") == 4);  // the child's ops are not the parent's
  CHECK(remote::list_manifests(dir.path).size() == 1);
}

TEST_CASE("a client that does not read loses the oldest records, counted, and training goes on", "[remote][agent]") {
  RuntimeDir dir;
  const remote::AgentManifest m =
      remote::serve({.job = "slow", .buffer_bytes = 256 << 10, .batch_interval = 10ms});
  auto client = remote::AgentClient::connect(m.socket);
  client.request("subscribe");
  // Nobody reads while the process records far more than the socket buffer and the queue hold.
  const auto begin = std::chrono::steady_clock::now();
  matmuls(60000);
  const auto took = std::chrono::steady_clock::now() - begin;
  CHECK(took < 60s);  // not a timing assertion: a stalled agent would block forever
  std::this_thread::sleep_for(200ms);
  int64_t seen = 0;
  for (int i = 0; i < 400; ++i) {
    client.poll(20ms);
    if (client.dropped_by_agent() > 0 && count_ops(client.session(), "matmul") == seen) break;
    seen = count_ops(client.session(), "matmul");
  }
  CHECK(client.dropped_by_agent() > 0);
  CHECK(count_ops(client.session(), "matmul") < 60000);
  // The mirror stayed consistent: later records still arrive and append.
  const int64_t before = count_ops(client.session(), "matmul");
  matmuls(10);
  // The backlog of stripped batches comes first: read until the new records arrive (bounded, not timed).
  for (int i = 0; i < 20000 && count_ops(client.session(), "matmul") < before + 10; ++i) client.poll(10ms);
  CHECK(count_ops(client.session(), "matmul") >= before + 10);
}

TEST_CASE("runtime folders that others could open are refused", "[remote][manifest]") {
  RuntimeDir dir;
  ::chmod(dir.path.c_str(), 0755);
  CHECK_THROWS_WITH(remote::ensure_runtime_dir(), Catch::Contains("must be 0700"));
  ::chmod(dir.path.c_str(), 0700);
  CHECK(remote::ensure_runtime_dir() == dir.path);
  // A manifest whose process is gone is pruned with its socket.
  remote::AgentManifest stale;
  stale.job = "gone";
  stale.pid = 0x3ffffff0;  // beyond pid_max
  stale.socket = (dir.path / "gone.r0.1.sock").string();
  std::ofstream(stale.socket) << "";
  remote::write_manifest(dir.path / "gone.r0.1.json", stale);
  std::ofstream(dir.path / "notes.json") << "{not json";
  CHECK(remote::list_manifests(dir.path).empty());
  CHECK_FALSE(fs::exists(dir.path / "gone.r0.1.json"));
  CHECK_FALSE(fs::exists(stale.socket));
  CHECK(fs::exists(dir.path / "notes.json"));  // not a manifest: left alone
}

TEST_CASE("a program's own profile starts while attached, and subscribers follow it", "[remote][agent]") {
  RuntimeDir dir;
  const remote::AgentManifest m = remote::serve({.job = "follow"});
  auto client = remote::AgentClient::connect(m.socket);
  CHECK_THAT(client.request("subscribe"), Catch::Contains("\"agent_records\":true"));
  matmuls(3);
  for (int i = 0; i < 100 && count_ops(client.session(), "matmul") < 3; ++i) client.poll(50ms);
  REQUIRE(count_ops(client.session(), "matmul") == 3);
  const uint64_t resets_before = client.resets();

  prof::SessionOptions o;
  o.name = "program profile";
  o.cupti = prof::CuptiMode::Off;
  prof::Session mine(o);
  mine.start();  // the agent's session gives way instead of making this throw
  matmuls(5);
  mine.stop();
  for (int i = 0; i < 200 && !(client.resets() > resets_before && client.session().name == "program profile" &&
                                client.session().complete);
       ++i)
    client.poll(50ms);
  CHECK(client.session().name == "program profile");
  CHECK(client.session().complete);
  CHECK(count_ops(client.session(), "matmul") == 5);
  bool agent_session_completed = false;
  for (const auto& n : client.notices()) agent_session_completed |= n.find("session_complete") != std::string::npos;
  CHECK(agent_session_completed);
  CHECK(mine.data().ops.size() == client.session().ops.size());
  // The agent was woken to give way; it must go back to sleeping in poll, not spin on the wake-up pipe.
  const double before_s = agent_thread_cpu_seconds();
  std::this_thread::sleep_for(1s);
  CHECK(agent_thread_cpu_seconds() - before_s < 0.2);
}
