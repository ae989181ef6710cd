#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <fmt/format.h>
#include <limits>
#include <optional>
#include <unordered_map>

#include "rt/prof/gradient_histograms.h"
#include "rt/prof/store.h"
#include "store/graph_rows.h"
#include "store/schema.h"
#include "store/session_rows.h"
#include "store/sqlite_connection.h"

namespace rt::prof {
namespace {

constexpr uint32_t kUnmapped = std::numeric_limits<uint32_t>::max();

const char* gpu_insert_sql(GpuActivityKind kind) {
  switch (kind) {
    case GpuActivityKind::Kernel:
      return "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,"
             "?14,?15,?16,?17,?18)";
    case GpuActivityKind::Memcpy:
      return "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)";
    case GpuActivityKind::Memset:
      return "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)";
    case GpuActivityKind::Synchronization:
      return "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)";
    case GpuActivityKind::Runtime:
      return "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)";
    case GpuActivityKind::Driver:
      return "INSERT INTO CUPTI_ACTIVITY_KIND_DRIVER VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)";
  }
  return nullptr;
}

void bind_optional(sqlite::Statement& st, int index, uint64_t value) {
  if (value == 0) st.bind_null(index);
  else st.bind(index, int64_t(value));
}

}  // namespace

struct SessionWriter::Impl {
  Impl(const std::filesystem::path& path, int busy_timeout_ms, int64_t session_id)
      : db(path, false, busy_timeout_ms), session(session_id), base(schema::session_base(session_id)) {
    configure_connection(db);
    insert_string = sqlite::Statement(db, "INSERT INTO StringIds VALUES (?1, ?2)");
    insert_thread = sqlite::Statement(db, "INSERT INTO Threads VALUES (?1,?2,?3,?4,?5)");
    insert_op = sqlite::Statement(db, "INSERT INTO Ops VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)");
    for (int k = 0; k < 6; ++k) insert_gpu[k] = sqlite::Statement(db, gpu_insert_sql(GpuActivityKind(k)));
    insert_memory = sqlite::Statement(db, "INSERT INTO MemoryEvents VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)");
    insert_counter = sqlite::Statement(db, "INSERT INTO Counters VALUES (?1,?2,?3,?4,?5)");
    insert_step = sqlite::Statement(db, "INSERT INTO Steps VALUES (?1,?2,?3,?4,?5)");
    insert_collective =
        sqlite::Statement(db, "INSERT INTO Collectives VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16)");
    insert_gradient = sqlite::Statement(
        db, "INSERT INTO GradientHistograms VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)");
    graph_rows.emplace(db);
    session_strings.emplace(std::string(), 0);
  }

  // Maps the caller's ids to this session's, writing strings seen for the first time.
  void start_remap(const StringTable& table) {
    source = &table;
    remap.assign(table.size(), kUnmapped);
    remap[0] = 0;
  }
  uint32_t map(StringId id) {
    if (id >= remap.size())
      throw StoreError(fmt::format("session {}: a record references string id {} but its StringTable "
                                   "holds {} strings: pass the table the records were interned in",
                                   session, id, remap.size()));
    uint32_t& slot = remap[id];
    if (slot != kUnmapped) return slot;
    return slot = intern(source->at(id));
  }
  // The session's id for `s`, writing it the first time.
  uint32_t intern(const std::string& s) {
    auto it = session_strings.find(s);
    if (it == session_strings.end()) {
      const auto local = uint32_t(session_strings.size());
      it = session_strings.emplace(s, local).first;
      insert_string.bind(1, base | int64_t(local));
      insert_string.bind(2, std::string_view(it->first));
      insert_string.run();
    }
    return it->second;
  }

  void see_time(int64_t start, int64_t end) {
    min_start = std::min(min_start, start);
    max_end = std::max(max_end, end);
  }

  void write(std::span<const ThreadRecord> rows) {
    for (const ThreadRecord& r : rows) {
      insert_thread.bind(1, base | ++n_threads);
      insert_thread.bind(2, session);
      insert_thread.bind(3, int64_t(r.thread));
      insert_thread.bind(4, int64_t(r.os_tid));
      insert_thread.bind_string_id(5, base, map(r.name));
      insert_thread.run();
    }
  }

  void write(std::span<const OpRecord> rows) {
    sqlite::Statement& st = insert_op;
    for (const OpRecord& r : rows) {
      st.bind(1, base | ++n_ops);
      st.bind(2, session);
      st.bind(3, r.start_ns);
      st.bind(4, r.end_ns);
      st.bind(5, int64_t(r.thread));
      st.bind_string_id(6, base, map(r.name));
      st.bind_string_id(7, base, map(r.module));
      st.bind_string_id(8, base, map(r.input_shapes));
      st.bind_string_id(9, base, map(r.input_dtypes));
      if (r.sequence_nr < 0) st.bind_null(10);
      else st.bind(10, r.sequence_nr);
      bind_optional(st, 11, r.correlation_id);
      st.bind(12, int64_t(r.depth));
      st.bind(13, int64_t(r.kind));
      st.run();
      see_time(r.start_ns, r.end_ns);
    }
  }

