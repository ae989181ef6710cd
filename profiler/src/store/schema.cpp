#include "store/schema.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <optional>

#include "rt/prof/store.h"
#include "store/sqlite_connection.h"

namespace rt::prof::schema {
namespace {

// Note [Row ids]: the writer numbers each session's rows itself (base + 1, 2, ...), which keeps
// inserts appending at the end of the b-tree, needs no index during capture and lets readers
// load a session with a primary-key range scan.
constexpr const char* kV1 = R"sql(
CREATE TABLE Sessions (
  id            INTEGER PRIMARY KEY,
  name          TEXT    NOT NULL,
  start         INTEGER NOT NULL DEFAULT 0,
  end           INTEGER NOT NULL DEFAULT 0,
  clockOffset   INTEGER NOT NULL DEFAULT 0,
  complete      INTEGER NOT NULL DEFAULT 0,
  createdUnixNs INTEGER NOT NULL DEFAULT 0,
  pid           INTEGER
);
CREATE TABLE SessionMetadata (
  sessionId INTEGER NOT NULL,
  key       TEXT    NOT NULL,
  value     TEXT    NOT NULL,
  PRIMARY KEY (sessionId, key)
);
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE Threads (
  id INTEGER PRIMARY KEY, sessionId INTEGER NOT NULL, threadId INTEGER NOT NULL,
  osTid INTEGER, nameId INTEGER
);
CREATE TABLE Ops (
  id INTEGER PRIMARY KEY, sessionId INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL,
  threadId INTEGER NOT NULL, nameId INTEGER, moduleId INTEGER, inputShapesId INTEGER,
  inputDtypesId INTEGER, sequenceNr INTEGER, correlationId INTEGER, depth INTEGER NOT NULL,
  kind INTEGER NOT NULL
);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
  id INTEGER PRIMARY KEY, sessionId INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, streamId INTEGER NOT NULL, threadId INTEGER, correlationId INTEGER,
  externalId INTEGER, demangledName INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER,
  blockX INTEGER, blockY INTEGER, blockZ INTEGER, registersPerThread INTEGER, staticSharedMemory INTEGER
);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
  id INTEGER PRIMARY KEY, sessionId INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, streamId INTEGER NOT NULL, threadId INTEGER, correlationId INTEGER,
  externalId INTEGER, nameId INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL
);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
  id INTEGER PRIMARY KEY, sessionId INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, streamId INTEGER NOT NULL, threadId INTEGER, correlationId INTEGER,
  externalId INTEGER, nameId INTEGER, bytes INTEGER NOT NULL
);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (
  id INTEGER PRIMARY KEY, sessionId INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, streamId INTEGER NOT NULL, threadId INTEGER, correlationId INTEGER,
  externalId INTEGER, nameId INTEGER
);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
  id INTEGER PRIMARY KEY, sessionId INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, streamId INTEGER NOT NULL, threadId INTEGER, correlationId INTEGER,
  externalId INTEGER, nameId INTEGER
);
CREATE TABLE CUPTI_ACTIVITY_KIND_DRIVER (
  id INTEGER PRIMARY KEY, sessionId INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, streamId INTEGER NOT NULL, threadId INTEGER, correlationId INTEGER,
  externalId INTEGER, nameId INTEGER
);
CREATE TABLE MemoryEvents (
  id INTEGER PRIMARY KEY, sessionId INTEGER NOT NULL, timestamp INTEGER NOT NULL, threadId INTEGER,
  address INTEGER NOT NULL, bytes INTEGER NOT NULL, totalAllocated INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, category INTEGER NOT NULL, opNameId INTEGER
);
CREATE TABLE Counters (
  id INTEGER PRIMARY KEY, sessionId INTEGER NOT NULL, timestamp INTEGER NOT NULL,
  nameId INTEGER, value REAL NOT NULL
);
CREATE TABLE Steps (
  id INTEGER PRIMARY KEY, sessionId INTEGER NOT NULL, step INTEGER NOT NULL,
  start INTEGER NOT NULL, end INTEGER NOT NULL
);
CREATE TABLE ENUM_OP_KIND (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO ENUM_OP_KIND VALUES (0, 'op'), (1, 'backward_node'), (2, 'user_range');
CREATE TABLE ENUM_MEMORY_CATEGORY (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO ENUM_MEMORY_CATEGORY VALUES (0, 'parameter'), (1, 'gradient'), (2, 'activation'),
  (3, 'optimizer_state'), (4, 'temporary'), (5, 'other');
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (0, 'unknown'), (1, 'HtoD'), (2, 'DtoH'), (3, 'HtoA'),
  (4, 'AtoH'), (5, 'AtoA'), (6, 'AtoD'), (7, 'DtoA'), (8, 'DtoD'), (9, 'HtoH'), (10, 'PtoP');
CREATE VIEW AutogradNodes AS SELECT * FROM Ops WHERE kind = 1;
CREATE VIEW UserRanges AS SELECT * FROM Ops WHERE kind = 2;
)sql";

constexpr const char* kV2 = R"sql(
ALTER TABLE Sessions ADD COLUMN droppedRecords INTEGER NOT NULL DEFAULT 0;
CREATE TABLE GraphSnapshots (
  id INTEGER PRIMARY KEY, sessionId INTEGER NOT NULL, step INTEGER NOT NULL DEFAULT -1,
  timestamp INTEGER NOT NULL DEFAULT 0, format TEXT NOT NULL DEFAULT 'json', graph TEXT NOT NULL
);
CREATE INDEX GraphSnapshots_session ON GraphSnapshots (sessionId, step);
CREATE TABLE OpStats (
  sessionId INTEGER NOT NULL, nameId INTEGER, inputShapesId INTEGER, calls INTEGER NOT NULL,
  selfNs INTEGER NOT NULL, totalNs INTEGER NOT NULL, selfDeviceNs INTEGER NOT NULL,
  deviceTotalNs INTEGER NOT NULL
);
CREATE INDEX OpStats_session ON OpStats (sessionId);
)sql";

