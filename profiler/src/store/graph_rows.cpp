#include "store/graph_rows.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include <unordered_map>

#include "rt/prof/store.h"
#include "store/schema.h"

namespace rt::prof {
namespace {

std::string shape_text(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

std::string shapes_text(const std::vector<Shape>& shapes) {
  std::string out = "[";
  for (size_t i = 0; i < shapes.size(); ++i) out += (i ? ", " : "") + shape_text(shapes[i]);
  return out + "]";
}

[[noreturn]] void malformed(const sqlite::Connection& db, int64_t session, const std::string& what) {
  throw StoreError(fmt::format("store {} is corrupt: session {} autograd graph: {}; restore the file from a "
                               "copy, or record the session again",
                               db.path().string(), session, what));
}

Shape parse_shape(const nlohmann::json& j, bool& ok) {
  Shape s;
  if (!j.is_array()) ok = false;
  else
    for (const auto& d : j) {
      if (!d.is_number_integer()) ok = false;
      else s.push_back(d.get<int64_t>());
    }
  return s;
}

Shape read_shape(const sqlite::Connection& db, int64_t session, const std::string& text) {
  bool ok = true;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  Shape s = parse_shape(j, ok);
  if (!ok) malformed(db, session, fmt::format("shape '{}' is not a list of integers", text));
  return s;
}

std::vector<Shape> read_shapes(const sqlite::Connection& db, int64_t session, const std::string& text) {
  bool ok = true;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  std::vector<Shape> out;
  if (!j.is_array()) ok = false;
  else
    for (const auto& s : j) out.push_back(parse_shape(s, ok));
  if (!ok) malformed(db, session, fmt::format("output shapes '{}' are not a list of integer lists", text));
  return out;
}

}  // namespace

GraphRowWriter::GraphRowWriter(sqlite::Connection& db)
    : graph_(db, "INSERT INTO AutogradGraphs VALUES (?1,?2,?3,?4,?5,?6,?7,?8)"),
      node_(db, "INSERT INTO AutogradGraphNodes VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)"),
      edge_(db, "INSERT INTO AutogradGraphEdges VALUES (?1,?2,?3,?4,?5,?6,?7)") {}

void GraphRowWriter::write(const GraphRecord& r, int64_t session, GraphRowCounters& n,
                           const std::function<uint32_t(const std::string&)>& intern) {
  const int64_t base = schema::session_base(session);
  const int64_t graph_id = base | ++n.graphs;
  graph_.bind(1, graph_id);
  graph_.bind(2, session);
  graph_.bind(3, r.time_ns);
  graph_.bind(4, r.step);
  graph_.bind(5, int64_t(r.backward_index));
  if (r.thread == 0) graph_.bind_null(6);
  else graph_.bind(6, int64_t(r.thread));
  graph_.bind(7, int64_t(r.graph.nodes.size()));
  graph_.bind(8, int64_t(r.graph.edges.size()));
  graph_.run();
  for (const autograd::GraphNodeInfo& node : r.graph.nodes) {
    const std::string outputs = shapes_text(node.output_shapes);
    const std::string leaf = shape_text(node.leaf_shape);
    node_.bind(1, base | ++n.nodes);
    node_.bind(2, session);
    node_.bind(3, graph_id);
    node_.bind(4, int64_t(node.id));
    node_.bind_string_id(5, base, intern(node.name));
    node_.bind(6, int64_t(node.sequence_nr));
    node_.bind_string_id(7, base, intern(node.forward_op));
    node_.bind_string_id(8, base, intern(node.module));
    node_.bind(9, std::string_view(outputs));
    node_.bind(10, int64_t(node.is_leaf));
    if (node.is_leaf) node_.bind(11, std::string_view(leaf));
    else node_.bind_null(11);
    node_.run();
  }
  for (const autograd::GraphEdgeInfo& edge : r.graph.edges) {
    const std::string shape = shape_text(edge.shape);
    edge_.bind(1, base | ++n.edges);
    edge_.bind(2, session);
    edge_.bind(3, graph_id);
    edge_.bind(4, int64_t(edge.from));
    edge_.bind(5, int64_t(edge.to));
    edge_.bind(6, int64_t(edge.input_nr));
    edge_.bind(7, std::string_view(shape));
    edge_.run();
  }
}

void read_graphs(sqlite::Connection& db, int64_t id, SessionData& d) {
  const auto range = [&](const char* sql) {
    sqlite::Statement st(db, sql);
    st.bind(1, schema::session_base(id));
    st.bind(2, schema::session_end(id));
    return st;
  };
  const auto name = [&](const sqlite::Statement& st, int column) -> std::string {
    if (st.is_null(column)) return {};
    const StringId local = schema::local_id(st.int64(column));
    if (local >= d.strings.size()) malformed(db, id, fmt::format("string id {} does not exist", local));
    return d.strings.at(local);
  };
  std::unordered_map<int64_t, size_t> index;  // AutogradGraphs.id -> d.graphs position
  {
    auto st = range("SELECT id, timestamp, step, backwardIndex, threadId FROM AutogradGraphs "
                    "WHERE id >= ?1 AND id < ?2 ORDER BY id");
    while (st.step()) {
      index.emplace(st.int64(0), d.graphs.size());
      GraphRecord r;
      r.time_ns = st.int64(1);
      r.step = st.int64(2);
      r.backward_index = uint64_t(st.int64(3));
      r.thread = st.is_null(4) ? 0 : uint64_t(st.int64(4));
      d.graphs.push_back(std::move(r));
    }
  }
  if (index.empty()) return;
  const auto graph_of = [&](int64_t graph_id, const char* what) -> autograd::GraphSnapshot& {
    const auto it = index.find(graph_id);
    if (it == index.end()) malformed(db, id, fmt::format("{} of graph {} that does not exist", what, graph_id));
    return d.graphs[it->second].graph;
  };
  {
    auto st = range("SELECT graphId, nodeId, nameId, sequenceNr, forwardOpId, moduleId, outputShapes, isLeaf, "
                    "leafShape FROM AutogradGraphNodes WHERE id >= ?1 AND id < ?2 ORDER BY id");
    while (st.step()) {
      autograd::GraphNodeInfo n;
      n.id = uint64_t(st.int64(1));
      n.name = name(st, 2);
      n.sequence_nr = uint64_t(st.int64(3));
      n.forward_op = name(st, 4);
      n.module = name(st, 5);
      n.output_shapes = read_shapes(db, id, st.text(6));
      n.is_leaf = st.int64(7) != 0;
      if (n.is_leaf && !st.is_null(8)) n.leaf_shape = read_shape(db, id, st.text(8));
      graph_of(st.int64(0), "a node").nodes.push_back(std::move(n));
    }
  }
  {
    auto st = range("SELECT graphId, fromNode, toNode, inputNr, shape FROM AutogradGraphEdges "
                    "WHERE id >= ?1 AND id < ?2 ORDER BY id");
    while (st.step()) {
      autograd::GraphEdgeInfo e;
      e.from = uint64_t(st.int64(1));
      e.to = uint64_t(st.int64(2));
      e.input_nr = uint32_t(st.int64(3));
      e.shape = read_shape(db, id, st.text(4));
      graph_of(st.int64(0), "an edge").edges.push_back(std::move(e));
    }
  }
}

}  // namespace rt::prof