  void write(std::span<const GpuActivityRecord> rows) {
    for (const GpuActivityRecord& r : rows) {
      const auto k = size_t(r.kind);
      if (k >= insert_gpu.size())
        throw StoreError(fmt::format("session {}: GPU record with unknown kind {}", session, k));
      sqlite::Statement& st = insert_gpu[k];
      // One counter for every GPU table keeps the records' order across kinds (see read_session).
      st.bind(1, base | ++n_gpu);
      st.bind(2, session);
      st.bind(3, r.start_ns);
      st.bind(4, r.end_ns);
      st.bind(5, int64_t(r.device));
      st.bind(6, int64_t(r.stream));
      bind_optional(st, 7, r.thread);
      bind_optional(st, 8, r.correlation_id);
      bind_optional(st, 9, r.external_id);
      st.bind_string_id(10, base, map(r.name));
      if (r.kind == GpuActivityKind::Kernel) {
        for (int i = 0; i < 3; ++i) st.bind(11 + i, int64_t(r.grid[i]));
        for (int i = 0; i < 3; ++i) st.bind(14 + i, int64_t(r.block[i]));
        st.bind(17, int64_t(r.registers));
        st.bind(18, int64_t(r.shared_memory));
      } else if (r.kind == GpuActivityKind::Memcpy || r.kind == GpuActivityKind::Memset) {
        st.bind(11, int64_t(r.bytes));
        if (r.kind == GpuActivityKind::Memcpy) st.bind(12, int64_t(r.copy_kind));
      }
      st.run();
      see_time(r.start_ns, r.end_ns);
    }
  }

  void write(std::span<const CollectiveRecord> rows) {
    sqlite::Statement& st = insert_collective;
    for (const CollectiveRecord& r : rows) {
      st.bind(1, base | ++n_collectives);
      st.bind(2, session);
      st.bind(3, r.enqueue_ns);
      st.bind(4, r.start_ns);
      st.bind(5, r.end_ns);
      bind_optional(st, 6, r.thread);
      st.bind_string_id(7, base, map(r.name));
      st.bind_string_id(8, base, map(r.group));
      st.bind_string_id(9, base, map(r.shape));
      st.bind_string_id(10, base, map(r.dtype));
      st.bind_string_id(11, base, map(r.call_site));
      st.bind(12, int64_t(r.seq));
      st.bind(13, r.numel);
      st.bind(14, r.bytes);
      if (r.peer < 0) st.bind_null(15);
      else st.bind(15, int64_t(r.peer));
      st.bind(16, int64_t(r.point_to_point));
      st.run();
      see_time(r.enqueue_ns, r.end_ns);
    }
  }

  void write(std::span<const MemoryRecord> rows) {
    sqlite::Statement& st = insert_memory;
    for (const MemoryRecord& r : rows) {
      st.bind(1, base | ++n_memory);
      st.bind(2, session);
      st.bind(3, r.time_ns);
      bind_optional(st, 4, r.thread);
      st.bind(5, int64_t(r.address));
      st.bind(6, r.bytes);
      st.bind(7, r.total_allocated);
      st.bind(8, int64_t(r.device));
      st.bind(9, int64_t(r.category));
      st.bind_string_id(10, base, map(r.op));
      st.run();
      see_time(r.time_ns, r.time_ns);
    }
  }

  void write(std::span<const CounterRecord> rows) {
    for (const CounterRecord& r : rows) {
      insert_counter.bind(1, base | ++n_counters);
      insert_counter.bind(2, session);
      insert_counter.bind(3, r.time_ns);
      insert_counter.bind_string_id(4, base, map(r.name));
      insert_counter.bind(5, r.value);
      insert_counter.run();
      see_time(r.time_ns, r.time_ns);
    }
  }

  void write(std::span<const StepRecord> rows) {
    for (const StepRecord& r : rows) {
      insert_step.bind(1, base | ++n_steps);
      insert_step.bind(2, session);
      insert_step.bind(3, r.step);
      insert_step.bind(4, r.start_ns);
      insert_step.bind(5, r.end_ns);
      insert_step.run();
      see_time(r.start_ns, r.end_ns);
    }
  }