// NULL in rows written before v3: those sessions' op memory is computed from their records.
constexpr const char* kV3 = R"sql(
ALTER TABLE OpStats ADD COLUMN selfCpuMemory INTEGER;
ALTER TABLE OpStats ADD COLUMN cpuMemory INTEGER;
ALTER TABLE OpStats ADD COLUMN selfDeviceMemory INTEGER;
ALTER TABLE OpStats ADD COLUMN deviceMemory INTEGER;
)sql";

// Autograd graphs a session captured (Note [Graphs a session keeps]): one AutogradGraphs row per graph,
// its nodes and edges in snapshot order. Row ids follow Note [Row ids], so a session's graphs load with
// a primary-key range scan and each graph's rows are contiguous.
constexpr const char* kV4 = R"sql(
CREATE TABLE AutogradGraphs (
  id INTEGER PRIMARY KEY, sessionId INTEGER NOT NULL, timestamp INTEGER NOT NULL, step INTEGER NOT NULL,
  backwardIndex INTEGER NOT NULL, threadId INTEGER, nodeCount INTEGER NOT NULL, edgeCount INTEGER NOT NULL
);
CREATE TABLE AutogradGraphNodes (
  id INTEGER PRIMARY KEY, sessionId INTEGER NOT NULL, graphId INTEGER NOT NULL, nodeId INTEGER NOT NULL,
  nameId INTEGER, sequenceNr INTEGER NOT NULL, forwardOpId INTEGER, moduleId INTEGER,
  outputShapes TEXT NOT NULL, isLeaf INTEGER NOT NULL, leafShape TEXT
);
CREATE TABLE AutogradGraphEdges (
  id INTEGER PRIMARY KEY, sessionId INTEGER NOT NULL, graphId INTEGER NOT NULL, fromNode INTEGER NOT NULL,
  toNode INTEGER NOT NULL, inputNr INTEGER NOT NULL, shape TEXT NOT NULL
);
)sql";

// Collectives of process groups (rt/dist) that finished while the session recorded (CollectiveRecord).
constexpr const char* kV5 = R"sql(
CREATE TABLE Collectives (
  id INTEGER PRIMARY KEY, sessionId INTEGER NOT NULL, enqueue INTEGER NOT NULL, start INTEGER NOT NULL,
  end INTEGER NOT NULL, threadId INTEGER, nameId INTEGER, groupNameId INTEGER, shapeId INTEGER, dtypeId INTEGER,
  callSiteId INTEGER, seq INTEGER NOT NULL, numel INTEGER NOT NULL, bytes INTEGER NOT NULL, peer INTEGER,
  pointToPoint INTEGER NOT NULL
);
)sql";

// Gradient histograms (GradientHistogramRecord, Note [Gradient histograms] in events.h): one row per parameter
// per record; counts is a JSON array of the bin counts (json_each(counts) lists them), norm NULL for NaN.
constexpr const char* kV6 = R"sql(
CREATE TABLE GradientHistograms (
  id INTEGER PRIMARY KEY, sessionId INTEGER NOT NULL, step INTEGER NOT NULL, timestamp INTEGER NOT NULL,
  nameId INTEGER, numel INTEGER NOT NULL, norm REAL, lo REAL NOT NULL, hi REAL NOT NULL,
  nanCount INTEGER NOT NULL, infCount INTEGER NOT NULL, bins INTEGER NOT NULL, counts TEXT NOT NULL
);
)sql";

constexpr Migration kMigrations[] = {
    {1, "sessions, strings, threads, ops, CUPTI activity, memory, counters, steps", kV1},
    {2, "Sessions.droppedRecords, GraphSnapshots, OpStats", kV2},
    {3, "OpStats memory columns", kV3},
    {4, "AutogradGraphs, AutogradGraphNodes, AutogradGraphEdges", kV4},
    {5, "Collectives", kV5},
    {6, "GradientHistograms", kV6},
};
static_assert(std::size(kMigrations) == kStoreSchemaVersion, "one migration step per schema version");

