// The SQLite session store: round trips, deltas, listing, SQL summaries, migrations, crash safety
// and concurrent readers.
#include <catch2/catch.hpp>

#include <algorithm>

#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "temp_store_dir.h"
#include "rt/prof/store.h"
#include "store/sqlite_connection.h"

using namespace rt::prof;
namespace fs = std::filesystem;

namespace {

const rt::prof::testing::TempStoreDir scratch("rt_store_test_");

fs::path fresh_path(std::string_view name) { return scratch.fresh(name); }

// A small but complete session: nested ops on two threads, every GPU kind, memory, counters, steps.
SessionData sample_session(int ops_per_thread = 3) {
  SessionData d;
  d.name = "sample";
  d.clock_offset_ns = 1'700'000'000'000'000'000;
  d.start_ns = 1000;
  d.end_ns = 900000;
  d.complete = true;
  d.dropped_records = 3;
  d.metadata = {{"device", "cpu"}, {"rt_version", "0.1.0"}};
  d.threads = {{1, 4242, d.strings.intern("main")}, {2, 4243, d.strings.intern("autograd")}};
  for (int i = 0; i < ops_per_thread; ++i) {
    const int64_t t = 1000 + i * 1000;
    OpRecord outer{t, t + 800, 1, d.strings.intern("aten::linear"), d.strings.intern("net.fc1"),
                   d.strings.intern("[[64, 784], [512, 784]]"), d.strings.intern("[float32, float32]"),
                   i, uint64_t(100 + i), 0, OpKind::Op};
    OpRecord inner = outer;
    inner.start_ns = t + 100;
    inner.end_ns = t + 600;
    inner.name = d.strings.intern("aten::addmm");
    inner.depth = 1;
    inner.correlation_id = uint64_t(200 + i);
    OpRecord back{t + 850, t + 950, 2, d.strings.intern("AddmmBackward0"), 0, 0, 0, i, 0, 0, OpKind::BackwardNode};
    d.ops.insert(d.ops.end(), {outer, inner, back});
  }
  d.ops.push_back({500, 600, 1, d.strings.intern("forward"), 0, 0, 0, -1, 0, 0, OpKind::UserRange});
  for (int k = 0; k < 6; ++k) {
    GpuActivityRecord g;
    g.kind = GpuActivityKind(k);
    g.start_ns = 2000 + k * 10;
    g.end_ns = 2005 + k * 10;
    g.device = k % 2;
    g.stream = 7;
    g.thread = k >= 4 ? 1 : 0;
    g.name = d.strings.intern("activity " + std::to_string(k));
    g.correlation_id = uint64_t(50 + k);
    g.external_id = k == 0 ? 200 : 0;
    if (k == 0) {
      g.grid[0] = 128; g.grid[1] = 2; g.grid[2] = 1;
      g.block[0] = 256; g.block[1] = 1; g.block[2] = 1;
      g.registers = 32;
      g.shared_memory = 4096;
    }
    if (k == 1 || k == 2) g.bytes = 1 << 20;
    if (k == 1) g.copy_kind = 1;
    d.gpu.push_back(g);
  }
  d.memory.push_back({1500, 1, 0xdeadbeef00ull, 4096, 4096, -1, MemoryCategoryId::Activation, d.strings.intern("aten::addmm")});
  d.memory.push_back({1700, 1, 0xdeadbeef00ull, -4096, 0, -1, MemoryCategoryId::Activation, 0});
  d.memory.push_back({1800, 1, ~0ull, 64, 64, 0, MemoryCategoryId::Parameter, 0});  // full 64-bit address
  d.counters = {{3000, d.strings.intern("loss"), 0.693}, {4000, d.strings.intern("lr"), 1e-3}};
  d.steps = {{0, 1000, 2000}, {1, 2000, 3000}};
  d.collectives.push_back({.enqueue_ns = 2100, .start_ns = 2150, .end_ns = 2900, .thread = 1,
                           .name = d.strings.intern("all_reduce"), .group = d.strings.intern("default"),
                           .shape = d.strings.intern("[512, 784]"), .dtype = d.strings.intern("float32"),
                           .call_site = d.strings.intern("train.py:91"), .seq = 7, .numel = 401408,
                           .bytes = 1605632});
  d.collectives.push_back({.enqueue_ns = 2200, .start_ns = 2200, .end_ns = 2300, .thread = 2,
                           .name = d.strings.intern("send"), .group = d.strings.intern("group 1"),
                           .shape = d.strings.intern("[]"), .dtype = d.strings.intern("int64"), .seq = 1,
                           .numel = 1, .bytes = 8, .peer = 1, .point_to_point = true});
  return d;
}

// Compares record by record, resolving strings through each side's own table.
void check_same(const SessionData& a, const SessionData& b) {
  CHECK(a.name == b.name);
  CHECK(a.clock_offset_ns == b.clock_offset_ns);
  CHECK(a.start_ns == b.start_ns);
  CHECK(a.end_ns == b.end_ns);
  CHECK(a.complete == b.complete);
  CHECK(a.dropped_records == b.dropped_records);
  CHECK(a.metadata == b.metadata);
  auto s = [](const SessionData& d, StringId id) { return d.strings.at(id); };
  REQUIRE(a.threads.size() == b.threads.size());
  for (size_t i = 0; i < a.threads.size(); ++i) {
    CHECK(a.threads[i].thread == b.threads[i].thread);
    CHECK(a.threads[i].os_tid == b.threads[i].os_tid);
    CHECK(s(a, a.threads[i].name) == s(b, b.threads[i].name));
  }
  REQUIRE(a.ops.size() == b.ops.size());
  for (size_t i = 0; i < a.ops.size(); ++i) {
    const OpRecord &x = a.ops[i], &y = b.ops[i];
    CHECK(x.start_ns == y.start_ns);
    CHECK(x.end_ns == y.end_ns);
    CHECK(x.thread == y.thread);
    CHECK(s(a, x.name) == s(b, y.name));
    CHECK(s(a, x.module) == s(b, y.module));
    CHECK(s(a, x.input_shapes) == s(b, y.input_shapes));
    CHECK(s(a, x.input_dtypes) == s(b, y.input_dtypes));
    CHECK(x.sequence_nr == y.sequence_nr);
    CHECK(x.correlation_id == y.correlation_id);
    CHECK(x.depth == y.depth);
    CHECK(x.kind == y.kind);
  }
  REQUIRE(a.gpu.size() == b.gpu.size());
  for (size_t i = 0; i < a.gpu.size(); ++i) {
    const GpuActivityRecord &x = a.gpu[i], &y = b.gpu[i];
    CHECK(x.kind == y.kind);
    CHECK(x.start_ns == y.start_ns);
    CHECK(x.end_ns == y.end_ns);
    CHECK(x.device == y.device);
    CHECK(x.stream == y.stream);
    CHECK(x.thread == y.thread);
    CHECK(s(a, x.name) == s(b, y.name));
    CHECK(x.correlation_id == y.correlation_id);
    CHECK(x.external_id == y.external_id);
    CHECK(x.bytes == y.bytes);
    for (int k = 0; k < 3; ++k) {
      CHECK(x.grid[k] == y.grid[k]);
      CHECK(x.block[k] == y.block[k]);
    }
    CHECK(x.registers == y.registers);
    CHECK(x.shared_memory == y.shared_memory);
    CHECK(x.copy_kind == y.copy_kind);
  }
  REQUIRE(a.memory.size() == b.memory.size());
  for (size_t i = 0; i < a.memory.size(); ++i) {
    const MemoryRecord &x = a.memory[i], &y = b.memory[i];
    CHECK(x.time_ns == y.time_ns);
    CHECK(x.thread == y.thread);
    CHECK(x.address == y.address);
    CHECK(x.bytes == y.bytes);
    CHECK(x.total_allocated == y.total_allocated);
    CHECK(x.device == y.device);
    CHECK(x.category == y.category);
    CHECK(s(a, x.op) == s(b, y.op));
  }
  REQUIRE(a.counters.size() == b.counters.size());
  for (size_t i = 0; i < a.counters.size(); ++i) {
    CHECK(a.counters[i].time_ns == b.counters[i].time_ns);
    CHECK(s(a, a.counters[i].name) == s(b, b.counters[i].name));
    CHECK(a.counters[i].value == b.counters[i].value);
  }
  REQUIRE(a.collectives.size() == b.collectives.size());
  for (size_t i = 0; i < a.collectives.size(); ++i) {
    const CollectiveRecord &x = a.collectives[i], &y = b.collectives[i];
    CHECK(x.enqueue_ns == y.enqueue_ns);
    CHECK(x.start_ns == y.start_ns);
    CHECK(x.end_ns == y.end_ns);
    CHECK(x.thread == y.thread);
    CHECK(s(a, x.name) == s(b, y.name));
    CHECK(s(a, x.group) == s(b, y.group));
    CHECK(s(a, x.shape) == s(b, y.shape));
    CHECK(s(a, x.dtype) == s(b, y.dtype));
    CHECK(s(a, x.call_site) == s(b, y.call_site));
    CHECK(x.seq == y.seq);
    CHECK(x.numel == y.numel);
    CHECK(x.bytes == y.bytes);
    CHECK(x.peer == y.peer);
    CHECK(x.point_to_point == y.point_to_point);
  }
  REQUIRE(a.steps.size() == b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    CHECK(a.steps[i].step == b.steps[i].step);
    CHECK(a.steps[i].start_ns == b.steps[i].start_ns);
    CHECK(a.steps[i].end_ns == b.steps[i].end_ns);
  }
}

void check_same_rows(const std::vector<OpStats>& a, const std::vector<OpStats>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].name == b[i].name);
    CHECK(a[i].input_shapes == b[i].input_shapes);
    CHECK(a[i].calls == b[i].calls);
    CHECK(a[i].self_ns == b[i].self_ns);
    CHECK(a[i].total_ns == b[i].total_ns);
    CHECK(a[i].self_device_ns == b[i].self_device_ns);
    CHECK(a[i].device_total_ns == b[i].device_total_ns);
    CHECK(a[i].self_cpu_memory_bytes == b[i].self_cpu_memory_bytes);
    CHECK(a[i].cpu_memory_bytes == b[i].cpu_memory_bytes);
    CHECK(a[i].self_device_memory_bytes == b[i].self_device_memory_bytes);
    CHECK(a[i].device_memory_bytes == b[i].device_memory_bytes);
  }
}

}  // namespace

