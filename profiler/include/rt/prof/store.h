// rt/prof/store.h — the SQLite session store: one database file (WAL) holds many profiling
// sessions; the schema is documented in docs/store-schema.md (modelled on Nsight Systems' export).
//
//   rt::prof::Store store = rt::prof::Store::open(rt::prof::Store::default_path());
//   rt::prof::SessionWriter w = store.begin_session("resnet step", {{"device", "cpu"}});
//   w.append(delta);                  // call as often as the collector drains (one transaction each)
//   w.finish();                       // marks the session complete and builds the query indexes
//   for (const rt::prof::SessionInfo& s : store.list_sessions()) std::puts(s.name.c_str());
//   rt::prof::SessionData data = store.load_session(w.id());
//   std::vector<rt::prof::OpStats> top = store.top_ops(w.id());  // == key_averages(data)
//
// Contracts
// - Store::open creates the file and its parent directories, migrates an older schema in
//   place (PRAGMA user_version; see kMigrations in src/store/schema.cpp) and throws StoreError
//   when the file is not a RustyTorch store, was written by a newer schema, is locked past the
//   busy timeout, or cannot be created. It never crashes on a bad file.
// - A SessionWriter owns its own connection, so a Store (or another process) can read while a
//   session is being written: every append() is committed when it returns. Until finish() the
//   session has complete = 0; a process that dies mid-capture leaves a readable store whose
//   session stays incomplete. Destroying a writer without finish() also leaves it incomplete.
// - Strings: every append maps the caller's StringIds to the session's own ids, so each delta
//   may bring its own StringTable (or reuse one that only grows).
// - Session header fields of a delta: a non-zero start_ns/clock_offset_ns sets the session's,
//   end_ns extends it, dropped_records is added, metadata is merged; name/complete are ignored.
// - Autograd graphs (SessionData::graphs) are written whole by append()/append_graphs() into the
//   AutogradGraphs, AutogradGraphNodes and AutogradGraphEdges tables (schema 4) and read back by
//   load_session, in the order written; a malformed graph row throws StoreError naming the store.
// - Gradient histograms (SessionData::gradient_histograms) go to the GradientHistograms table (schema 6), one
//   row each, and load back in the order written; a row whose counts are not a JSON array of integers, or that
//   fails gradient_histogram_problem (gradient_histograms.h), throws StoreError naming the store and the row.
// - A Store is safe to share between threads (one mutex); a SessionWriter belongs to one thread.
// - Several processes may write one store at once, each its own session (the ranks of `rtorch launch
//   --store`): session ids come from one INSERT in a write transaction and every row id is in its session's
//   range (Note [Row ids]), so writers never collide; WAL lets readers go on while one writes, and a writer
//   waits up to busy_timeout_ms for another's commit before its write fails with StoreError.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rt/error.h"
#include "rt/export.h"
#include "rt/prof/events.h"
#include "rt/prof/summary.h"

RT_API_BEGIN

namespace rt::prof {

// Every store failure; what() names the file, the problem and the fix.
class StoreError : public rt::Error {
 public:
  using rt::Error::Error;
};

inline constexpr int kStoreSchemaVersion = 6;

struct StoreOptions {
  int busy_timeout_ms = 5000;  // how long to wait for another connection's lock before failing
};

struct SessionInfo {
  int64_t id = 0;
  std::string name;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t clock_offset_ns = 0;
  bool complete = false;
  uint64_t dropped_records = 0;
  int64_t created_unix_ns = 0;  // when begin_session ran (wall clock)
  int64_t op_count = 0;
  int64_t gpu_count = 0;
  int64_t memory_count = 0;
  std::unordered_map<std::string, std::string> metadata;  // the SessionMetadata rows
};

// A graph in a tool's own format (the GraphSnapshots table). The autograd graphs a Session captures
// are GraphRecords (events.h), stored in their own tables and loaded with the session.
struct GraphSnapshot {
  int64_t step = -1;       // -1: not tied to a step
  int64_t time_ns = 0;
  std::string json;        // opaque to the store
};

namespace sqlite { class Connection; }

class SessionWriter {
 public:
  SessionWriter(SessionWriter&&) noexcept;
  SessionWriter& operator=(SessionWriter&&) noexcept;
  ~SessionWriter();

