// rt/dist/store.h — key-value stores for rendezvous and a side channel between ranks (PyTorch's c10d
// stores: TCPStore, FileStore, HashStore, PrefixStore, with the same semantics).
//
//   // rank 0 hosts the server (port 0 picks a free port: read it back with port()); every rank connects.
//   auto store = std::make_shared<rt::dist::TCPStore>("127.0.0.1", 29500, /*world_size=*/2,
//                                                     /*is_master=*/rank == 0);
//   store->set("addr/0", "10.0.0.1:4040");
//   std::string peer = store->get_string("addr/1");   // blocks until rank 1 sets it, up to timeout()
//   int64_t arrived = store->add("arrived", 1);       // atomic counter: 1, then 2, ...
//   store->wait({"ready"}, std::chrono::seconds(5));  // throws DistStoreError naming the key after 5 s
//
//   rt::dist::PrefixStore group_store("group1", store);   // keys land in `store` as "group1/<key>"
//
// Contracts (every store):
// - get and wait block until every key exists or the timeout (default 300 s, set_timeout) passes, then
//   throw DistStoreError naming the store (its address or file), the key(s) and the timeout. A timeout
//   of zero waits forever (PyTorch's kNoTimeout); a negative one is refused with DistStoreError.
// - add treats a missing key as 0 and stores the result as decimal text, so get() of a counter returns
//   its digits; add on a key holding anything else throws DistStoreError.
// - compare_set(key, expected, desired): stores desired when the key's value equals expected, or when
//   the key is missing and expected is empty; returns the value the key holds afterwards (desired when it
//   swapped, the current value otherwise; expected when the key is missing and was not created).
// - delete_key returns whether the key existed; num_keys counts the keys set (torch's TCPStore also
//   counts a key of its own; ours counts only what clients set).
// - Values are bytes; keys are non-empty strings of at most 64 KiB, values at most 1 GiB: anything
//   larger is refused with DistStoreError before it is sent.
// - A store is safe to use from several threads of one process at once; a thread blocked in get or
//   wait does not hold up the others (TCPStore gives each concurrent call its own connection).
// - Connecting (TCPStore) fails with DistNetworkError naming host:port and the timeout.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rt/dist/errors.h"
#include "rt/export.h"

RT_API_BEGIN

namespace rt::dist {

using Bytes = std::vector<uint8_t>;
using Milliseconds = std::chrono::milliseconds;

inline constexpr Milliseconds kDefaultStoreTimeout = std::chrono::seconds(300);
inline constexpr uint16_t kDefaultStorePort = 29500;

class Store {
 public:
  virtual ~Store() = default;

  virtual void set(const std::string& key, const Bytes& value) = 0;
  virtual Bytes get(const std::string& key) = 0;
  virtual int64_t add(const std::string& key, int64_t delta) = 0;
  virtual Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) = 0;
  virtual bool check(const std::vector<std::string>& keys) = 0;
  virtual void wait(const std::vector<std::string>& keys, Milliseconds timeout) = 0;
  virtual bool delete_key(const std::string& key) = 0;
  virtual int64_t num_keys() = 0;
  // Where the store lives, for messages: "TCPStore at 10.0.0.1:29500", "FileStore at /tmp/rdzv".
  virtual std::string describe() const = 0;

  void wait(const std::vector<std::string>& keys) { wait(keys, timeout()); }
  void set(const std::string& key, std::string_view value) { set(key, Bytes(value.begin(), value.end())); }
  std::string get_string(const std::string& key) {
    Bytes b = get(key);
    return std::string(b.begin(), b.end());
  }

  Milliseconds timeout() const { return timeout_; }
  void set_timeout(Milliseconds t) { timeout_ = t; }

 protected:
  Milliseconds timeout_ = kDefaultStoreTimeout;
};

// In-process store (one process, several threads; the tests' and a world size 1 job's store).
class HashStore : public Store {
 public:
  HashStore();
  ~HashStore() override;
  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, Milliseconds timeout) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  std::string describe() const override { return "HashStore"; }
  using Store::set;
  using Store::wait;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A store in a file that every rank can open (a shared file system: init_method="file://..."). Writes
// append records under an advisory lock (flock); readers replay what was appended since their last read.
// The last of world_size ranks to destroy its FileStore removes the file (PyTorch's rule), so a reused
// path starts empty; world_size -1 leaves the file in place.
class FileStore : public Store {
 public:
  FileStore(std::string path, int world_size);
  ~FileStore() override;
  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, Milliseconds timeout) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  std::string describe() const override;
  const std::string& path() const;
  using Store::set;
  using Store::wait;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

struct TCPStoreOptions {
  uint16_t port = kDefaultStorePort;  // 0 with is_master: the server picks a free port (see port())
  bool is_master = false;             // this process runs the server (in a thread of its own)
  int world_size = -1;                // with wait_for_workers: the master waits for that many clients
  bool wait_for_workers = true;
  Milliseconds timeout = kDefaultStoreTimeout;  // connecting, and the default for get/wait
};

// A store served over TCP by one process (the launcher or rank 0); every rank is a client, the
// master's own process included. Connecting retries until the timeout, so clients may start first.
// The wire protocol is documented in docs/distributed.md; the server refuses malformed requests and
// oversized keys or values by closing that connection, and keeps serving the others.
class TCPStore : public Store {
 public:
  TCPStore(std::string host, const TCPStoreOptions& options);
  TCPStore(std::string host, uint16_t port, int world_size, bool is_master,
           Milliseconds timeout = kDefaultStoreTimeout);
  ~TCPStore() override;
  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, Milliseconds timeout) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  std::string describe() const override;
  const std::string& host() const;
  uint16_t port() const;  // the bound port when the master asked for port 0
  using Store::set;
  using Store::wait;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Every key of `base` with a prefix: groups and backends share one store without their keys colliding.
class PrefixStore : public Store {
 public:
  PrefixStore(std::string prefix, std::shared_ptr<Store> base);
  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, Milliseconds timeout) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;  // the base store's count (PyTorch's PrefixStore does the same)
  std::string describe() const override;
  const std::shared_ptr<Store>& base() const { return base_; }
  using Store::set;
  using Store::wait;

 private:
  std::string prefixed(const std::string& key) const;  // "<prefix>/<key>"; refuses an empty key
  std::string prefix_;
  std::shared_ptr<Store> base_;
};

}  // namespace rt::dist

RT_API_END