TEST_CASE("a saved session loads back record for record") {
  Store store = Store::open(fresh_path("roundtrip.sqlite"));
  CHECK(store.schema_version() == kStoreSchemaVersion);
  const SessionData original = sample_session();
  const int64_t id = store.save_session(original);
  check_same(original, store.load_session(id));
}

TEST_CASE("Store::open creates missing parent directories") {
  const fs::path p = fresh_path("unused").parent_path() / "a" / "b" / "runs.sqlite";
  fs::remove_all(p.parent_path().parent_path());
  Store store = Store::open(p);
  CHECK(fs::exists(p));
  CHECK(Store::default_path().filename() == "runs.sqlite");
}

TEST_CASE("deltas with their own string tables land in one session") {
  Store store = Store::open(fresh_path("deltas.sqlite"));
  SessionWriter w = store.begin_session("deltas", {{"host", "test"}});
  for (int i = 0; i < 3; ++i) {
    SessionData delta;
    delta.strings.intern("padding " + std::to_string(i));  // shifts the ids differently in every delta
    delta.ops.push_back({i * 10, i * 10 + 5, 1, delta.strings.intern("aten::relu"), 0, 0, 0, -1, 0, 0, OpKind::Op});
    delta.ops.push_back({i * 10 + 5, i * 10 + 9, 1, delta.strings.intern("op" + std::to_string(i)), 0, 0, 0, -1, 0, 0, OpKind::Op});
    delta.dropped_records = 1;
    w.append(delta);
  }
  std::vector<OpRecord> more = {{100, 110, 3, 1, 0, 0, 0, -1, 0, 0, OpKind::Op}};
  StringTable table;
  table.intern("aten::relu");
  w.append_ops(more, table);
  w.finish();

  const SessionData d = store.load_session(w.id());
  REQUIRE(d.ops.size() == 7);
  CHECK(d.strings.at(d.ops[0].name) == "aten::relu");
  CHECK(d.strings.at(d.ops[3].name) == "op1");
  CHECK(d.strings.at(d.ops[6].name) == "aten::relu");
  CHECK(d.ops[0].name == d.ops[6].name);  // interned once per session
  CHECK(d.strings.size() == 5);           // "", aten::relu, op0, op1, op2: unused strings are not stored
  CHECK(d.dropped_records == 3);
  CHECK(d.metadata.at("host") == "test");
  CHECK(d.start_ns == 0);  // derived from the records at finish
  CHECK(d.end_ns == 110);
  CHECK(d.complete);
}

