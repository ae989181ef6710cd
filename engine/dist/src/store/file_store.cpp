// FileStore: an append-only log of records in one file, shared by every rank through flock.
// See Note [FileStore log] for the format; docs/distributed.md documents it too.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "rt/dist/store.h"
#include "store/store_checks.h"

namespace rt::dist {

using namespace detail;

// Note [FileStore log]
// The file starts with the 8-byte magic "RTFSTOR1", then records, integers little-endian:
//   kind u8 = 1 (set):    key_len u32, key, value_len u64, value
//   kind u8 = 2 (delete): key_len u32, key
//   kind u8 = 3 (leave):  nothing (a FileStore was destroyed: the last of world_size removes the file)
// Writers append whole records while holding flock(LOCK_EX); readers hold LOCK_SH and replay from where
// they stopped. A record cut short therefore means a writer died mid-write or someone else wrote the file:
// it is reported with the path and the record's offset, never skipped.
namespace {

constexpr char kMagic[8] = {'R', 'T', 'F', 'S', 'T', 'O', 'R', '1'};
enum RecordKind : uint8_t { kSet = 1, kDelete = 2, kLeave = 3 };

void put_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += char((v >> (8 * i)) & 0xff);
}

std::string errno_text() { return std::strerror(errno); }

}  // namespace

struct FileStore::State {
  std::string path;
  int world_size = -1;
  int fd = -1;
  uint64_t pos = 0;  // bytes of the file replayed into `map`
  int64_t leaves = 0;
  std::unordered_map<std::string, Bytes> map;
  std::mutex mutex;  // flock excludes processes; this excludes the threads sharing `fd`

  std::string where() const { return "FileStore at " + path; }

  [[noreturn]] void fail(const std::string& what, const std::string& hint) const {
    throw DistStoreError(fmt::format("{}: {}. Hint: {}", where(), what, hint));
  }

  struct Lock {
    const State& s;
    Lock(const State& st, int how) : s(st) {
      while (::flock(s.fd, how) != 0) {
        if (errno != EINTR) s.fail("flock failed: " + errno_text(), "the file system must support flock (NFS needs lockd)");
      }
    }
    ~Lock() { ::flock(s.fd, LOCK_UN); }
  };

