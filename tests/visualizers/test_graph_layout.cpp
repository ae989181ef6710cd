// Graphviz layouts through GraphLayouter: geometry sanity, cluster rectangles, cache, the layout thread,
// latest-request-wins; hit-testing and pan/zoom on real layouts.
#include <catch2/catch.hpp>

#include <cmath>
#include <thread>

#include "rt/viz/graph_layouter.h"
#include "rt/viz/graph_viewport.h"
#include "test_graph_fixtures.h"

using namespace rt::viz;
namespace fx = rt::viz::fixtures;

namespace {

Size fixed_width(std::string_view s) { return {7.0 * double(s.size()), 14.0}; }

std::shared_ptr<const GraphLayout> lay_out(GraphLayouter& layouter, const VisibleGraph& g) {
  const LayoutResult r = layouter.wait(layouter.request(g));
  INFO(r.error);
  REQUIRE(r.status == LayoutStatus::Ready);
  REQUIRE(r.layout);
  return r.layout;
}

double distance_to_rect(Point p, const Rect& r) {
  const double dx = std::max({r.x - p.x, 0.0, p.x - r.right()});
  const double dy = std::max({r.y - p.y, 0.0, p.y - r.bottom()});
  return std::hypot(dx, dy);
}

// Every visible node has a box of its measured size inside the bounds, no two boxes overlap, every
// edge runs from its source's border to its target's, and each cluster rectangle holds its title and
// every node and cluster inside it.
void require_sound_layout(const VisibleGraph& g, const GraphLayout& layout) {
  const LayoutInput in = measure_graph(std::make_shared<VisibleGraph>(g), fixed_width);
  REQUIRE(layout.key == g.key);
  REQUIRE(layout.nodes.size() == g.nodes.size());
  REQUIRE(layout.edges.size() == g.edges.size());
  REQUIRE(layout.clusters.size() == g.clusters.size());
  for (size_t i = 0; i < layout.nodes.size(); ++i) {
    const Rect& r = layout.nodes[i];
    CHECK(r.w == in.node_sizes[i].w);
    CHECK(r.h == in.node_sizes[i].h);
    REQUIRE(layout.bounds.contains(r, 1.0));
  }
  size_t overlaps = 0;
  for (size_t i = 0; i < layout.nodes.size(); ++i)
    for (size_t j = i + 1; j < layout.nodes.size(); ++j)
      if (layout.nodes[i].overlaps(layout.nodes[j])) {
        ++overlaps;
        UNSCOPED_INFO("node " << i << " '" << g.nodes[i].title << "' overlaps node " << j << " '" << g.nodes[j].title << "'");
      }
  REQUIRE(overlaps == 0);
  for (size_t e = 0; e < layout.edges.size(); ++e) {
    const EdgeSpline& s = layout.edges[e];
    REQUIRE(s.points.size() >= 4);
    REQUIRE((s.points.size() - 1) % 3 == 0);
    REQUIRE(s.has_head);
    CHECK(distance_to_rect(s.points.front(), layout.nodes[size_t(g.edges[e].source)]) < 2.0);
    CHECK(distance_to_rect(s.head, layout.nodes[size_t(g.edges[e].target)]) < 2.0);
  }
  for (size_t c = 0; c < layout.clusters.size(); ++c) {
    const ClusterBox& cb = layout.clusters[c];
    CHECK(cb.box.contains(cb.title, 0.5));
    CHECK(cb.title.w >= in.cluster_title_sizes[c].w);
    CHECK(cb.title.h >= in.cluster_title_sizes[c].h);
    if (g.clusters[c].parent >= 0) REQUIRE(layout.clusters[size_t(g.clusters[c].parent)].box.contains(cb.box, 0.5));
  }
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int c = g.nodes[i].parent; c >= 0; c = g.clusters[size_t(c)].parent) {
      INFO("node '" << g.nodes[i].title << "' in cluster '" << g.clusters[size_t(c)].title << "'");
      REQUIRE(layout.clusters[size_t(c)].box.contains(layout.nodes[i], 0.5));
      REQUIRE_FALSE(layout.nodes[i].overlaps(layout.clusters[size_t(c)].title));
    }
}

