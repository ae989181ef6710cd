// The stores of rt/dist/store.h: every contract on every store (HashStore, FileStore, TCPStore,
// PrefixStore), timeouts that name what they waited for, TCPStore's connection handling, several
// processes meeting through TCPStore and FileStore, and the server's refusal of malformed input.
// No timing assertions: timeouts here only bound a test that would otherwise hang.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <thread>

#include "rt/dist/store.h"
#include "store/tcp_socket.h"
#include "store/tcp_store_protocol.h"

namespace fs = std::filesystem;
using namespace rt::dist;
using namespace std::chrono_literals;
using rt::dist::detail::Op;
using rt::dist::detail::ParseStatus;

namespace {

Bytes bytes(std::string_view s) { return Bytes(s.begin(), s.end()); }
std::string text(const Bytes& b) { return std::string(b.begin(), b.end()); }

fs::path temp_path(const std::string& name) {
  static std::atomic<int> counter{0};
  return fs::temp_directory_path() /
         ("rt_test_store_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" + name);
}

// A store under test, and what its messages must name.
struct StoreCase {
  std::string kind;
  std::shared_ptr<Store> store;
  std::vector<std::string> names;  // substrings every timeout message must contain
  fs::path file;                   // FileStore's file, removed afterwards
  ~StoreCase() {
    store.reset();
    if (!file.empty()) fs::remove(file);
  }
};

std::unique_ptr<StoreCase> make_store(const std::string& kind) {
  auto c = std::make_unique<StoreCase>();
  c->kind = kind;
  if (kind == "HashStore") {
    c->store = std::make_shared<HashStore>();
    c->names = {"HashStore"};
  } else if (kind == "FileStore") {
    c->file = temp_path("file");
    c->store = std::make_shared<FileStore>(c->file.string(), -1);
    c->names = {"FileStore", c->file.string()};
  } else if (kind == "TCPStore") {
    auto t = std::make_shared<TCPStore>("127.0.0.1", TCPStoreOptions{0, true, 1, true, 10s});
    c->names = {"TCPStore", "127.0.0.1:" + std::to_string(t->port())};
    c->store = t;
  } else {
    c->store = std::make_shared<PrefixStore>("group1", std::make_shared<HashStore>());
    c->names = {"HashStore", "group1/"};
  }
  return c;
}

template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const DistStoreError& e) {
    return e.what();
  }
  FAIL("expected DistStoreError");
  return {};
}

}  // namespace

TEST_CASE("every store: set, get, check, delete_key, num_keys") {
  auto kind = GENERATE(as<std::string>{}, "HashStore", "FileStore", "TCPStore", "PrefixStore");
  auto c = make_store(kind);
  Store& s = *c->store;
  INFO(kind);
  CHECK(s.num_keys() == 0);
  CHECK_FALSE(s.check({"a"}));
  s.set("a", "1");
  s.set("b", bytes(std::string("\0\xff\x01", 3)));
  s.set("empty", Bytes{});
  CHECK(s.get_string("a") == "1");
  CHECK(s.get("b") == bytes(std::string("\0\xff\x01", 3)));
  CHECK(s.get("empty").empty());
  CHECK(s.check({"a", "b", "empty"}));
  CHECK_FALSE(s.check({"a", "missing"}));
  CHECK(s.num_keys() == 3);
  s.set("a", "overwritten");
  CHECK(s.get_string("a") == "overwritten");
  CHECK(s.num_keys() == 3);
  CHECK(s.delete_key("a"));
  CHECK_FALSE(s.delete_key("a"));
  CHECK_FALSE(s.check({"a"}));
  CHECK(s.num_keys() == 2);
  s.wait({"b", "empty"});  // present: returns at once
  std::string big(1 << 20, 'x');
  s.set("big", big);
  CHECK(s.get_string("big") == big);
}