  void write(std::span<const GradientHistogramRecord> rows) {
    sqlite::Statement& st = insert_gradient;
    for (const GradientHistogramRecord& r : rows) {
      if (const std::string problem = gradient_histogram_problem(r); !problem.empty())
        throw StoreError(fmt::format("session {}: gradient histogram of '{}' is inconsistent ({}); record it with "
                                     "rt::prof::record_gradient_histogram",
                                     session, source->at(r.name), problem));
      std::string counts = "[";
      for (size_t i = 0; i < r.counts.size(); ++i) fmt::format_to(std::back_inserter(counts), "{}{}", i ? "," : "", r.counts[i]);
      counts += ']';
      st.bind(1, base | ++n_gradients);
      st.bind(2, session);
      st.bind(3, r.step);
      st.bind(4, r.time_ns);
      st.bind_string_id(5, base, map(r.name));
      st.bind(6, r.numel);
      if (std::isnan(r.norm)) st.bind_null(7);  // SQLite keeps no NaN
      else st.bind(7, r.norm);
      st.bind(8, r.lo);
      st.bind(9, r.hi);
      st.bind(10, r.nan_count);
      st.bind(11, r.inf_count);
      st.bind(12, int64_t(r.counts.size()));
      st.bind(13, std::string_view(counts));
      st.run();
      see_time(r.time_ns, r.time_ns);
    }
  }

  void write(std::span<const GraphRecord> rows) {
    for (const GraphRecord& r : rows)
      graph_rows->write(r, session, graph_counters, [this](const std::string& s) { return intern(s); });
  }

  void write_header(const SessionData& d) {
    sqlite::Statement st(db,
        "UPDATE Sessions SET start = CASE WHEN start = 0 THEN ?1 ELSE start END, end = max(end, ?2), "
        "clockOffset = CASE WHEN ?3 != 0 THEN ?3 ELSE clockOffset END, "
        "droppedRecords = droppedRecords + ?4 WHERE id = ?5");
    st.bind(1, d.start_ns);
    st.bind(2, d.end_ns);
    st.bind(3, d.clock_offset_ns);
    st.bind(4, int64_t(d.dropped_records));
    st.bind(5, session);
    st.run();
    sqlite::Statement meta(db, "INSERT OR REPLACE INTO SessionMetadata VALUES (?1, ?2, ?3)");
    for (const auto& [key, value] : d.metadata) {
      meta.bind(1, session);
      meta.bind(2, std::string_view(key));
      meta.bind(3, std::string_view(value));
      meta.run();
    }
  }

  void write_op_stats() {
    const SessionData data = read_session(db, session);
    sqlite::Statement st(db, "INSERT INTO OpStats VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)");
    for (const OpStats& s : key_averages(data, true)) {
      st.bind(1, session);
      st.bind_string_id(2, base, session_strings.at(s.name));
      st.bind_string_id(3, base, session_strings.at(s.input_shapes));
      st.bind(4, s.calls);
      st.bind(5, s.self_ns);
      st.bind(6, s.total_ns);
      st.bind(7, s.self_device_ns);
      st.bind(8, s.device_total_ns);
      st.bind(9, s.self_cpu_memory_bytes);
      st.bind(10, s.cpu_memory_bytes);
      st.bind(11, s.self_device_memory_bytes);
      st.bind(12, s.device_memory_bytes);
      st.run();
    }
  }

  template <typename Record>
  void append_rows(std::span<const Record> rows, const StringTable* strings) {
    sqlite::Transaction tx(db);
    if (strings) start_remap(*strings);
    write(rows);
    tx.commit();
  }