void expand_all(GraphModel& model) {
  for (size_t c = 0; c < model.cluster_count(); ++c) REQUIRE(model.expand(int(c)).expanded);
}

}  // namespace

TEST_CASE("layouts are sound for chains, diamonds, MLPs and a 300-node transformer") {
  GraphLayouter layouter(fixed_width);
  SECTION("chain") {
    GraphModel model(fx::chain(12));
    const auto g = model.visible_graph();
    const auto layout = lay_out(layouter, g);
    require_sound_layout(g, *layout);
    // dot ranks a chain top to bottom: each op below its input
    for (const auto& e : g.edges) CHECK(layout->nodes[size_t(e.source)].y < layout->nodes[size_t(e.target)].y);
  }
  SECTION("diamond") {
    GraphModel model(fx::diamond());
    const auto g = model.visible_graph();
    require_sound_layout(g, *lay_out(layouter, g));
  }
  SECTION("MLP with modules, collapsed and expanded") {
    GraphModel model(fx::mlp());
    auto g = model.visible_graph();
    require_sound_layout(g, *lay_out(layouter, g));
    expand_all(model);
    g = model.visible_graph();
    REQUIRE(g.clusters.size() == 4);  // net, net.fc1, net.act, net.fc2
    require_sound_layout(g, *lay_out(layouter, g));
  }
  SECTION("transformer-like graph with nested modules") {
    GraphModel model(fx::transformer(4, 5));
    REQUIRE(model.op_count() >= 300);
    auto g = model.visible_graph();
    require_sound_layout(g, *lay_out(layouter, g));
    model.expand(model.find_cluster("blocks.1.attn.heads.2"));
    model.expand(model.find_cluster("blocks.3.mlp"));
    g = model.visible_graph();
    require_sound_layout(g, *lay_out(layouter, g));
    expand_all(model);
    g = model.visible_graph();
    REQUIRE(g.nodes.size() == model.op_count());
    require_sound_layout(g, *lay_out(layouter, g));
  }
  SECTION("empty graph") {
    GraphModel model(rt::autograd::GraphSnapshot{});
    const auto layout = lay_out(layouter, model.visible_graph());
    CHECK(layout->nodes.empty());
    CHECK(layout->bounds.w == 0);
  }
}

TEST_CASE("the cache returns the same layout object for the same expansion set") {
  GraphLayouter layouter(fixed_width);
  GraphModel model(fx::transformer(2, 2));
  const auto collapsed = lay_out(layouter, model.visible_graph());
  model.expand(model.find_cluster("blocks.0"));
  const auto expanded = lay_out(layouter, model.visible_graph());
  CHECK(expanded != collapsed);
  CHECK(layouter.layouts_run() == 2);

  model.collapse(model.find_cluster("blocks"));
  const LayoutTicket t = layouter.request(model.visible_graph());
  const LayoutResult r = layouter.poll(t);  // no waiting: cached
  REQUIRE(r.status == LayoutStatus::Ready);
  CHECK(r.layout == collapsed);
  model.expand(model.find_cluster("blocks"));
  CHECK(lay_out(layouter, model.visible_graph()) == expanded);
  CHECK(layouter.layouts_run() == 2);
  CHECK(layouter.cache_size() == 2);
  CHECK(layouter.cached(model.visible_graph().key) == expanded);

  layouter.clear_cache();
  CHECK(layouter.cache_size() == 0);
  CHECK(lay_out(layouter, model.visible_graph()) != expanded);
  CHECK(layouter.layouts_run() == 3);
}