TEST_CASE("every store: add counts from zero, stores digits, refuses non-numbers") {
  auto kind = GENERATE(as<std::string>{}, "HashStore", "FileStore", "TCPStore", "PrefixStore");
  auto c = make_store(kind);
  Store& s = *c->store;
  INFO(kind);
  CHECK(s.add("n", 5) == 5);
  CHECK(s.add("n", -7) == -2);
  CHECK(s.add("n", 0) == -2);
  CHECK(s.get_string("n") == "-2");
  s.set("m", "41");
  CHECK(s.add("m", 1) == 42);
  s.set("word", "abc");
  std::string msg = message_of([&] { s.add("word", 1); });
  CHECK_THAT(msg, Catch::Contains("word'") && Catch::Contains("'abc'") && Catch::Contains("not a decimal integer"));
  CHECK(s.get_string("word") == "abc");  // unchanged
  s.set("big", std::to_string(INT64_MAX));
  CHECK_THAT(message_of([&] { s.add("big", 1); }), Catch::Contains("overflow"));
}

TEST_CASE("every store: compare_set") {
  auto kind = GENERATE(as<std::string>{}, "HashStore", "FileStore", "TCPStore", "PrefixStore");
  auto c = make_store(kind);
  Store& s = *c->store;
  INFO(kind);
  // Missing key, non-empty expected: nothing is created, expected comes back.
  CHECK(text(s.compare_set("k", bytes("x"), bytes("y"))) == "x");
  CHECK_FALSE(s.check({"k"}));
  // Missing key, empty expected: created.
  CHECK(text(s.compare_set("k", {}, bytes("first"))) == "first");
  CHECK(s.get_string("k") == "first");
  // Present, matching: swapped.
  CHECK(text(s.compare_set("k", bytes("first"), bytes("second"))) == "second");
  CHECK(s.get_string("k") == "second");
  // Present, not matching: the current value comes back, unchanged.
  CHECK(text(s.compare_set("k", bytes("first"), bytes("third"))) == "second");
  CHECK(s.get_string("k") == "second");
  // Present, empty expected does not match a non-empty value.
  CHECK(text(s.compare_set("k", {}, bytes("fourth"))) == "second");
}

TEST_CASE("every store: get and wait time out naming the store, the keys and the timeout") {
  auto kind = GENERATE(as<std::string>{}, "HashStore", "FileStore", "TCPStore", "PrefixStore");
  auto c = make_store(kind);
  Store& s = *c->store;
  INFO(kind);
  s.set_timeout(200ms);
  std::string msg = message_of([&] { s.get("absent"); });
  CHECK_THAT(msg, Catch::Contains("'") && Catch::Contains("absent'") && Catch::Contains("200 ms"));
  for (const auto& n : c->names) CHECK_THAT(msg, Catch::Contains(n));
  s.set("here", "1");
  msg = message_of([&] { s.wait({"here", "late1", "late2"}, 150ms); });
  CHECK_THAT(msg, Catch::Contains("late1'") && Catch::Contains("late2'") && Catch::Contains("150 ms"));
  for (const auto& n : c->names) CHECK_THAT(msg, Catch::Contains(n));
  // The store stays usable after a timeout.
  s.set("after", "ok");
  CHECK(s.get_string("after") == "ok");
  CHECK_THROWS_AS(s.wait({"x"}, Milliseconds(-1)), DistStoreError);
}

TEST_CASE("every store: wait and get return once another thread sets the keys") {
  auto kind = GENERATE(as<std::string>{}, "HashStore", "FileStore", "TCPStore", "PrefixStore");
  auto c = make_store(kind);
  Store& s = *c->store;
  INFO(kind);
  s.set_timeout(30s);
  std::thread writer([&] {
    std::this_thread::sleep_for(50ms);
    s.set("x", "1");
    s.set("y", "2");
  });
  s.wait({"x", "y"});
  CHECK(s.get_string("y") == "2");
  writer.join();
}