  std::string read_range(uint64_t from, uint64_t size) const {
    std::string buf(size, '\0');
    uint64_t done = 0;
    while (done < size) {
      ssize_t n = ::pread(fd, buf.data() + done, size - done, off_t(from + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail(fmt::format("reading {} bytes at offset {} failed: {}", size, from, errno_text()),
                      "check that the file system is mounted and readable");
      if (n == 0) break;
      done += uint64_t(n);
    }
    buf.resize(done);
    return buf;
  }

  // Replays the records appended since `pos`. Call with the flock held.
  void sync() {
    struct stat st {};
    if (::fstat(fd, &st) != 0) fail("fstat failed: " + errno_text(), "check the file system");
    uint64_t size = uint64_t(st.st_size);
    if (size < pos)
      fail(fmt::format("the file shrank from {} to {} bytes while in use", pos, size),
           "another program truncated or rewrote it; give each job its own path");
    if (size == pos) return;
    std::string data = read_range(pos, size - pos);
    size_t at = 0;
    auto corrupt = [&](uint64_t offset, const std::string& what) {
      fail(fmt::format("corrupt record at offset {}: {}", offset, what),
           "the file was cut short (a rank died while writing, or the disk is full) or is not a FileStore; remove "
           "it and restart the job, or use a new path");
    };
    if (pos == 0) {
      if (data.size() < sizeof(kMagic) || std::memcmp(data.data(), kMagic, sizeof(kMagic)) != 0)
        fail(fmt::format("offset 0: the file does not start with the FileStore magic 'RTFSTOR1' ({} bytes long)", size),
             "the path names a file that is not a FileStore (or one from another program); use a new path");
      at = sizeof(kMagic);
    }
    auto take = [&](uint64_t record, size_t n, const char* what) -> const char* {
      if (data.size() - at < n)
        corrupt(record, fmt::format("{} needs {} bytes but the file ends after {}", what, n, data.size() - at));
      const char* p = data.data() + at;
      at += n;
      return p;
    };
    auto get_le = [&](uint64_t record, int bytes, const char* what) {
      const char* p = take(record, size_t(bytes), what);
      uint64_t v = 0;
      for (int i = 0; i < bytes; ++i) v |= uint64_t(uint8_t(p[i])) << (8 * i);
      return v;
    };
    while (at < data.size()) {
      uint64_t record = pos + at;
      uint8_t kind = uint8_t(*take(record, 1, "the record kind"));
      if (kind == kLeave) {
        ++leaves;
        continue;
      }
      if (kind != kSet && kind != kDelete) corrupt(record, fmt::format("unknown record kind {}", kind));
      uint64_t key_len = get_le(record, 4, "the key length");
      if (key_len == 0 || key_len > kMaxKeyBytes) corrupt(record, fmt::format("key length {} is outside 1..65536", key_len));
      std::string key(take(record, size_t(key_len), "the key"), size_t(key_len));
      if (kind == kDelete) {
        map.erase(key);
        continue;
      }
      uint64_t value_len = get_le(record, 8, "the value length");
      if (value_len > kMaxValueBytes) corrupt(record, fmt::format("value length {} is over 1 GiB", value_len));
      const char* v = take(record, size_t(value_len), "the value");
      map[key] = Bytes(v, v + value_len);
    }
    pos = size;
  }

  // Appends one record, then replays it (and anything before it). Call with LOCK_EX held, after sync().
  void append(const std::string& record) {
    size_t done = 0;
    while (done < record.size()) {
      ssize_t n = ::write(fd, record.data() + done, record.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail(fmt::format("appending {} bytes failed: {}", record.size(), errno_text()),
                      "free disk space or check the file system's permissions");
      done += size_t(n);
    }
    sync();
  }

  static std::string set_record(const std::string& key, const Bytes& value) {
    std::string r(1, char(kSet));
    put_le(r, key.size(), 4);
    r += key;
    put_le(r, value.size(), 8);
    r.append(value.begin(), value.end());
    return r;
  }
};

FileStore::FileStore(std::string path, int world_size) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.path = std::move(path);
  s.world_size = world_size;
  if (s.path.empty()) throw DistStoreError("FileStore: the path is empty. Hint: pass a file on a file system every rank sees");
  if (world_size == 0 || world_size < -1)
    s.fail(fmt::format("world_size {} is invalid", world_size), "pass the number of ranks, or -1 to keep the file");
  s.fd = ::open(s.path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (s.fd < 0) s.fail("cannot open the file: " + errno_text(), "the folder must exist and be writable by every rank");
  try {
    State::Lock lock(s, LOCK_EX);
    struct stat st {};
    if (::fstat(s.fd, &st) == 0 && st.st_size == 0) s.append(std::string(kMagic, sizeof(kMagic)));
    else s.sync();
  } catch (...) {
    ::close(s.fd);
    throw;
  }
}

FileStore::~FileStore() {
  State& s = *state_;
  try {
    std::lock_guard guard(s.mutex);
    State::Lock lock(s, LOCK_EX);
    s.sync();
    s.append(std::string(1, char(kLeave)));
    if (s.world_size > 0 && s.leaves >= s.world_size) ::unlink(s.path.c_str());
  } catch (const DistStoreError&) {
    // A destructor cannot report: the file stays, and the next FileStore on it reports what is wrong.
  }
  ::close(s.fd);
}

const std::string& FileStore::path() const { return state_->path; }
std::string FileStore::describe() const { return state_->where(); }

void FileStore::set(const std::string& key, const Bytes& value) {
  check_key(describe(), "set", key);
  check_value(describe(), "set", key, value);
  std::lock_guard guard(state_->mutex);
  State::Lock lock(*state_, LOCK_EX);
  state_->sync();
  state_->append(State::set_record(key, value));
}

Bytes FileStore::get(const std::string& key) {
  check_key(describe(), "get", key);
  wait({key}, timeout());
  std::lock_guard guard(state_->mutex);
  State::Lock lock(*state_, LOCK_SH);
  state_->sync();
  auto it = state_->map.find(key);
  if (it == state_->map.end()) throw_wait_timeout(describe(), {key}, timeout());
  return it->second;
}

int64_t FileStore::add(const std::string& key, int64_t delta) {
  check_key(describe(), "add", key);
  std::lock_guard guard(state_->mutex);
  State::Lock lock(*state_, LOCK_EX);
  state_->sync();
  auto it = state_->map.find(key);
  int64_t current = it == state_->map.end() ? 0 : parse_counter(describe(), key, it->second);
  int64_t result = add_counter(describe(), key, current, delta);
  state_->append(State::set_record(key, counter_bytes(result)));
  return result;
}

Bytes FileStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  check_key(describe(), "compare_set", key);
  check_value(describe(), "compare_set", key, expected);
  check_value(describe(), "compare_set", key, desired);
  std::lock_guard guard(state_->mutex);
  State::Lock lock(*state_, LOCK_EX);
  state_->sync();
  auto it = state_->map.find(key);
  std::optional<Bytes> current;
  if (it != state_->map.end()) current = it->second;
  CompareSetOutcome outcome = compare_set_outcome(current, expected, desired);
  if (outcome.store) state_->append(State::set_record(key, *outcome.store));
  return outcome.result;
}

bool FileStore::check(const std::vector<std::string>& keys) {
  check_keys(describe(), "check", keys);
  std::lock_guard guard(state_->mutex);
  State::Lock lock(*state_, LOCK_SH);
  state_->sync();
  for (const auto& k : keys)
    if (!state_->map.count(k)) return false;
  return true;
}

void FileStore::wait(const std::vector<std::string>& keys, Milliseconds timeout) {
  check_keys(describe(), "wait", keys);
  auto deadline = deadline_after(describe(), timeout);
  auto pause = std::chrono::milliseconds(1);
  while (!check(keys)) {
    auto now = Clock::now();
    if (deadline && now >= *deadline) throw_wait_timeout(describe(), keys, timeout);
    auto nap = deadline ? std::min<Clock::duration>(pause, *deadline - now) : Clock::duration(pause);
    std::this_thread::sleep_for(nap);
    pause = std::min(pause * 2, std::chrono::milliseconds(10));
  }
}

bool FileStore::delete_key(const std::string& key) {
  check_key(describe(), "delete_key", key);
  std::lock_guard guard(state_->mutex);
  State::Lock lock(*state_, LOCK_EX);
  state_->sync();
  if (!state_->map.count(key)) return false;
  std::string r(1, char(kDelete));
  put_le(r, key.size(), 4);
  r += key;
  state_->append(r);
  return true;
}

int64_t FileStore::num_keys() {
  std::lock_guard guard(state_->mutex);
  State::Lock lock(*state_, LOCK_SH);
  state_->sync();
  return int64_t(state_->map.size());
}

}  // namespace rt::dist