TEST_CASE("the cache keeps the most recently used layouts") {
  GraphLayouterOptions opts;
  opts.cache_capacity = 2;
  GraphLayouter layouter(fixed_width, opts);
  GraphModel a(fx::chain(3)), b(fx::chain(4)), c(fx::diamond());
  const auto la = lay_out(layouter, a.visible_graph());
  lay_out(layouter, b.visible_graph());
  CHECK(lay_out(layouter, a.visible_graph()) == la);  // touches a
  lay_out(layouter, c.visible_graph());               // evicts b
  CHECK(layouter.cached(a.visible_graph().key) == la);
  CHECK(layouter.cached(b.visible_graph().key) == nullptr);
  CHECK(layouter.cache_size() == 2);
}

TEST_CASE("only the layout thread calls Graphviz") {
  GraphModel model(fx::mlp());
  const auto g = std::make_shared<VisibleGraph>(model.visible_graph());
  CHECK_THROWS_WITH(layout_with_dot(measure_graph(g, fixed_width)), Catch::Contains("not thread-safe"));
  GraphLayouter layouter(fixed_width);
  GraphLayouter second(fixed_width);
  const auto layout = lay_out(layouter, *g);
  CHECK(layout->layout_thread == layouter.thread_id());
  CHECK(layout->layout_thread != std::this_thread::get_id());
  model.expand(model.find_cluster("net"));
  const auto other = lay_out(second, model.visible_graph());
  CHECK(other->layout_thread == second.thread_id());
  CHECK(second.thread_id() != layouter.thread_id());
}

TEST_CASE("the latest request wins and superseded requests never run") {
  GraphLayouter layouter(fixed_width);
  GraphModel big(fx::transformer(4, 3));
  expand_all(big);
  GraphModel middle(fx::mlp()), last(fx::diamond());
  const LayoutTicket t1 = layouter.request(big.visible_graph());
  const LayoutTicket t2 = layouter.request(middle.visible_graph());
  const LayoutTicket t3 = layouter.request(last.visible_graph());
  CHECK(t1 < t2);
  CHECK(t2 < t3);
  const LayoutResult r3 = layouter.wait(t3);
  REQUIRE(r3.status == LayoutStatus::Ready);
  CHECK(r3.layout->key == last.visible_graph().key);
  // Whether t1 and t2 started before being replaced depends on scheduling; either way they end
  // Ready (ran, and cached) or Superseded (never ran, nothing cached), never Pending.
  for (auto [t, key] : {std::pair{t1, big.visible_graph().key}, std::pair{t2, middle.visible_graph().key}}) {
    const LayoutResult r = layouter.poll(t);
    REQUIRE(r.status != LayoutStatus::Pending);
    if (r.status == LayoutStatus::Ready) CHECK(layouter.cached(key) == r.layout);
    if (r.status == LayoutStatus::Superseded) CHECK(layouter.cached(key) == nullptr);
  }
  CHECK(layouter.layouts_run() <= 3);
  CHECK_THROWS_AS(layouter.poll(t3 + 1), rt::IndexError);
}

TEST_CASE("destroying a layouter with running and queued work returns") {
  GraphModel big(fx::transformer(4, 3));
  expand_all(big);
  GraphModel small(fx::diamond());
  auto layouter = std::make_unique<GraphLayouter>(fixed_width);
  const LayoutTicket t1 = layouter->request(big.visible_graph());
  const LayoutTicket t2 = layouter->request(small.visible_graph());
  CHECK(t2 > t1);
  layouter.reset();  // fails by hanging (ctest timeout) or by a sanitizer report from the worker
  CHECK_FALSE(layouter);
}

TEST_CASE("a failing text measure is reported, not laid out") {
  GraphLayouter layouter([](std::string_view) { return Size{-1, 14}; });
  GraphModel model(fx::diamond());
  CHECK_THROWS_AS(layouter.request(model.visible_graph()), rt::ValueError);
}