TEST_CASE("list_sessions reports every session with its state and counts") {
  Store store = Store::open(fresh_path("list.sqlite"));
  const int64_t a = store.save_session(sample_session());
  SessionData partial = sample_session(5);
  partial.name = "unfinished";
  partial.complete = false;
  const int64_t b = store.save_session(partial);
  const auto sessions = store.list_sessions();
  REQUIRE(sessions.size() == 2);
  CHECK(sessions[0].id == a);
  CHECK(sessions[0].name == "sample");
  CHECK(sessions[0].complete);
  CHECK(sessions[0].op_count == 10);
  CHECK(sessions[0].gpu_count == 6);
  CHECK(sessions[0].memory_count == 3);
  CHECK(sessions[0].dropped_records == 3);
  CHECK(sessions[0].created_unix_ns > 0);
  CHECK(sessions[1].id == b);
  CHECK_FALSE(sessions[1].complete);
  CHECK(sessions[1].op_count == 16);
  CHECK(store.session_info(b).name == "unfinished");
}

TEST_CASE("top_ops from SQL agrees with key_averages over the loaded session") {
  Store store = Store::open(fresh_path("topops.sqlite"));
  const int64_t done = store.save_session(sample_session(20));
  SessionData partial = sample_session(7);
  partial.complete = false;
  const int64_t open = store.save_session(partial);
  for (int64_t id : {done, open}) {
    for (bool by_shape : {false, true}) {
      const auto expected = key_averages(store.load_session(id), by_shape);
      check_same_rows(store.top_ops(id, by_shape), expected);
    }
  }
  const auto rows = store.top_ops(done);
  CHECK(rows[0].name == "aten::linear");
  CHECK(rows[0].calls == 20);
  CHECK(rows[0].self_ns == 20 * 300);
}

