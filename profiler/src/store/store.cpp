#include "rt/prof/store.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fmt/format.h>
#include <mutex>
#include <system_error>

#include "store/schema.h"
#include "store/session_rows.h"
#include "store/sqlite_connection.h"

namespace rt::prof {
namespace {

constexpr const char* kSessionTables[] = {
    "StringIds", "Threads", "Ops", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_DRIVER", "MemoryEvents", "Counters", "Steps",
    "AutogradGraphs", "AutogradGraphNodes", "AutogradGraphEdges", "Collectives", "GradientHistograms"};
constexpr const char* kGpuTables[] = {
    "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"};

// Rows are numbered 1..n per session (Note [Row ids]), so the count is the largest id's offset.
int64_t row_count(sqlite::Connection& db, const char* table, int64_t session) {
  sqlite::Statement st(db, fmt::format("SELECT max(id) FROM {} WHERE id >= ?1 AND id < ?2", table));
  st.bind(1, schema::session_base(session));
  st.bind(2, schema::session_end(session));
  if (!st.step() || st.is_null(0)) return 0;
  return st.int64(0) - schema::session_base(session);
}

SessionInfo info_from_row(sqlite::Connection& db, const sqlite::Statement& st) {
  SessionInfo s;
  s.id = st.int64(0);
  s.name = st.text(1);
  s.start_ns = st.int64(2);
  s.end_ns = st.int64(3);
  s.clock_offset_ns = st.int64(4);
  s.complete = st.int64(5) != 0;
  s.dropped_records = uint64_t(st.int64(6));
  s.created_unix_ns = st.int64(7);
  s.op_count = row_count(db, "Ops", s.id);
  for (const char* t : kGpuTables) s.gpu_count = std::max(s.gpu_count, row_count(db, t, s.id));
  s.memory_count = row_count(db, "MemoryEvents", s.id);
  sqlite::Statement meta(db, "SELECT key, value FROM SessionMetadata WHERE sessionId = ?1");
  meta.bind(1, s.id);
  while (meta.step()) s.metadata.emplace(meta.text(0), meta.text(1));
  return s;
}

constexpr const char* kSessionColumns =
    "SELECT id, name, start, end, clockOffset, complete, droppedRecords, createdUnixNs FROM Sessions";

}  // namespace

struct Store::Lock {
  std::mutex mutex;
};

std::filesystem::path Store::default_path() {
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg)
    return std::filesystem::path(xdg) / "rustytorch" / "runs.sqlite";
  const char* home = std::getenv("HOME");
  if (!home || !*home)
    throw StoreError("Store::default_path: neither XDG_DATA_HOME nor HOME is set: pass a store path");
  return std::filesystem::path(home) / ".local" / "share" / "rustytorch" / "runs.sqlite";
}

Store Store::open(const std::filesystem::path& path, StoreOptions options) {
  if (path.empty()) throw StoreError("Store::open: empty path: pass a file such as Store::default_path()");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw StoreError(fmt::format("{} is a directory, not a store file: pass a file path such as {}",
                                 path.string(), (path / "runs.sqlite").string()));
  const auto parent = path.parent_path();
  if (!parent.empty() && !std::filesystem::exists(parent, ec)) {
    std::filesystem::create_directories(parent, ec);
    if (ec)
      throw StoreError(fmt::format("cannot create directory {} for store {} ({}): choose a writable location",
                                   parent.string(), path.string(), ec.message()));
  }
  auto db = std::make_unique<sqlite::Connection>(path, true, options.busy_timeout_ms);
  schema::prepare(*db);
  return Store(path, options, std::move(db));
}

Store::Store(std::filesystem::path path, StoreOptions options, std::unique_ptr<sqlite::Connection> db)
    : path_(std::move(path)), options_(options), db_(std::move(db)), lock_(std::make_unique<Lock>()) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

int Store::schema_version() const {
  std::lock_guard g(lock_->mutex);
  return int(db_->query_int("PRAGMA user_version"));
}

SessionWriter Store::begin_session(std::string_view name,
                                   const std::unordered_map<std::string, std::string>& metadata) {
  int64_t id = 0;
  {
    std::lock_guard g(lock_->mutex);
    sqlite::Transaction tx(*db_);
    sqlite::Statement st(*db_, "INSERT INTO Sessions (name, createdUnixNs, pid) VALUES (?1, ?2, ?3)");
    st.bind(1, name);
    st.bind(2, int64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::system_clock::now().time_since_epoch()).count()));
    st.bind(3, int64_t(::getpid()));
    st.run();
    id = db_->last_insert_rowid();
    sqlite::Statement meta(*db_, "INSERT OR REPLACE INTO SessionMetadata VALUES (?1, ?2, ?3)");
    for (const auto& [key, value] : metadata) {
      meta.bind(1, id);
      meta.bind(2, std::string_view(key));
      meta.bind(3, std::string_view(value));
      meta.run();
    }
    tx.commit();
  }
  return SessionWriter::attach(path_, options_.busy_timeout_ms, id);
}