TEST_CASE("hit-testing finds nodes, edges and clusters") {
  GraphLayouter layouter(fixed_width);
  GraphModel model(fx::mlp());
  model.expand(model.find_cluster("net"));
  const auto g = model.visible_graph();
  const auto layout = lay_out(layouter, g);
  for (size_t i = 0; i < layout->nodes.size(); ++i) {
    const GraphHit h = hit_test(*layout, layout->nodes[i].center());
    CHECK(h.kind == GraphHit::Kind::Node);
    CHECK(h.index == int(i));
  }
  size_t edges_checked = 0;
  for (size_t e = 0; e < layout->edges.size(); ++e) {
    const auto line = flatten_spline(layout->edges[e]);
    const Point mid = line[line.size() / 2];
    bool in_node = false;
    for (const auto& r : layout->nodes) in_node |= r.contains(mid);
    if (in_node) continue;
    const GraphHit h = hit_test(*layout, {mid.x + 1.0, mid.y}, 3.0);
    CHECK(h.kind == GraphHit::Kind::Edge);
    ++edges_checked;
  }
  CHECK(edges_checked > 0);
  REQUIRE(layout->clusters.size() == 1);
  const GraphHit c = hit_test(*layout, layout->clusters[0].title.center(), 0.5);
  CHECK(c.kind == GraphHit::Kind::Cluster);
  CHECK(c.index == 0);
  CHECK(hit_test(*layout, {layout->bounds.right() + 50, -50}).kind == GraphHit::Kind::None);
}

TEST_CASE("flatten_spline follows the Bezier control points") {
  EdgeSpline s;
  s.points = {{0, 0}, {0, 10}, {10, 10}, {10, 20}};
  const auto line = flatten_spline(s, 4);
  REQUIRE(line.size() == 5);
  CHECK(line.front().x == 0);
  CHECK(line.back().x == Approx(10));
  CHECK(line.back().y == Approx(20));
  CHECK(line[2].x == Approx(5));
  CHECK(line[2].y == Approx(10));
  CHECK(distance_to_segment({5, 5}, {0, 0}, {10, 0}) == Approx(5));
  CHECK(distance_to_segment({-3, 4}, {0, 0}, {10, 0}) == Approx(5));
}

TEST_CASE("viewport: fit, zoom about the cursor, pan") {
  GraphViewport vp(0.1, 4.0);
  const Rect graph{0, 0, 400, 200};
  vp.fit(graph, {220, 220}, 10);
  CHECK(vp.scale() == Approx(0.5));
  const Point tl = vp.to_screen(Point{0, 0}), br = vp.to_screen(Point{400, 200});
  CHECK(tl.x == Approx(10));
  CHECK(br.x == Approx(210));
  CHECK((tl.y + br.y) / 2 == Approx(110));  // centred vertically

  const Point cursor{60, 80};
  const Point under = vp.to_graph(cursor);
  vp.zoom_about(cursor, 2.0);
  CHECK(vp.scale() == Approx(1.0));
  CHECK(vp.to_graph(cursor).x == Approx(under.x));
  CHECK(vp.to_graph(cursor).y == Approx(under.y));
  vp.zoom_about(cursor, 100.0);
  CHECK(vp.scale() == Approx(4.0));  // clamped
  CHECK(vp.to_graph(cursor).x == Approx(under.x));

  const Point before = vp.to_screen(Point{7, 7});
  vp.pan({5, -3});
  CHECK(vp.to_screen(Point{7, 7}).x == Approx(before.x + 5));
  CHECK(vp.to_screen(Point{7, 7}).y == Approx(before.y - 3));
  vp.center_on({100, 50}, {110, 110});
  CHECK(vp.to_screen(Point{100, 50}).x == Approx(110));

  const Rect r = vp.to_screen(Rect{1, 2, 3, 4});
  CHECK(r.w == Approx(12));
  vp.fit(Rect{}, {100, 100});
  CHECK(vp.scale() == 1.0);
  CHECK_THROWS_AS(vp.zoom_about(cursor, 0.0), rt::ValueError);
  CHECK_THROWS_AS(GraphViewport(0, 1), rt::ValueError);
}