// Kept to the ones that append at the tail during a later capture; see docs/store-schema.md.
constexpr const char* kQueryIndexes[] = {
    "CREATE INDEX IF NOT EXISTS Ops_thread_start ON Ops (sessionId, threadId, start)",
    "CREATE INDEX IF NOT EXISTS Kernel_stream_start ON CUPTI_ACTIVITY_KIND_KERNEL (sessionId, deviceId, streamId, start)",
    "CREATE INDEX IF NOT EXISTS MemoryEvents_device_time ON MemoryEvents (sessionId, deviceId, timestamp)",
    "CREATE INDEX IF NOT EXISTS Counters_name_time ON Counters (sessionId, nameId, timestamp)",
    "CREATE INDEX IF NOT EXISTS GradientHistograms_name_step ON GradientHistograms (sessionId, nameId, step)",
};

void check_ownership(sqlite::Connection& db, int64_t version) {
  const std::string p = db.path().string();
  const int64_t app = db.query_int("PRAGMA application_id");
  if (app != 0 && app != kApplicationId)
    throw StoreError(fmt::format("{} is not a RustyTorch store (it is an SQLite database of another "
                                 "program, application_id {:#x}): choose another file", p, app));
  // Two reads, two snapshots: a process that created the schema between them shows tables with version
  // 0, so the version is read again after the tables (a creator commits both at once).
  if (version == 0 && db.query_int("SELECT count(*) FROM sqlite_master") > 0 &&
      db.query_int("PRAGMA user_version") == 0)
    throw StoreError(fmt::format("{} is not a RustyTorch store (an SQLite database with other tables "
                                 "and no RustyTorch schema): choose another file", p));
  if (version > kStoreSchemaVersion)
    throw StoreError(fmt::format("{} was created by a newer RustyTorch (schema {} > {}): upgrade "
                                 "RustyTorch to open it", p, version, kStoreSchemaVersion));
}

}  // namespace

std::span<const Migration> migrations() { return kMigrations; }
std::span<const char* const> query_indexes() { return kQueryIndexes; }

namespace {

// Note [Creating a store from several processes]
// The ranks of a launched job may all open a store that does not exist yet. SQLite serializes the schema's
// transaction, but switching a new file to WAL takes an exclusive lock that a busy handler does not always
// wait for, and a reader can see the first process's tables between two of its own reads. So the slow path
// (a file that is not yet at the current schema in WAL mode) runs under an flock on the store's folder:
// not on the database file, because closing any descriptor of that file would drop the process's fcntl
// locks SQLite holds on it. Only processes preparing a store in that folder take it, briefly; a store
// already prepared takes the fast path, with no lock.
class PrepareLock {
 public:
  explicit PrepareLock(const std::filesystem::path& path)
      : fd_(::open(std::filesystem::absolute(path).parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);  // no folder to lock: SQLite's own locks alone
  }
  ~PrepareLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the flock
  }
  PrepareLock(const PrepareLock&) = delete;
  PrepareLock& operator=(const PrepareLock&) = delete;

 private:
  int fd_;
};

bool is_wal(sqlite::Connection& db) {
  sqlite::Statement mode(db, "PRAGMA journal_mode");
  const bool wal = mode.step() && mode.text(0) == "wal";
  mode.reset();
  return wal;
}

}  // namespace

void prepare(sqlite::Connection& db) {
  // The first statement reads the header: a non-database fails here with SQLITE_NOTADB.
  int64_t version = db.query_int("PRAGMA user_version");
  check_ownership(db, version);
  const bool ready = version == kStoreSchemaVersion && is_wal(db);
  std::optional<PrepareLock> lock;
  if (!ready) {
    lock.emplace(db.path());  // See Note [Creating a store from several processes]
    version = db.query_int("PRAGMA user_version");
    check_ownership(db, version);
    if (!is_wal(db)) {
      sqlite::Statement wal(db, "PRAGMA journal_mode=WAL");
      wal.step();
      wal.reset();
    }
  }
  db.exec("PRAGMA synchronous=NORMAL");
  db.exec("PRAGMA foreign_keys=OFF");
  if (version == kStoreSchemaVersion) return;

  sqlite::Transaction tx(db);
  version = db.query_int("PRAGMA user_version");  // another process may have migrated meanwhile
  check_ownership(db, version);
  for (const Migration& m : kMigrations) {
    if (m.version <= version) continue;
    try {
      db.exec(m.sql);
    } catch (const StoreError& e) {
      throw StoreError(fmt::format("migrating {} to schema {} ({}) failed: {}", db.path().string(),
                                   m.version, m.what, e.what()));
    }
    db.exec(fmt::format("PRAGMA user_version = {}", m.version));
  }
  db.exec(fmt::format("PRAGMA application_id = {}", kApplicationId));
  tx.commit();
}

}  // namespace rt::prof::schema