TEST_CASE("every store: keys must be non-empty and at most 64 KiB") {
  auto kind = GENERATE(as<std::string>{}, "HashStore", "FileStore", "TCPStore", "PrefixStore");
  auto c = make_store(kind);
  Store& s = *c->store;
  INFO(kind);
  CHECK_THROWS_WITH(s.set("", "v"), Catch::Contains("empty"));
  std::string huge(64 * 1024 + 1, 'k');
  CHECK_THROWS_WITH(s.set(huge, "v"), Catch::Contains("64 KiB"));
  CHECK_THROWS_AS(s.add(huge, 1), DistStoreError);
  std::string largest(64 * 1024 - 16, 'k');  // leaves room for PrefixStore's prefix
  s.set(largest, "v");
  CHECK(s.get_string(largest) == "v");
}

TEST_CASE("every store: many threads adding concurrently give the exact count") {
  auto kind = GENERATE(as<std::string>{}, "HashStore", "FileStore", "TCPStore", "PrefixStore");
  auto c = make_store(kind);
  Store& s = *c->store;
  INFO(kind);
  constexpr int kThreads = 8, kAdds = 200;
  std::vector<std::thread> threads;
  std::atomic<int64_t> max_seen{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kAdds; ++i) {
        int64_t v = s.add("counter", 1);
        int64_t m = max_seen.load();
        while (v > m && !max_seen.compare_exchange_weak(m, v)) {
        }
      }
    });
  for (auto& t : threads) t.join();
  CHECK(s.get_string("counter") == std::to_string(kThreads * kAdds));
  CHECK(max_seen.load() == kThreads * kAdds);
}

TEST_CASE("PrefixStore puts its keys under prefix/ in the base store") {
  auto base = std::make_shared<HashStore>();
  PrefixStore a("a", base), b("b", base);
  a.set("k", "from a");
  b.set("k", "from b");
  CHECK(base->get_string("a/k") == "from a");
  CHECK(base->get_string("b/k") == "from b");
  CHECK(a.num_keys() == 2);  // the base's count, as PyTorch's
  CHECK(a.delete_key("k"));
  CHECK(b.check({"k"}));
  CHECK_THAT(a.describe(), Catch::Contains("'a'") && Catch::Contains("HashStore"));
  CHECK_THROWS_AS(PrefixStore("p", nullptr), rt::ValueError);
}

TEST_CASE("TCPStore: port 0 picks a free port that other clients reach") {
  TCPStore master("127.0.0.1", TCPStoreOptions{0, true, -1, true, 10s});
  REQUIRE(master.port() != 0);
  TCPStore client("127.0.0.1", master.port(), -1, false, 10s);
  client.set("hello", "world");
  CHECK(master.get_string("hello") == "world");
  CHECK(client.describe() == "TCPStore at 127.0.0.1:" + std::to_string(master.port()));
  CHECK_THROWS_AS(TCPStore("127.0.0.1", 0, -1, false, 1s), rt::ValueError);
}

TEST_CASE("TCPStore: the default port is 29500") {
  TCPStoreOptions o;
  CHECK(o.port == 29500);
  CHECK(o.timeout == std::chrono::seconds(300));
}

TEST_CASE("TCPStore: localhost and IPv6 host names") {
  TCPStore master("localhost", TCPStoreOptions{0, true, -1, true, 10s});
  master.set("k", "v");
  CHECK(master.get_string("k") == "v");
  std::string error;
  rt::dist::detail::Socket probe = rt::dist::detail::connect_once("::1", master.port(), std::nullopt, &error);
  if (!probe.valid()) {
    WARN("IPv6 loopback unavailable here (" << error << "): the ::1 client is not tested");
    return;
  }
  TCPStore v6("::1", master.port(), -1, false, 10s);
  CHECK(v6.get_string("k") == "v");
  CHECK_THAT(v6.describe(), Catch::Contains("[::1]:"));
}

TEST_CASE("TCPStore: a client started before the server retries until it is up") {
  uint16_t port = 0;
  {
    TCPStore probe("127.0.0.1", TCPStoreOptions{0, true, -1, true, 10s});
    port = probe.port();
  }
  std::string got;
  std::thread client([&] {
    TCPStore c("127.0.0.1", port, -1, false, 30s);
    got = c.get_string("from-master");
  });
  std::this_thread::sleep_for(300ms);  // the client is already retrying
  TCPStore master("127.0.0.1", TCPStoreOptions{port, true, -1, true, 30s});
  master.set("from-master", "hi");
  client.join();
  CHECK(got == "hi");
}