  int64_t id() const { return id_; }

  // Writes every record and string of `delta` in one transaction.
  void append(const SessionData& delta);
  // Per-kind appends; `strings` resolves the records' StringIds.
  void append_threads(std::span<const ThreadRecord> threads, const StringTable& strings);
  void append_ops(std::span<const OpRecord> ops, const StringTable& strings);
  void append_gpu(std::span<const GpuActivityRecord> gpu, const StringTable& strings);
  void append_collectives(std::span<const CollectiveRecord> collectives, const StringTable& strings);
  void append_memory(std::span<const MemoryRecord> memory, const StringTable& strings);
  void append_counters(std::span<const CounterRecord> counters, const StringTable& strings);
  void append_steps(std::span<const StepRecord> steps);
  void append_gradient_histograms(std::span<const GradientHistogramRecord> histograms, const StringTable& strings);
  // Autograd graphs (AutogradGraphs, AutogradGraphNodes, AutogradGraphEdges); each one is written whole.
  void append_graphs(std::span<const GraphRecord> graphs);
  void add_dropped_records(uint64_t n);
  void write_graph_snapshot(const GraphSnapshot& snapshot);

  // Marks the session complete, fills start/end from the records when unset, stores the
  // op statistics (OpStats table) and builds the indexes. Calling it twice is an error.
  void finish();
  bool finished() const { return finished_; }

 private:
  friend class Store;
  struct Impl;
  SessionWriter(std::unique_ptr<Impl> impl, int64_t id);
  static SessionWriter attach(const std::filesystem::path& path, int busy_timeout_ms, int64_t id);
  std::unique_ptr<Impl> impl_;
  int64_t id_ = 0;
  bool finished_ = false;
};

class Store {
 public:
  // ~/.local/share/rustytorch/runs.sqlite ($XDG_DATA_HOME/rustytorch/runs.sqlite when set).
  static std::filesystem::path default_path();
  static Store open(const std::filesystem::path& path, StoreOptions options = {});

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  const std::filesystem::path& path() const { return path_; }
  int schema_version() const;

  SessionWriter begin_session(std::string_view name,
                              const std::unordered_map<std::string, std::string>& metadata = {});
  // begin_session + append + finish (finish only when data.complete); returns the new id.
  int64_t save_session(const SessionData& data);

  // Builds the query indexes that SessionWriter::finish() builds (docs/store-schema.md, Indexes). Called on a
  // new store that several processes will write at once (`rtorch launch --store`), it keeps the first
  // finish() from indexing every other session's rows while their writers wait for the lock: the writers
  // then maintain the indexes as they insert.
  void build_query_indexes();

  std::vector<SessionInfo> list_sessions() const;
  SessionInfo session_info(int64_t id) const;
  SessionData load_session(int64_t id) const;
  std::vector<GraphSnapshot> graph_snapshots(int64_t id) const;
  void delete_session(int64_t id);

  // Same rows as key_averages(load_session(id), group_by_input_shape): read from the OpStats
  // table with SQL for finished sessions, computed from the records for unfinished ones.
  std::vector<OpStats> top_ops(int64_t id, bool group_by_input_shape = false) const;

 private:
  Store(std::filesystem::path path, StoreOptions options, std::unique_ptr<sqlite::Connection> db);
  void require_session(int64_t id) const;
  std::filesystem::path path_;
  StoreOptions options_;
  std::unique_ptr<sqlite::Connection> db_;
  struct Lock;
  std::unique_ptr<Lock> lock_;
};

}  // namespace rt::prof

RT_API_END