int64_t Store::save_session(const SessionData& data) {
  SessionWriter w = begin_session(data.name, data.metadata);
  w.append(data);
  if (data.complete) w.finish();
  return w.id();
}

void Store::build_query_indexes() {
  std::lock_guard g(lock_->mutex);
  for (const char* sql : schema::query_indexes()) db_->exec(sql);
}

std::vector<SessionInfo> Store::list_sessions() const {
  std::lock_guard g(lock_->mutex);
  std::vector<SessionInfo> out;
  sqlite::Statement st(*db_, fmt::format("{} ORDER BY id", kSessionColumns));
  while (st.step()) out.push_back(info_from_row(*db_, st));
  return out;
}

void Store::require_session(int64_t id) const {
  sqlite::Statement st(*db_, "SELECT 1 FROM Sessions WHERE id = ?1");
  st.bind(1, id);
  if (!st.step()) read_session(*db_, id);  // throws the full "not in store" message
}

SessionInfo Store::session_info(int64_t id) const {
  std::lock_guard g(lock_->mutex);
  require_session(id);
  sqlite::Statement st(*db_, fmt::format("{} WHERE id = ?1", kSessionColumns));
  st.bind(1, id);
  st.step();
  return info_from_row(*db_, st);
}

SessionData Store::load_session(int64_t id) const {
  std::lock_guard g(lock_->mutex);
  // One read transaction: a concurrent writer's later commits cannot tear the snapshot.
  db_->exec("BEGIN");
  try {
    SessionData d = read_session(*db_, id);
    db_->exec("COMMIT");
    return d;
  } catch (...) {
    db_->exec("ROLLBACK");
    throw;
  }
}

std::vector<GraphSnapshot> Store::graph_snapshots(int64_t id) const {
  std::lock_guard g(lock_->mutex);
  require_session(id);
  sqlite::Statement st(*db_, "SELECT step, timestamp, graph FROM GraphSnapshots WHERE sessionId = ?1 ORDER BY id");
  st.bind(1, id);
  std::vector<GraphSnapshot> out;
  while (st.step()) out.push_back({st.int64(0), st.int64(1), st.text(2)});
  return out;
}

void Store::delete_session(int64_t id) {
  std::lock_guard g(lock_->mutex);
  require_session(id);
  sqlite::Transaction tx(*db_);
  for (const char* table : kSessionTables) {
    sqlite::Statement st(*db_, fmt::format("DELETE FROM {} WHERE id >= ?1 AND id < ?2", table));
    st.bind(1, schema::session_base(id));
    st.bind(2, schema::session_end(id));
    st.run();
  }
  for (const char* table : {"SessionMetadata", "GraphSnapshots", "OpStats"}) {
    sqlite::Statement st(*db_, fmt::format("DELETE FROM {} WHERE sessionId = ?1", table));
    st.bind(1, id);
    st.run();
  }
  sqlite::Statement st(*db_, "DELETE FROM Sessions WHERE id = ?1");
  st.bind(1, id);
  st.run();
  tx.commit();
}

std::vector<OpStats> Store::top_ops(int64_t id, bool group_by_input_shape) const {
  const SessionInfo info = session_info(id);
  std::unique_lock g(lock_->mutex);
  sqlite::Statement has_stats(*db_, "SELECT selfCpuMemory IS NOT NULL FROM OpStats WHERE sessionId = ?1 LIMIT 1");
  has_stats.bind(1, id);
  // Unfinished sessions, and sessions finished before schema 2, have no OpStats rows; those
  // finished before schema 3 have no op memory in them.
  if (!info.complete || (info.op_count > 0 && !(has_stats.step() && has_stats.int64(0) != 0))) {
    g.unlock();
    return key_averages(load_session(id), group_by_input_shape);
  }
  const char* sql = group_by_input_shape
      ? "SELECT coalesce(n.value, ''), coalesce(s.value, ''), calls, selfNs, totalNs, selfDeviceNs, "
        "deviceTotalNs, selfCpuMemory, cpuMemory, selfDeviceMemory, deviceMemory FROM OpStats o "
        "LEFT JOIN StringIds n ON n.id = o.nameId LEFT JOIN StringIds s ON s.id = o.inputShapesId "
        "WHERE o.sessionId = ?1 ORDER BY totalNs DESC, 1, 2"
      : "SELECT coalesce(n.value, ''), '', sum(calls), sum(selfNs), sum(totalNs), sum(selfDeviceNs), "
        "sum(deviceTotalNs), sum(selfCpuMemory), sum(cpuMemory), sum(selfDeviceMemory), sum(deviceMemory) "
        "FROM OpStats o LEFT JOIN StringIds n ON n.id = o.nameId "
        "WHERE o.sessionId = ?1 GROUP BY o.nameId ORDER BY 5 DESC, 1";
  sqlite::Statement st(*db_, sql);
  st.bind(1, id);
  std::vector<OpStats> out;
  while (st.step())
    out.push_back({st.text(0), st.text(1), st.int64(2), st.int64(3), st.int64(4), st.int64(5), st.int64(6),
                   st.int64(7), st.int64(8), st.int64(9), st.int64(10)});
  return out;
}

}  // namespace rt::prof