TEST_CASE("TCPStore: connecting times out naming host, port and timeout") {
  uint16_t port = 0;
  {
    TCPStore probe("127.0.0.1", TCPStoreOptions{0, true, -1, true, 10s});
    port = probe.port();
  }
  try {
    TCPStore("127.0.0.1", port, -1, false, 300ms);
    FAIL("connected to a closed port");
  } catch (const DistNetworkError& e) {
    std::string msg = e.what();
    CHECK_THAT(msg, Catch::Contains("127.0.0.1:" + std::to_string(port)) && Catch::Contains("300 ms") &&
                        Catch::Contains("Hint"));
  }
  CHECK_THROWS_AS(TCPStore("no-such-host.invalid", 1234, -1, false, 200ms), DistNetworkError);
}

TEST_CASE("TCPStore: the master waits for world_size stores") {
  SECTION("they do not come") {
    try {
      TCPStore("127.0.0.1", TCPStoreOptions{0, true, 3, true, 200ms});
      FAIL("the master did not wait for its workers");
    } catch (const DistStoreError& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains("3 ranks") && Catch::Contains("200 ms"));
    }
  }
  SECTION("world_size 2 with one worker") {
    uint16_t port = 0;
    {
      TCPStore p("127.0.0.1", TCPStoreOptions{0, true, -1, true, 10s});
      port = p.port();
    }
    std::thread worker([&] { TCPStore w("127.0.0.1", port, 2, false, 30s); w.wait({"done"}); });
    TCPStore master("127.0.0.1", TCPStoreOptions{port, true, 2, true, 30s});  // returns once the worker joined
    master.set("done", "1");
    worker.join();
    CHECK(master.num_keys() == 1);  // joining does not add keys
  }
}

TEST_CASE("TCPStore: a port in use is reported with the port and a fix") {
  TCPStore first("127.0.0.1", TCPStoreOptions{0, true, -1, true, 10s});
  try {
    TCPStore("127.0.0.1", TCPStoreOptions{first.port(), true, -1, true, 1s});
    FAIL("two masters on one port");
  } catch (const DistNetworkError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("127.0.0.1:" + std::to_string(first.port())) &&
                                          Catch::Contains("0 to pick a free one"));
  }
}

// ---- several processes --------------------------------------------------------------------------

namespace {

// Runs `rank_body(rank)` in `n` forked children; returns how many exited with status 0.
int run_ranks(int n, const std::function<bool(int)>& rank_body) {
  std::vector<pid_t> pids;
  for (int r = 0; r < n; ++r) {
    pid_t pid = ::fork();
    if (pid == 0) {
      bool ok = false;
      try {
        ok = rank_body(r);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: %s\n", r, e.what());
      }
      ::_exit(ok ? 0 : 1);
    }
    pids.push_back(pid);
  }
  int passed = 0;
  for (pid_t p : pids) {
    int status = 0;
    ::waitpid(p, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) ++passed;
  }
  return passed;
}

bool rendezvous(Store& s, int rank, int world) {
  s.set("addr/" + std::to_string(rank), "host" + std::to_string(rank));
  s.add("arrived", 1);
  std::vector<std::string> keys;
  for (int r = 0; r < world; ++r) keys.push_back("addr/" + std::to_string(r));
  s.wait(keys);
  for (int r = 0; r < world; ++r)
    if (s.get_string("addr/" + std::to_string(r)) != "host" + std::to_string(r)) return false;
  // A barrier on the counter, so every rank sees the total.
  int64_t after = s.add("leaving", 1);
  if (after == world) s.set("all-left", "1");
  s.wait({"all-left"});
  return s.get_string("arrived") == std::to_string(world);
}

}  // namespace