TEST_CASE("finish builds the query indexes and marks the session complete") {
  const fs::path p = fresh_path("indexes.sqlite");
  Store store = Store::open(p);
  SessionWriter w = store.begin_session("x");
  w.append(sample_session());
  sqlite::Connection raw(p, false, 1000);
  CHECK(raw.query_int("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'Ops_thread_start'") == 0);
  CHECK_FALSE(store.session_info(w.id()).complete);
  w.finish();
  CHECK(raw.query_int("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'Ops_thread_start'") == 1);
  CHECK(raw.query_int("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'Kernel_stream_start'") == 1);
  CHECK(store.session_info(w.id()).complete);
  sqlite::Statement mode(raw, "PRAGMA journal_mode");
  REQUIRE(mode.step());
  CHECK(mode.text(0) == "wal");
  REQUIRE_THROWS_WITH(w.finish(), Catch::Contains("already finished"));
  REQUIRE_THROWS_WITH(w.append(sample_session()), Catch::Contains("already finished"));
}

TEST_CASE("the schema is nsys-like and queryable with plain SQL") {
  const fs::path p = fresh_path("sql.sqlite");
  const int64_t id = Store::open(p).save_session(sample_session());
  sqlite::Connection raw(p, false, 1000);
  sqlite::Statement st(raw,
                       "SELECT s.value, k.gridX, k.registersPerThread FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                       "JOIN StringIds s ON s.id = k.demangledName WHERE k.sessionId = ?1");
  st.bind(1, id);
  REQUIRE(st.step());
  CHECK(st.text(0) == "activity 0");
  CHECK(st.int64(1) == 128);
  CHECK(st.int64(2) == 32);
  CHECK(raw.query_int("SELECT count(*) FROM AutogradNodes") == 3);
  CHECK(raw.query_int("SELECT count(*) FROM Ops o JOIN CUPTI_ACTIVITY_KIND_KERNEL k "
                      "ON k.sessionId = o.sessionId AND k.externalId = o.correlationId") == 1);
  CHECK(raw.query_int("SELECT count(*) FROM ENUM_MEMORY_CATEGORY") == 6);
}

TEST_CASE("graph snapshots are stored as opaque JSON per session and step") {
  Store store = Store::open(fresh_path("graphs.sqlite"));
  SessionWriter w = store.begin_session("graphs");
  w.write_graph_snapshot({3, 1234, R"({"nodes": [], "edges": []})"});
  w.write_graph_snapshot({-1, 0, "{}"});
  w.finish();
  const auto snaps = store.graph_snapshots(w.id());
  REQUIRE(snaps.size() == 2);
  CHECK(snaps[0].step == 3);
  CHECK(snaps[0].time_ns == 1234);
  CHECK(snaps[0].json == R"({"nodes": [], "edges": []})");
  CHECK(snaps[1].step == -1);
}

TEST_CASE("delete_session removes one session and leaves the others intact") {
  Store store = Store::open(fresh_path("delete.sqlite"));
  const int64_t a = store.save_session(sample_session());
  const int64_t b = store.save_session(sample_session(4));
  store.delete_session(a);
  REQUIRE(store.list_sessions().size() == 1);
  CHECK(store.load_session(b).ops.size() == 13);
  REQUIRE_THROWS_AS(store.load_session(a), StoreError);
  const int64_t c = store.save_session(sample_session(2));
  CHECK(store.load_session(c).ops.size() == 7);
}

TEST_CASE("a version 1 store written by hand migrates to the current schema") {
  const fs::path p = fresh_path("v1.sqlite");
  {
    sqlite::Connection raw(p, true, 1000);
    // The v1 schema as the first release wrote it (tables this test reads, plus one we migrate).
    raw.exec(R"sql(
      CREATE TABLE Sessions (id INTEGER PRIMARY KEY, name TEXT NOT NULL, start INTEGER NOT NULL DEFAULT 0,
        end INTEGER NOT NULL DEFAULT 0, clockOffset INTEGER NOT NULL DEFAULT 0,
        complete INTEGER NOT NULL DEFAULT 0, createdUnixNs INTEGER NOT NULL DEFAULT 0, pid INTEGER);
      CREATE TABLE SessionMetadata (sessionId INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
        PRIMARY KEY (sessionId, key));
      CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE Threads (id INTEGER PRIMARY KEY, sessionId INTEGER NOT NULL, threadId INTEGER NOT NULL,
        osTid INTEGER, nameId INTEGER);
      CREATE TABLE Ops (id INTEGER PRIMARY KEY, sessionId INTEGER NOT NULL, start INTEGER NOT NULL,
        end INTEGER NOT NULL, threadId INTEGER NOT NULL, nameId INTEGER, moduleId INTEGER,
        inputShapesId INTEGER, inputDtypesId INTEGER, sequenceNr INTEGER, correlationId INTEGER,
        depth INTEGER NOT NULL, kind INTEGER NOT NULL);
    )sql");
    for (const char* t : {"KERNEL", "MEMCPY", "MEMSET", "SYNCHRONIZATION", "RUNTIME", "DRIVER"}) {
      std::string extra = std::string_view(t) == "KERNEL"
          ? ", demangledName INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, "
            "blockZ INTEGER, registersPerThread INTEGER, staticSharedMemory INTEGER"
          : std::string_view(t) == "MEMCPY" ? ", nameId INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL"
          : std::string_view(t) == "MEMSET" ? ", nameId INTEGER, bytes INTEGER NOT NULL"
                                            : ", nameId INTEGER";
      raw.exec("CREATE TABLE CUPTI_ACTIVITY_KIND_" + std::string(t) +
               " (id INTEGER PRIMARY KEY, sessionId INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL, "
               "deviceId INTEGER NOT NULL, streamId INTEGER NOT NULL, threadId INTEGER, correlationId INTEGER, "
               "externalId INTEGER" + extra + ")");
    }
    raw.exec(R"sql(
      CREATE TABLE MemoryEvents (id INTEGER PRIMARY KEY, sessionId INTEGER NOT NULL, timestamp INTEGER NOT NULL,
        threadId INTEGER, address INTEGER NOT NULL, bytes INTEGER NOT NULL, totalAllocated INTEGER NOT NULL,
        deviceId INTEGER NOT NULL, category INTEGER NOT NULL, opNameId INTEGER);
      CREATE TABLE Counters (id INTEGER PRIMARY KEY, sessionId INTEGER NOT NULL, timestamp INTEGER NOT NULL,
        nameId INTEGER, value REAL NOT NULL);
      CREATE TABLE Steps (id INTEGER PRIMARY KEY, sessionId INTEGER NOT NULL, step INTEGER NOT NULL,
        start INTEGER NOT NULL, end INTEGER NOT NULL);
      INSERT INTO Sessions VALUES (1, 'old run', 10, 500, 0, 1, 0, NULL);
      INSERT INTO StringIds VALUES (1099511627777, 'aten::mm');
      INSERT INTO Ops VALUES (1099511627777, 1, 10, 400, 1, 1099511627777, NULL, NULL, NULL, 4, NULL, 0, 0);
      INSERT INTO Ops VALUES (1099511627778, 1, 100, 200, 1, 1099511627777, NULL, NULL, NULL, 5, NULL, 1, 0);
      PRAGMA application_id = 1381257298;
      PRAGMA user_version = 1;
    )sql");
  }
  Store store = Store::open(p);
  CHECK(store.schema_version() == kStoreSchemaVersion);
  const SessionData old = store.load_session(1);
  CHECK(old.name == "old run");
  CHECK(old.complete);
  CHECK(old.dropped_records == 0);  // the column v2 added, with its default
  REQUIRE(old.ops.size() == 2);
  CHECK(old.strings.at(old.ops[1].name) == "aten::mm");
  CHECK(old.ops[0].sequence_nr == 4);
  // Finished before OpStats existed: top_ops still answers, from the records.
  const auto rows = store.top_ops(1);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].calls == 2);
  CHECK(rows[0].self_ns == 390);  // (390 - 100) + 100
  // The tables v2 added work.
  SessionWriter w = store.begin_session("new run");
  w.write_graph_snapshot({0, 0, "{}"});
  w.append(sample_session());
  w.finish();
  CHECK(store.graph_snapshots(w.id()).size() == 1);
  check_same_rows(store.top_ops(w.id()), key_averages(store.load_session(w.id())));
}

