// Writing and reading the autograd graph tables (AutogradGraphs, AutogradGraphNodes,
// AutogradGraphEdges; docs/store-schema.md) for SessionWriter and read_session.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "rt/prof/events.h"
#include "store/sqlite_connection.h"

namespace rt::prof {

// The session's row numbers in the three tables (Note [Row ids]).
struct GraphRowCounters {
  int64_t graphs = 0, nodes = 0, edges = 0;
};

class GraphRowWriter {
 public:
  explicit GraphRowWriter(sqlite::Connection& db);
  // Writes one graph; `intern` returns the session's local StringIds id of a name (writing it when new).
  // Call inside the writer's transaction.
  void write(const GraphRecord& record, int64_t session, GraphRowCounters& counters,
             const std::function<uint32_t(const std::string&)>& intern);

 private:
  sqlite::Statement graph_, node_, edge_;
};

// Appends session `id`'s graphs to d.graphs (d.strings must already hold the session's strings).
// Throws StoreError naming the store when a row is malformed (a shape column that is not a list of
// integers, a node or edge of a graph that does not exist).
void read_graphs(sqlite::Connection& db, int64_t id, SessionData& d);

}  // namespace rt::prof