TEST_CASE("4 processes rendezvous through TCPStore") {
  uint16_t port = 0;
  {
    TCPStore probe("127.0.0.1", TCPStoreOptions{0, true, -1, true, 10s});
    port = probe.port();
  }
  constexpr int kWorld = 4;
  int passed = run_ranks(kWorld, [&](int rank) {
    TCPStore s("127.0.0.1", TCPStoreOptions{port, rank == 0, kWorld, true, 60s});
    bool ok = rendezvous(s, rank, kWorld);
    // Rank 0 hosts the server: it leaves last so the others can finish their reads.
    if (rank == 0) s.wait({"done/1", "done/2", "done/3"});
    else s.set("done/" + std::to_string(rank), "1");
    return ok;
  });
  CHECK(passed == kWorld);
}

TEST_CASE("4 processes rendezvous through FileStore, and the last to close removes the file") {
  fs::path file = temp_path("rdzv");
  constexpr int kWorld = 4;
  int passed = run_ranks(kWorld, [&](int rank) {
    FileStore s(file.string(), kWorld);
    s.set_timeout(60s);
    return rendezvous(s, rank, kWorld);
  });
  CHECK(passed == kWorld);
  CHECK_FALSE(fs::exists(file));
}

// ---- FileStore's file -----------------------------------------------------------------------------

TEST_CASE("FileStore: world_size -1 keeps the file, a reopened store sees the keys") {
  fs::path file = temp_path("keep");
  {
    FileStore a(file.string(), -1);
    a.set("k", "v");
    a.add("n", 3);
    a.delete_key("k");
  }
  REQUIRE(fs::exists(file));
  {
    FileStore b(file.string(), -1);
    CHECK_FALSE(b.check({"k"}));
    CHECK(b.get_string("n") == "3");
    CHECK(b.num_keys() == 1);
    CHECK(b.path() == file.string());
  }
  fs::remove(file);
}

TEST_CASE("FileStore: two stores in one process share the file, the second to close removes it") {
  fs::path file = temp_path("two");
  auto a = std::make_unique<FileStore>(file.string(), 2);
  auto b = std::make_unique<FileStore>(file.string(), 2);
  a->set("k", "from a");
  CHECK(b->get_string("k") == "from a");
  a.reset();
  CHECK(fs::exists(file));
  b.reset();
  CHECK_FALSE(fs::exists(file));
}

TEST_CASE("FileStore: a corrupt or truncated file is reported with the path and the offset") {
  fs::path file = temp_path("corrupt");
  SECTION("not a FileStore") {
    std::ofstream(file) << "hello, this is a text file";
    try {
      FileStore s(file.string(), -1);
      FAIL("opened a text file");
    } catch (const DistStoreError& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains(file.string()) && Catch::Contains("offset 0"));
    }
  }
  SECTION("a record cut short") {
    {
      FileStore s(file.string(), -1);
      s.set("a", "1");
      s.set("b", "22222222");
    }
    // Drop the leave record and the last 3 bytes of b's value. The magic is 8 bytes and a's record 15
    // (kind 1, key length 4, key 1, value length 8, value 1), so b's record starts at offset 23.
    fs::resize_file(file, fs::file_size(file) - 4);
    try {
      FileStore s(file.string(), -1);
      FAIL("opened a truncated file");
    } catch (const DistStoreError& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains(file.string()) && Catch::Contains("offset 23") &&
                                            Catch::Contains("Hint"));
    }
  }
  SECTION("an unknown record kind") {
    {
      FileStore s(file.string(), -1);
      s.set("a", "1");
    }
    std::ofstream(file, std::ios::app | std::ios::binary) << '\x7f';
    CHECK_THROWS_WITH(FileStore(file.string(), -1), Catch::Contains("unknown record kind 127"));
  }
  fs::remove(file);
}

// ---- the server against untrusted input -----------------------------------------------------------