  sqlite::Connection db;
  int64_t session;
  int64_t base;
  std::unordered_map<std::string, uint32_t> session_strings;
  const StringTable* source = nullptr;
  std::vector<uint32_t> remap;
  int64_t n_threads = 0, n_ops = 0, n_gpu = 0, n_collectives = 0, n_memory = 0, n_counters = 0, n_steps = 0,
          n_gradients = 0;
  GraphRowCounters graph_counters;
  std::optional<GraphRowWriter> graph_rows;
  int64_t min_start = std::numeric_limits<int64_t>::max();
  int64_t max_end = std::numeric_limits<int64_t>::min();
  sqlite::Statement insert_string, insert_thread, insert_op, insert_memory, insert_counter, insert_step,
      insert_collective, insert_gradient;
  std::array<sqlite::Statement, 6> insert_gpu;
};

SessionWriter::SessionWriter(std::unique_ptr<Impl> impl, int64_t id) : impl_(std::move(impl)), id_(id) {}
SessionWriter SessionWriter::attach(const std::filesystem::path& path, int busy_timeout_ms, int64_t id) {
  return SessionWriter(std::make_unique<Impl>(path, busy_timeout_ms, id), id);
}
SessionWriter::SessionWriter(SessionWriter&&) noexcept = default;
SessionWriter& SessionWriter::operator=(SessionWriter&&) noexcept = default;
SessionWriter::~SessionWriter() = default;

namespace {
void require_open(bool has_impl, bool finished, int64_t id,
                  const char* what) {
  if (!has_impl) throw StoreError(fmt::format("SessionWriter::{}: the writer was moved from", what));
  if (finished)
    throw StoreError(fmt::format("SessionWriter::{}: session {} is already finished; begin a new "
                                 "session to record more", what, id));
}
}  // namespace

void SessionWriter::append(const SessionData& delta) {
  require_open(impl_ != nullptr, finished_, id_, "append");
  sqlite::Transaction tx(impl_->db);
  impl_->start_remap(delta.strings);
  impl_->write(std::span(delta.threads));
  impl_->write(std::span(delta.ops));
  impl_->write(std::span(delta.gpu));
  impl_->write(std::span(delta.collectives));
  impl_->write(std::span(delta.memory));
  impl_->write(std::span(delta.counters));
  impl_->write(std::span(delta.steps));
  impl_->write(std::span(delta.graphs));
  impl_->write(std::span(delta.gradient_histograms));
  impl_->write_header(delta);
  tx.commit();
}


void SessionWriter::append_threads(std::span<const ThreadRecord> rows, const StringTable& strings) {
  require_open(impl_ != nullptr, finished_, id_, "append_threads");
  impl_->append_rows(rows, &strings);
}
void SessionWriter::append_ops(std::span<const OpRecord> rows, const StringTable& strings) {
  require_open(impl_ != nullptr, finished_, id_, "append_ops");
  impl_->append_rows(rows, &strings);
}
void SessionWriter::append_gpu(std::span<const GpuActivityRecord> rows, const StringTable& strings) {
  require_open(impl_ != nullptr, finished_, id_, "append_gpu");
  impl_->append_rows(rows, &strings);
}
void SessionWriter::append_collectives(std::span<const CollectiveRecord> rows, const StringTable& strings) {
  require_open(impl_ != nullptr, finished_, id_, "append_collectives");
  impl_->append_rows(rows, &strings);
}
void SessionWriter::append_memory(std::span<const MemoryRecord> rows, const StringTable& strings) {
  require_open(impl_ != nullptr, finished_, id_, "append_memory");
  impl_->append_rows(rows, &strings);
}
void SessionWriter::append_counters(std::span<const CounterRecord> rows, const StringTable& strings) {
  require_open(impl_ != nullptr, finished_, id_, "append_counters");
  impl_->append_rows(rows, &strings);
}
void SessionWriter::append_steps(std::span<const StepRecord> rows) {
  require_open(impl_ != nullptr, finished_, id_, "append_steps");
  impl_->append_rows<StepRecord>(rows, nullptr);
}

void SessionWriter::append_gradient_histograms(std::span<const GradientHistogramRecord> rows,
                                               const StringTable& strings) {
  require_open(impl_ != nullptr, finished_, id_, "append_gradient_histograms");
  impl_->append_rows(rows, &strings);
}

void SessionWriter::append_graphs(std::span<const GraphRecord> rows) {
  require_open(impl_ != nullptr, finished_, id_, "append_graphs");
  impl_->append_rows<GraphRecord>(rows, nullptr);
}

void SessionWriter::add_dropped_records(uint64_t n) {
  require_open(impl_ != nullptr, finished_, id_, "add_dropped_records");
  sqlite::Statement st(impl_->db, "UPDATE Sessions SET droppedRecords = droppedRecords + ?1 WHERE id = ?2");
  st.bind(1, int64_t(n));
  st.bind(2, id_);
  st.run();
}

void SessionWriter::write_graph_snapshot(const GraphSnapshot& snapshot) {
  require_open(impl_ != nullptr, finished_, id_, "write_graph_snapshot");
  sqlite::Statement st(impl_->db,
                       "INSERT INTO GraphSnapshots (sessionId, step, timestamp, format, graph) "
                       "VALUES (?1, ?2, ?3, 'json', ?4)");
  st.bind(1, id_);
  st.bind(2, snapshot.step);
  st.bind(3, snapshot.time_ns);
  st.bind(4, std::string_view(snapshot.json));
  st.run();
}

void SessionWriter::finish() {
  require_open(impl_ != nullptr, finished_, id_, "finish");
  Impl& impl = *impl_;
  for (const char* sql : schema::query_indexes()) impl.db.exec(sql);
  sqlite::Transaction tx(impl.db);
  impl.write_op_stats();
  if (impl.min_start <= impl.max_end) {
    sqlite::Statement st(impl.db,
        "UPDATE Sessions SET start = CASE WHEN start = 0 THEN ?1 ELSE start END, "
        "end = max(end, ?2) WHERE id = ?3");
    st.bind(1, impl.min_start);
    st.bind(2, impl.max_end);
    st.bind(3, id_);
    st.run();
  }
  sqlite::Statement done(impl.db, "UPDATE Sessions SET complete = 1 WHERE id = ?1");
  done.bind(1, id_);
  done.run();
  tx.commit();
  finished_ = true;
}

}  // namespace rt::prof
