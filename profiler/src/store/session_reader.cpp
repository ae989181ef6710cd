#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "rt/prof/gradient_histograms.h"
#include "rt/prof/store.h"
#include "store/graph_rows.h"
#include "store/schema.h"
#include "store/session_rows.h"
#include "store/sqlite_connection.h"

namespace rt::prof {
namespace {

// Binds the session's id range to ?1 and ?2.
sqlite::Statement range_query(sqlite::Connection& db, std::string_view sql, int64_t session) {
  sqlite::Statement st(db, sql);
  st.bind(1, schema::session_base(session));
  st.bind(2, schema::session_end(session));
  return st;
}

StringId string_at(const sqlite::Statement& st, int column) {
  return st.is_null(column) ? 0 : schema::local_id(st.int64(column));
}

uint64_t optional_u64(const sqlite::Statement& st, int column) {
  return st.is_null(column) ? 0 : uint64_t(st.int64(column));
}

void read_header(sqlite::Connection& db, int64_t id, SessionData& d) {
  sqlite::Statement st(db, "SELECT name, start, end, clockOffset, complete, droppedRecords FROM Sessions WHERE id = ?1");
  st.bind(1, id);
  if (!st.step()) {
    std::string ids;
    sqlite::Statement all(db, "SELECT id FROM Sessions ORDER BY id");
    while (all.step()) ids += (ids.empty() ? "" : ", ") + std::to_string(all.int64(0));
    throw StoreError(fmt::format("session {} is not in store {} ({}): list them with "
                                 "`rtorch trace list {}`",
                                 id, db.path().string(), ids.empty() ? "it has no sessions" : "it has " + ids,
                                 db.path().string()));
  }
  d.name = st.text(0);
  d.start_ns = st.int64(1);
  d.end_ns = st.int64(2);
  d.clock_offset_ns = st.int64(3);
  d.complete = st.int64(4) != 0;
  d.dropped_records = uint64_t(st.int64(5));
  sqlite::Statement meta(db, "SELECT key, value FROM SessionMetadata WHERE sessionId = ?1");
  meta.bind(1, id);
  while (meta.step()) d.metadata[meta.text(0)] = meta.text(1);
}

void read_strings(sqlite::Connection& db, int64_t id, SessionData& d) {
  auto st = range_query(db, "SELECT id, value FROM StringIds WHERE id >= ?1 AND id < ?2 ORDER BY id", id);
  while (st.step()) {
    const StringId want = schema::local_id(st.int64(0));
    const StringId got = d.strings.intern(st.text(1));
    if (got != want)
      throw StoreError(fmt::format("store {} is corrupt: session {} string {} is out of sequence "
                                   "(expected id {}): restore it from a copy",
                                   db.path().string(), id, want, got));
  }
}

void read_gpu_table(sqlite::Connection& db, int64_t id, GpuActivityKind kind, const char* table,
                    std::vector<std::pair<int64_t, GpuActivityRecord>>& out) {
  const char* extra = kind == GpuActivityKind::Kernel   ? ", gridX, gridY, gridZ, blockX, blockY, blockZ, "
                                                          "registersPerThread, staticSharedMemory"
                      : kind == GpuActivityKind::Memcpy ? ", bytes, copyKind"
                      : kind == GpuActivityKind::Memset ? ", bytes"
                                                        : "";
  const char* name = kind == GpuActivityKind::Kernel ? "demangledName" : "nameId";
  auto st = range_query(db,
                        fmt::format("SELECT id, start, end, deviceId, streamId, threadId, correlationId, "
                                    "externalId, {}{} FROM {} WHERE id >= ?1 AND id < ?2",
                                    name, extra, table),
                        id);
  while (st.step()) {
    GpuActivityRecord r;
    r.kind = kind;
    r.start_ns = st.int64(1);
    r.end_ns = st.int64(2);
    r.device = int32_t(st.int64(3));
    r.stream = int32_t(st.int64(4));
    r.thread = optional_u64(st, 5);
    r.correlation_id = optional_u64(st, 6);
    r.external_id = optional_u64(st, 7);
    r.name = string_at(st, 8);
    if (kind == GpuActivityKind::Kernel) {
      for (int i = 0; i < 3; ++i) r.grid[i] = int32_t(st.int64(9 + i));
      for (int i = 0; i < 3; ++i) r.block[i] = int32_t(st.int64(12 + i));
      r.registers = int32_t(st.int64(15));
      r.shared_memory = int32_t(st.int64(16));
    } else if (kind == GpuActivityKind::Memcpy || kind == GpuActivityKind::Memset) {
      r.bytes = uint64_t(st.int64(9));
      if (kind == GpuActivityKind::Memcpy) r.copy_kind = uint8_t(st.int64(10));
    }
    out.emplace_back(st.int64(0), r);
  }
}

void read_gpu(sqlite::Connection& db, int64_t id, SessionData& d) {
  std::vector<std::pair<int64_t, GpuActivityRecord>> rows;
  read_gpu_table(db, id, GpuActivityKind::Kernel, "CUPTI_ACTIVITY_KIND_KERNEL", rows);
  read_gpu_table(db, id, GpuActivityKind::Memcpy, "CUPTI_ACTIVITY_KIND_MEMCPY", rows);
  read_gpu_table(db, id, GpuActivityKind::Memset, "CUPTI_ACTIVITY_KIND_MEMSET", rows);
  read_gpu_table(db, id, GpuActivityKind::Synchronization, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", rows);
  read_gpu_table(db, id, GpuActivityKind::Runtime, "CUPTI_ACTIVITY_KIND_RUNTIME", rows);
  read_gpu_table(db, id, GpuActivityKind::Driver, "CUPTI_ACTIVITY_KIND_DRIVER", rows);
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  d.gpu.reserve(rows.size());
  for (auto& [_, r] : rows) d.gpu.push_back(r);
}

void read_gradient_histograms(sqlite::Connection& db, int64_t id, SessionData& d) {
  auto st = range_query(db,
                        "SELECT id, step, timestamp, nameId, numel, norm, lo, hi, nanCount, infCount, bins, counts "
                        "FROM GradientHistograms WHERE id >= ?1 AND id < ?2",
                        id);
  while (st.step()) {
    GradientHistogramRecord r;
    r.step = st.int64(1);
    r.time_ns = st.int64(2);
    r.name = string_at(st, 3);
    r.numel = st.int64(4);
    r.norm = st.is_null(5) ? std::nan("") : st.real(5);
    r.lo = st.real(6);
    r.hi = st.real(7);
    r.nan_count = st.int64(8);
    r.inf_count = st.int64(9);
    const int64_t bins = st.int64(10);
    auto corrupt = [&](const std::string& what) {
      return StoreError(fmt::format("store {} is corrupt: GradientHistograms row {} of session {} {}: restore it "
                                    "from a copy or delete the session",
                                    db.path().string(), st.int64(0), id, what));
    };
    const nlohmann::json counts = nlohmann::json::parse(st.text(11), nullptr, false);
    if (!counts.is_array()) throw corrupt("has counts that are not a JSON array");
    if (int64_t(counts.size()) != bins)
      throw corrupt(fmt::format("has {} counts but bins = {}", counts.size(), bins));
    r.counts.reserve(counts.size());
    for (const nlohmann::json& c : counts) {
      if (!c.is_number_integer()) throw corrupt("has a count that is not an integer");
      r.counts.push_back(c.get<int64_t>());
    }
    if (r.name >= d.strings.size()) throw corrupt("names a string the session does not have");
    if (const std::string problem = gradient_histogram_problem(r); !problem.empty()) throw corrupt("is inconsistent (" + problem + ")");
    d.gradient_histograms.push_back(std::move(r));
  }
}

}  // namespace

void configure_connection(sqlite::Connection& db) {
  db.exec("PRAGMA synchronous=NORMAL");
  db.exec("PRAGMA cache_size=-65536");  // KiB: keeps the tails of the tables and indexes in memory
  db.exec("PRAGMA temp_store=MEMORY");
}

SessionData read_session(sqlite::Connection& db, int64_t id) {
  SessionData d;
  read_header(db, id, d);
  read_strings(db, id, d);
  {
    auto st = range_query(db, "SELECT threadId, osTid, nameId FROM Threads WHERE id >= ?1 AND id < ?2", id);
    while (st.step()) d.threads.push_back({uint64_t(st.int64(0)), uint32_t(st.int64(1)), string_at(st, 2)});
  }
  {
    auto st = range_query(db,
                          "SELECT start, end, threadId, nameId, moduleId, inputShapesId, inputDtypesId, "
                          "sequenceNr, correlationId, depth, kind FROM Ops WHERE id >= ?1 AND id < ?2",
                          id);
    while (st.step()) {
      OpRecord r;
      r.start_ns = st.int64(0);
      r.end_ns = st.int64(1);
      r.thread = uint64_t(st.int64(2));
      r.name = string_at(st, 3);
      r.module = string_at(st, 4);
      r.input_shapes = string_at(st, 5);
      r.input_dtypes = string_at(st, 6);
      r.sequence_nr = st.is_null(7) ? -1 : st.int64(7);
      r.correlation_id = optional_u64(st, 8);
      r.depth = int32_t(st.int64(9));
      r.kind = OpKind(st.int64(10));
      d.ops.push_back(r);
    }
  }
  read_gpu(db, id, d);
  {
    auto st = range_query(db,
                          "SELECT enqueue, start, end, threadId, nameId, groupNameId, shapeId, dtypeId, callSiteId, "
                          "seq, numel, bytes, peer, pointToPoint FROM Collectives WHERE id >= ?1 AND id < ?2",
                          id);
    while (st.step()) {
      CollectiveRecord r;
      r.enqueue_ns = st.int64(0);
      r.start_ns = st.int64(1);
      r.end_ns = st.int64(2);
      r.thread = optional_u64(st, 3);
      r.name = string_at(st, 4);
      r.group = string_at(st, 5);
      r.shape = string_at(st, 6);
      r.dtype = string_at(st, 7);
      r.call_site = string_at(st, 8);
      r.seq = uint64_t(st.int64(9));
      r.numel = st.int64(10);
      r.bytes = st.int64(11);
      r.peer = st.is_null(12) ? -1 : int32_t(st.int64(12));
      r.point_to_point = st.int64(13) != 0;
      d.collectives.push_back(r);
    }
  }
  {
    auto st = range_query(db,
                          "SELECT timestamp, threadId, address, bytes, totalAllocated, deviceId, category, "
                          "opNameId FROM MemoryEvents WHERE id >= ?1 AND id < ?2",
                          id);
    while (st.step()) {
      MemoryRecord r;
      r.time_ns = st.int64(0);
      r.thread = optional_u64(st, 1);
      r.address = uint64_t(st.int64(2));
      r.bytes = st.int64(3);
      r.total_allocated = st.int64(4);
      r.device = int32_t(st.int64(5));
      r.category = MemoryCategoryId(st.int64(6));
      r.op = string_at(st, 7);
      d.memory.push_back(r);
    }
  }
  {
    auto st = range_query(db, "SELECT timestamp, nameId, value FROM Counters WHERE id >= ?1 AND id < ?2", id);
    while (st.step()) d.counters.push_back({st.int64(0), string_at(st, 1), st.real(2)});
  }
  {
    auto st = range_query(db, "SELECT step, start, end FROM Steps WHERE id >= ?1 AND id < ?2", id);
    while (st.step()) d.steps.push_back({st.int64(0), st.int64(1), st.int64(2)});
  }
  read_graphs(db, id, d);
  read_gradient_histograms(db, id, d);
  return d;
}

}  // namespace rt::prof