TEST_CASE("schema 2 -> 3: op statistics written without memory columns are recomputed from the records") {
  const fs::path p = fresh_path("v2.sqlite");
  int64_t id = 0;
  {
    Store store = Store::open(p);
    id = store.save_session(sample_session());
  }
  {  // Turn the file back into what a schema-2 build wrote: OpStats without the memory columns, no graph tables.
    sqlite::Connection raw(p, false, 1000);
    for (const char* column : {"selfCpuMemory", "cpuMemory", "selfDeviceMemory", "deviceMemory"})
      raw.exec(std::string("ALTER TABLE OpStats DROP COLUMN ") + column);
    raw.exec("DROP TABLE AutogradGraphs; DROP TABLE AutogradGraphNodes; DROP TABLE AutogradGraphEdges;");  // v4's
    raw.exec("DROP TABLE Collectives");  // v5's
    raw.exec("DROP TABLE GradientHistograms");  // v6's
    raw.exec("PRAGMA user_version = 2");
  }
  Store store = Store::open(p);
  CHECK(store.schema_version() == kStoreSchemaVersion);
  CHECK(store.load_session(id).collectives.empty());  // recorded before v5: none, and the session still loads
  const auto expected = key_averages(store.load_session(id));
  REQUIRE(std::any_of(expected.begin(), expected.end(), [](const OpStats& s) { return s.cpu_memory_bytes != 0; }));
  check_same_rows(store.top_ops(id), expected);
  // Sessions finished from now on keep their op memory in OpStats.
  const int64_t fresh = store.save_session(sample_session());
  sqlite::Connection raw(p, true, 1000);
  CHECK(raw.query_int("SELECT count(*) FROM OpStats WHERE sessionId = " + std::to_string(fresh) +
                      " AND selfCpuMemory IS NOT NULL") > 0);
  check_same_rows(store.top_ops(fresh), key_averages(store.load_session(fresh)));
}

