// viz_graph_bench — Graph panel costs on an autograd graph: model build, visible graph, Graphviz dot layout
// (collapsed, one block expanded, everything expanded) and a cache hit.
//
//   build/bin/viz_graph_bench                  # synthetic: 4 blocks x 51 heads (1,986 nodes), 5 runs per row
//   build/bin/viz_graph_bench --heads 8 --repeat 3 --quick
//   # the real char transformer's graph, as a profiled run stored it (its latest backward's):
//   build/bin/rtorch run --store /tmp/ct.sqlite samples/char_transformer.py --quick
//   build/bin/viz_graph_bench --store /tmp/ct.sqlite          # DB[:N]: session N, default the newest
//
// The synthetic graph (tests/visualizers/test_graph_fixtures.h): embeddings, 4 transformer blocks with
// nested module paths ("blocks.2.attn.heads.17"), ln_f, head, loss. A stored graph is the autograd graph a
// profiling session kept (rt::prof::SessionData::graphs, store schema 4): every op of the model's forward,
// with the module paths its Python or C++ modules recorded. Text is measured as 7 pt per character and 14 pt
// per line, roughly Dear ImGui's default font. Each layout row clears the cache first, so it times Graphviz,
// not the cache.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "rt/prof/store.h"
#include "rt/viz/graph_layouter.h"
#include "test_graph_fixtures.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace rt::viz;

struct Row {
  std::string what;
  size_t nodes = 0, edges = 0, clusters = 0;
  std::vector<double> ms;
};

double time_ms(const std::function<void()>& f) {
  const auto t0 = Clock::now();
  f();
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

void print(const std::vector<Row>& rows) {
  fmt::print("| {:<40} | {:>7} | {:>7} | {:>8} | {:>10} | {:>10} |\n", "case", "nodes", "edges", "clusters",
             "median ms", "min ms");
  fmt::print("|{:-<42}|{:->9}|{:->9}|{:->10}|{:->12}|{:->12}|\n", "", "", "", "", "", "");
  for (auto r : rows) {
    std::sort(r.ms.begin(), r.ms.end());
    fmt::print("| {:<40} | {:>7} | {:>7} | {:>8} | {:>10.3f} | {:>10.3f} |\n", r.what, r.nodes, r.edges, r.clusters,
               r.ms[r.ms.size() / 2], r.ms.front());
  }
}

// The latest autograd graph of a store session ("runs.sqlite" or "runs.sqlite:3"); exits with a message
// when there is none.
rt::autograd::GraphSnapshot stored_graph(const std::string& argument, std::string& described) {
  std::string path = argument;
  int64_t id = 0;
  if (const size_t colon = argument.rfind(':'); colon != std::string::npos && colon + 1 < argument.size() &&
      argument.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
    path = argument.substr(0, colon);
    id = std::stoll(argument.substr(colon + 1));
  }
  try {
    rt::prof::Store store = rt::prof::Store::open(path);
    if (id == 0) {
      const auto sessions = store.list_sessions();
      if (sessions.empty()) throw rt::Error(path + " has no sessions");
      id = sessions.back().id;
    }
    rt::prof::SessionData data = store.load_session(id);
    if (data.graphs.empty())
      throw rt::Error(fmt::format("session {} of {} has no autograd graph: record one with `rtorch run --store {} "
                                  "samples/char_transformer.py --quick`",
                                  id, path, path));
    described = fmt::format("{} session {} ('{}'), backward #{}", path, id, data.name, data.graphs.back().backward_index);
    return std::move(data.graphs.back().graph);
  } catch (const rt::Error& e) {
    fmt::print(stderr, "viz_graph_bench: {}\n", e.what());
    std::exit(2);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int blocks = 4, heads = 51, repeat = 5;
  std::string store;
  for (int i = 1; i < argc; ++i) {
    auto value = [&](const char* flag) {
      if (i + 1 >= argc) {
        fmt::print(stderr, "viz_graph_bench: {} needs a value\n", flag);
        std::exit(2);
      }
      return std::atoi(argv[++i]);
    };
    if (!std::strcmp(argv[i], "--blocks")) blocks = value("--blocks");
    else if (!std::strcmp(argv[i], "--heads")) heads = value("--heads");
    else if (!std::strcmp(argv[i], "--repeat")) repeat = value("--repeat");
    else if (!std::strcmp(argv[i], "--quick")) repeat = 1;
    else if (!std::strcmp(argv[i], "--store") && i + 1 < argc) store = argv[++i];
    else {
      fmt::print(stderr, "usage: viz_graph_bench [--blocks N] [--heads N] [--store DB[:N]] [--repeat N] [--quick]\n");
      return 2;
    }
  }
  if (blocks < 1 || heads < 1 || repeat < 1) {
    fmt::print(stderr, "viz_graph_bench: --blocks, --heads and --repeat must be at least 1\n");
    return 2;
  }

  std::string source = fmt::format("synthetic: {} blocks x {} heads", blocks, heads);
  const auto snapshot = store.empty() ? fixtures::transformer(blocks, heads) : stored_graph(store, source);
  GraphModelOptions opts;
  opts.max_visible_nodes = snapshot.nodes.size() + 1;  // the bench lays out the fully expanded graph too
  GraphLayouter layouter([](std::string_view s) { return Size{7.0 * double(s.size()), 14.0}; });

  std::vector<Row> rows;
  Row build{"GraphModel from snapshot", snapshot.nodes.size(), snapshot.edges.size(), 0, {}};
  for (int r = 0; r < repeat; ++r) build.ms.push_back(time_ms([&] { GraphModel m(snapshot, opts); }));
  rows.push_back(build);

  GraphModel model(snapshot, opts);
  auto layout_row = [&](const std::string& what) {
    const auto shared = std::make_shared<const VisibleGraph>(model.visible_graph());
    const VisibleGraph& g = *shared;
    Row vis{"visible graph: " + what, g.nodes.size(), g.edges.size(), g.clusters.size(), {}};
    for (int r = 0; r < repeat; ++r) vis.ms.push_back(time_ms([&] { (void)model.visible_graph(); }));
    rows.push_back(vis);
    Row row{"dot layout: " + what, g.nodes.size(), g.edges.size(), g.clusters.size(), {}};
    for (int r = 0; r < repeat; ++r) {
      layouter.clear_cache();
      row.ms.push_back(time_ms([&] {
        const LayoutResult res = layouter.wait(layouter.request(shared));
        if (res.status != LayoutStatus::Ready) {
          fmt::print(stderr, "viz_graph_bench: layout of {} failed: {}\n", what, res.error);
          std::exit(1);
        }
      }));
    }
    rows.push_back(row);
    Row hit{"cache hit: " + what, g.nodes.size(), g.edges.size(), g.clusters.size(), {}};
    for (int r = 0; r < repeat; ++r) hit.ms.push_back(time_ms([&] { layouter.wait(layouter.request(shared)); }));
    rows.push_back(hit);
  };

  layout_row("collapsed (default)");
  if (const int block = model.find_cluster("blocks.1"); block >= 0) {
    for (size_t c = 0; c < model.cluster_count(); ++c)
      if (model.is_ancestor(block, int(c))) model.expand(int(c));
    layout_row("blocks.1 fully expanded");
  }
  for (size_t c = 0; c < model.cluster_count(); ++c) model.expand(int(c));
  layout_row("fully expanded");

  fmt::print("viz_graph_bench: {}, {} nodes, {} edges, {} module clusters, {} runs per row\n", source,
             snapshot.nodes.size(), snapshot.edges.size(), model.cluster_count() - 1, repeat);
  print(rows);
  return 0;
}
