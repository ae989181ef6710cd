// layout_with_dot: one visible graph through Graphviz's dot (gvc/cgraph C API).
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <fmt/format.h>

#include <cmath>
#include <sstream>

#include "graph/layout_thread.h"
#include "rt/error.h"
#include "rt/viz/graph_layout.h"

namespace rt::viz {
namespace {

thread_local std::string t_graphviz_errors;

int collect_graphviz_error(char* message) {
  if (t_graphviz_errors.size() < 4096) t_graphviz_errors += message;
  return 0;
}

GVC_t* graphviz_context() {
  static GVC_t* gvc = [] {
    agseterrf(collect_graphviz_error);
    agseterr(AGERR);
    return gvContext();
  }();
  return gvc;
}

std::string inches(double points) { return fmt::format("{:.4f}", points / 72.0); }

char* cstr(std::string& s) { return s.data(); }

struct GraphCloser {
  GVC_t* gvc;
  bool laid_out = false;
  void operator()(Agraph_t* g) const {
    if (laid_out) gvFreeLayout(gvc, g);
    agclose(g);
  }
};

void set(void* obj, const char* name, std::string value) {
  std::string n = name, empty;
  agsafeset(obj, cstr(n), cstr(value), cstr(empty));
}

// A label of exactly w x h points that draws nothing: room for the title the view draws itself.
std::string fixed_box_label(Size s) {
  return fmt::format(
      "<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"0\"><TR>"
      "<TD FIXEDSIZE=\"TRUE\" WIDTH=\"{}\" HEIGHT=\"{}\"></TD></TR></TABLE>",
      int(std::ceil(s.w)), int(std::ceil(s.h)));
}

}  // namespace

std::shared_ptr<const GraphLayout> layout_with_dot(const LayoutInput& input) {
  if (!detail::on_layout_thread()) {
    std::ostringstream id;
    id << std::this_thread::get_id();
    throw Error("layout_with_dot: called on thread " + id.str() +
                ", but Graphviz is not thread-safe and runs only on a GraphLayouter's layout thread");
  }
  if (!input.graph) throw ValueError("layout_with_dot: no visible graph");
  const VisibleGraph& vg = *input.graph;
  if (input.node_sizes.size() != vg.nodes.size() || input.cluster_title_sizes.size() != vg.clusters.size())
    throw ValueError(fmt::format("layout_with_dot: {} node sizes and {} title sizes for {} nodes and {} clusters",
                                 input.node_sizes.size(), input.cluster_title_sizes.size(), vg.nodes.size(),
                                 vg.clusters.size()));
  auto out = std::make_shared<GraphLayout>();
  out->key = vg.key;
  out->layout_thread = std::this_thread::get_id();
  if (vg.nodes.empty()) return out;

  std::lock_guard<std::mutex> lock(detail::graphviz_mutex());
  t_graphviz_errors.clear();
  GVC_t* gvc = graphviz_context();
  std::string gname = "g";
  std::unique_ptr<Agraph_t, GraphCloser> graph(agopen(cstr(gname), Agdirected, nullptr), GraphCloser{gvc});
  if (!graph) throw Error("layout_with_dot: Graphviz could not create a graph: " + t_graphviz_errors);
  Agraph_t* g = graph.get();
  const LayoutStyle& st = input.style;
  set(g, "rankdir", "TB");
  set(g, "nodesep", inches(st.node_sep));
  set(g, "ranksep", inches(st.rank_sep));
  auto decl = [&](int kind, const char* name, const char* def) {
    std::string n = name, d = def;
    return agattr(g, kind, cstr(n), cstr(d));
  };
  decl(AGRAPH, "labeljust", "l");  // graph defaults: every cluster's title at its top left
  decl(AGRAPH, "labelloc", "t");
  decl(AGNODE, "shape", "box");
  decl(AGNODE, "fixedsize", "true");
  decl(AGNODE, "label", "");
  decl(AGNODE, "margin", "0");
  Agsym_t* width = decl(AGNODE, "width", "0.75");
  Agsym_t* height = decl(AGNODE, "height", "0.5");

  std::vector<Agraph_t*> subgraphs(vg.clusters.size(), nullptr);
  for (size_t c = 0; c < vg.clusters.size(); ++c) {
    const int parent = vg.clusters[c].parent;
    Agraph_t* owner = parent < 0 ? g : subgraphs[size_t(parent)];
    std::string name = fmt::format("cluster_{}", c);
    subgraphs[c] = agsubg(owner, cstr(name), 1);
    std::string html = fixed_box_label(input.cluster_title_sizes[c]);
    std::string label = "label";
    std::string empty;
    agsafeset(subgraphs[c], cstr(label), agstrdup_html(g, cstr(html)), cstr(empty));
    set(subgraphs[c], "margin", fmt::format("{:.1f}", st.cluster_margin));
  }

  std::vector<Agnode_t*> nodes(vg.nodes.size(), nullptr);
  for (size_t i = 0; i < vg.nodes.size(); ++i) {
    std::string name = fmt::format("n{}", i);
    nodes[i] = agnode(g, cstr(name), 1);
    std::string w = inches(std::ceil(input.node_sizes[i].w)), h = inches(std::ceil(input.node_sizes[i].h));
    agxset(nodes[i], width, cstr(w));
    agxset(nodes[i], height, cstr(h));
    if (const int parent = vg.nodes[i].parent; parent >= 0) agsubnode(subgraphs[size_t(parent)], nodes[i], 1);
  }
  std::vector<Agedge_t*> edges(vg.edges.size(), nullptr);
  for (size_t e = 0; e < vg.edges.size(); ++e)
    edges[e] = agedge(g, nodes[size_t(vg.edges[e].source)], nodes[size_t(vg.edges[e].target)], nullptr, 1);

  std::string engine = "dot";
  if (gvLayout(gvc, g, cstr(engine)) != 0)
    throw Error("layout_with_dot: Graphviz dot layout failed (is libgvplugin_dot_layout installed and registered "
                "with `dot -c`?): " + t_graphviz_errors);
  graph.get_deleter().laid_out = true;

  const boxf bb = GD_bb(g);
  const double x0 = bb.LL.x, y1 = bb.UR.y;
  auto flip = [&](pointf p) { return Point{p.x - x0, y1 - p.y}; };
  auto rect = [&](boxf b) { return Rect{b.LL.x - x0, y1 - b.UR.y, b.UR.x - b.LL.x, b.UR.y - b.LL.y}; };
  out->bounds = rect(bb);

  out->nodes.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Point c = flip(ND_coord(nodes[i]));
    const Size s = input.node_sizes[i];
    out->nodes.push_back({c.x - s.w / 2, c.y - s.h / 2, s.w, s.h});
  }
  out->edges.resize(edges.size());
  for (size_t e = 0; e < edges.size(); ++e) {
    const splines* spl = ED_spl(edges[e]);
    if (!spl || spl->size == 0) continue;
    EdgeSpline& s = out->edges[e];
    const bezier& bz = spl->list[0];
    for (int k = 0; k < bz.size; ++k) s.points.push_back(flip(bz.list[k]));
    if (bz.eflag) {
      s.has_head = true;
      s.head = flip(bz.ep);
    }
  }
  out->clusters.reserve(subgraphs.size());
  for (size_t c = 0; c < subgraphs.size(); ++c) {
    ClusterBox cb;
    cb.box = rect(GD_bb(subgraphs[c]));
    const Size t = input.cluster_title_sizes[c];
    cb.title = {cb.box.x + st.cluster_margin, cb.box.y + st.cluster_margin / 2, std::min(t.w, cb.box.w), t.h};
    if (const textlabel_t* l = GD_label(subgraphs[c]); l && l->set) {
      const Point p = flip(l->pos);
      cb.title = {p.x - l->dimen.x / 2, p.y - l->dimen.y / 2, l->dimen.x, l->dimen.y};
    }
    out->clusters.push_back(cb);
  }
  return out;
}

}  // namespace rt::viz