namespace {

int raw_connect(uint16_t port) {
  std::string error;
  rt::dist::detail::Socket s = rt::dist::detail::connect_once("127.0.0.1", port, std::nullopt, &error);
  REQUIRE(s.valid());
  return s.release();
}

// True when the server closes the connection (EOF) within 10 s after we send `bytes`.
bool server_closes_after(uint16_t port, const std::string& bytes) {
  int fd = raw_connect(port);
  ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  char buf[256];
  bool closed = false;
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) {
      closed = true;
      break;
    }
    if (n < 0) break;  // timed out: still open
  }
  ::close(fd);
  return closed;
}

std::string le32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[size_t(i)] = char(v >> (8 * i));
  return s;
}

}  // namespace

TEST_CASE("TCPStore server: refuses garbage, wrong magic, bad frames, and keeps serving") {
  TCPStore master("127.0.0.1", TCPStoreOptions{0, true, -1, true, 10s});
  uint16_t port = master.port();
  std::string hello = rt::dist::detail::encode_handshake();
  std::string wrong_version = hello;
  wrong_version[6] = 9;
  CHECK(server_closes_after(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  CHECK(server_closes_after(port, "XXSTOR\x01\x00"));
  CHECK(server_closes_after(port, wrong_version));
  CHECK(server_closes_after(port, hello + le32(0)));                                   // empty frame
  CHECK(server_closes_after(port, hello + le32(0xffffffffu) + "\x01"));                // oversized length
  CHECK(server_closes_after(port, hello + le32(2) + std::string("\x63\x00", 2)));       // unknown op
  CHECK(server_closes_after(port, hello + le32(6) + std::string("\x01\x05\0\0\0k", 6)));  // key cut short
  // Truncated frames, then the client hangs up: the server drops them quietly.
  for (const std::string& cut : {hello.substr(0, 5), hello + le32(100) + "\x01", hello + le32(7)}) {
    int fd = raw_connect(port);
    ::send(fd, cut.data(), cut.size(), MSG_NOSIGNAL);
    ::close(fd);
  }
  // A key over 64 KiB inside an otherwise well-formed frame.
  rt::dist::detail::Request big;
  big.op = Op::DeleteKey;
  big.keys = {std::string(64 * 1024 + 1, 'k')};
  CHECK(server_closes_after(port, hello + rt::dist::detail::encode_request(big)));
  // Bytes sent while a request is parked (one request at a time).
  rt::dist::detail::Request w;
  w.op = Op::Wait;
  w.keys = {"never"};
  std::string wire = rt::dist::detail::encode_request(w);
  CHECK(server_closes_after(port, hello + wire + wire));
  // Meanwhile, a normal client is served.
  TCPStore client("127.0.0.1", port, -1, false, 10s);
  client.set("still", "alive");
  CHECK(master.get_string("still") == "alive");
  CHECK(master.num_keys() == 1);
}

TEST_CASE("TCPStore client: a peer that is not a TCPStore fails the handshake") {
  rt::dist::detail::Socket listener;
  uint16_t port = 0;
  std::string error;
  listener = rt::dist::detail::listen_any(0, &port, &error);
  REQUIRE(listener.valid());
  std::thread fake([&] {
    pollfd p{listener.fd(), POLLIN, 0};
    ::poll(&p, 1, 10000);
    int fd = ::accept(listener.fd(), nullptr, nullptr);
    if (fd < 0) return;
    const char reply[] = "SSH-2.0-OpenSSH\r\n";
    ::send(fd, reply, sizeof(reply) - 1, MSG_NOSIGNAL);
    char buf[64];
    ::recv(fd, buf, sizeof(buf), 0);
    ::close(fd);
  });
  try {
    TCPStore("127.0.0.1", port, -1, false, 5s);
    FAIL("accepted a peer that is not a TCPStore");
  } catch (const DistNetworkError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("handshake") && Catch::Contains(std::to_string(port)));
  }
  fake.join();
}

// ---- the request parser, fed random and mutated frames ---------------------------------------------

namespace {

rt::dist::detail::Request random_request(std::mt19937_64& rng) {
  rt::dist::detail::Request r;
  r.op = Op(1 + rng() % 10);
  auto str = [&](size_t max, size_t min) {
    std::string s(min + rng() % (max - min + 1), '\0');
    for (auto& ch : s) ch = char(rng());
    return s;
  };
  auto val = [&] {
    std::string s = str(40, 0);
    return Bytes(s.begin(), s.end());
  };
  switch (r.op) {
    case Op::Check:
    case Op::Wait:
      for (size_t i = 0, n = 1 + rng() % 4; i < n; ++i) r.keys.push_back(str(20, 1));
      break;
    case Op::NumKeys:
    case Op::Join:
    case Op::WaitJoined: break;
    default: r.keys = {str(20, 1)};
  }
  r.value = val();
  r.desired = val();
  r.number = int64_t(rng());
  r.timeout_ms = rng() % 100000;
  if (r.op != Op::Set && r.op != Op::CompareSet) r.value.clear();
  if (r.op != Op::CompareSet) r.desired.clear();
  if (r.op != Op::Add && r.op != Op::WaitJoined) r.number = 0;
  if (r.op != Op::Get && r.op != Op::Wait && r.op != Op::WaitJoined) r.timeout_ms = 0;
  return r;
}

}  // namespace

TEST_CASE("TCPStore parser: 10k random and mutated frames only ever give Ok, NeedMore or Refuse") {
  std::mt19937_64 rng(20260101);
  int ok = 0, need_more = 0, refused = 0;
  for (int i = 0; i < 10000; ++i) {
    rt::dist::detail::Request original = random_request(rng);
    std::string frame = rt::dist::detail::encode_request(original);
    // Unmutated: parses back to the same frame.
    auto clean = rt::dist::detail::parse_request(reinterpret_cast<const uint8_t*>(frame.data()), frame.size());
    REQUIRE(clean.status == ParseStatus::Ok);
    REQUIRE(clean.consumed == frame.size());
    REQUIRE(rt::dist::detail::encode_request(clean.request) == frame);
    switch (rng() % 5) {
      case 0: frame[rng() % frame.size()] = char(rng()); break;           // flip a byte
      case 1: frame.resize(rng() % frame.size()); break;                   // truncate
      case 2: frame += std::string(1 + rng() % 8, char(rng())); break;     // trailing bytes (next frame)
      case 3: {                                                            // a lying length
        uint32_t len = uint32_t(rng());
        std::memcpy(frame.data(), &len, 4);
        break;
      }
      default:                                                             // pure noise
        frame.resize(rng() % 64);
        for (auto& ch : frame) ch = char(rng());
    }
    auto p = rt::dist::detail::parse_request(reinterpret_cast<const uint8_t*>(frame.data()), frame.size());
    switch (p.status) {
      case ParseStatus::Ok:
        ++ok;
        REQUIRE(p.consumed <= frame.size());
        REQUIRE(rt::dist::detail::encode_request(p.request) == frame.substr(0, p.consumed));
        break;
      case ParseStatus::NeedMore:
        ++need_more;
        REQUIRE(p.consumed == 0);
        break;
      case ParseStatus::Refuse:
        ++refused;
        REQUIRE_FALSE(p.why.empty());
        break;
    }
  }
  INFO("ok " << ok << ", need more " << need_more << ", refused " << refused);
  CHECK(ok > 0);
  CHECK(need_more > 0);
  CHECK(refused > 0);
}

TEST_CASE("TCPStore parser: handshake") {
  std::string hello = rt::dist::detail::encode_handshake();
  auto parse = [](const std::string& s) {
    return rt::dist::detail::parse_handshake(reinterpret_cast<const uint8_t*>(s.data()), s.size(), nullptr);
  };
  CHECK(parse(hello) == ParseStatus::Ok);
  CHECK(parse(hello.substr(0, 3)) == ParseStatus::NeedMore);
  CHECK(parse("RX") == ParseStatus::Refuse);
  std::string v2 = hello;
  v2[6] = 2;
  CHECK(parse(v2) == ParseStatus::Refuse);
}