TEST_CASE("a process killed during capture leaves a readable store with the session incomplete") {
  const fs::path p = fresh_path("killed.sqlite");
  Store::open(p).save_session(sample_session());

  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    try {
      Store store = Store::open(p);
      SessionWriter w = store.begin_session("killed");
      for (int i = 0;; ++i) {
        SessionData delta = sample_session(50);
        w.append(delta);
        if (i == 2) {
          const char byte = 1;
          if (::write(ready[1], &byte, 1) != 1) ::_exit(3);
        }
      }
    } catch (...) {
      ::_exit(2);
    }
  }
  ::close(ready[1]);
  char byte = 0;
  REQUIRE(::read(ready[0], &byte, 1) == 1);  // three deltas are committed; more may be mid-write
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(ready[0]);
  CHECK(WIFSIGNALED(status));

  // A second child writes part of a session and _exit()s without finish().
  const pid_t quitter = ::fork();
  REQUIRE(quitter >= 0);
  if (quitter == 0) {
    try {
      Store store = Store::open(p);
      SessionWriter w = store.begin_session("exited");
      w.append(sample_session(2));
      ::_exit(0);
    } catch (...) {
      ::_exit(2);
    }
  }
  ::waitpid(quitter, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);

  Store store = Store::open(p);
  const auto sessions = store.list_sessions();
  REQUIRE(sessions.size() == 3);
  CHECK(sessions[0].complete);
  CHECK(sessions[1].name == "killed");
  CHECK_FALSE(sessions[1].complete);
  const SessionData killed = store.load_session(sessions[1].id);
  CHECK(killed.ops.size() >= 3 * 151);
  CHECK(killed.ops.size() % 151 == 0);  // whole deltas only: each append is one transaction
  CHECK(sessions[2].name == "exited");
  CHECK_FALSE(sessions[2].complete);
  CHECK(store.load_session(sessions[2].id).ops.size() == 7);
  check_same_rows(store.top_ops(sessions[1].id), key_averages(killed));
  SessionWriter after = store.begin_session("after the crash");  // the store is still writable
  after.append(sample_session());
  after.finish();
}

TEST_CASE("readers query while a session is being written") {
  const fs::path p = fresh_path("concurrent.sqlite");
  Store writer_store = Store::open(p);
  Store reader = Store::open(p);
  SessionWriter w = writer_store.begin_session("live");
  w.append(sample_session(5));
  REQUIRE(reader.list_sessions().size() == 1);
  CHECK_FALSE(reader.list_sessions()[0].complete);
  CHECK(reader.load_session(w.id()).ops.size() == 16);

  // A write transaction held open by another connection does not block readers (WAL).
  sqlite::Connection other(p, false, 1000);
  other.exec("BEGIN IMMEDIATE");
  other.exec("INSERT INTO SessionMetadata VALUES (999, 'k', 'v')");
  CHECK(reader.load_session(w.id()).ops.size() == 16);
  CHECK(reader.list_sessions().size() == 1);
  other.exec("COMMIT");

  w.append(sample_session(5));
  CHECK(reader.load_session(w.id()).ops.size() == 32);
  w.finish();
  CHECK(reader.session_info(w.id()).complete);
}
