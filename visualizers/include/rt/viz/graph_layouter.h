// rt/viz/graph_layouter.h — runs graph layouts on one layout thread and caches them, so the GUI thread
// never waits for Graphviz and toggling a cluster back shows its layout at once.
//
//   rt::viz::GraphLayouter layouter([](std::string_view s) { auto v = ImGui::CalcTextSize(...); return ...; });
//   ticket_ = layouter.request(model.visible_graph());        // after every expand/collapse
//   // each frame:
//   rt::viz::LayoutResult r = layouter.poll(ticket_);
//   if (r.status == rt::viz::LayoutStatus::Ready) draw(*r.layout);
//   else if (r.status == rt::viz::LayoutStatus::Failed) show(r.error);
//   else draw_previous_layout_with_a_spinner();
//
// Note [One Graphviz thread]
// Graphviz keeps global state and is not thread-safe. Every Graphviz call happens inside
// layout_with_dot, which checks that it runs on a layout thread (a GraphLayouter's worker) and holds
// a process-wide mutex, so even two layouters (two graph panels) never run Graphviz concurrently.
//
// Contracts
// - request() measures the node labels with the TextMeasure on the calling thread (the view's
//   thread), then queues the layout. It never blocks on a running layout.
// - The latest request wins: a queued request that a newer one replaces never runs and its ticket
//   reports Superseded. A layout already running finishes (Graphviz cannot be interrupted), is cached,
//   and its ticket reports Ready.
// - The cache is keyed by VisibleGraph::key (graph fingerprint + expansion set); a request for a cached
//   key is Ready at once and returns the same GraphLayout object. It keeps the most recently used
//   `cache_capacity` layouts. clear_cache() when the text metrics change (font size).
// - The destructor drops queued requests, waits for a running layout to end and joins the thread.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>

#include "rt/viz/graph_layout.h"

namespace rt::viz {

using LayoutTicket = uint64_t;

enum class LayoutStatus : uint8_t { Pending, Ready, Superseded, Failed };

struct LayoutResult {
  LayoutStatus status = LayoutStatus::Pending;
  std::shared_ptr<const GraphLayout> layout;  // Ready only
  std::string error;                          // Failed only
};

struct GraphLayouterOptions {
  LayoutStyle style;
  size_t cache_capacity = 64;
};

class GraphLayouter {
 public:
  explicit GraphLayouter(TextMeasure measure, GraphLayouterOptions options = {});
  ~GraphLayouter();
  GraphLayouter(const GraphLayouter&) = delete;
  GraphLayouter& operator=(const GraphLayouter&) = delete;

  LayoutTicket request(VisibleGraph graph);
  LayoutTicket request(std::shared_ptr<const VisibleGraph> graph);
  // Non-blocking. Tickets older than the last 256 report Superseded; a ticket never handed out throws.
  LayoutResult poll(LayoutTicket ticket) const;
  // Blocks until the ticket is no longer Pending (tests, benchmarks, headless export).
  LayoutResult wait(LayoutTicket ticket) const;

  std::shared_ptr<const GraphLayout> cached(const std::string& key) const;
  size_t cache_size() const;
  void clear_cache();
  size_t layouts_run() const;   // Graphviz runs so far (cache misses that ran)
  std::thread::id thread_id() const { return worker_.get_id(); }

 private:
  struct Entry {
    std::string key;
    LayoutResult result;
  };
  struct Job {
    LayoutTicket ticket = 0;
    LayoutInput input;
  };
  void run();
  void supersede_pending();
  void remember(LayoutTicket ticket, Entry entry);
  std::shared_ptr<const GraphLayout> cache_find(const std::string& key);
  void cache_put(const std::string& key, std::shared_ptr<const GraphLayout> layout);
  LayoutResult result_of(LayoutTicket ticket) const;

  TextMeasure measure_;
  GraphLayouterOptions options_;
  mutable std::mutex mu_;
  mutable std::condition_variable work_cv_, done_cv_;
  bool stop_ = false;
  LayoutTicket next_ticket_ = 0;
  std::optional<Job> queued_;
  std::string running_key_;
  bool running_ = false;
  size_t layouts_run_ = 0;
  std::unordered_map<LayoutTicket, Entry> entries_;
  std::list<std::string> lru_;  // most recent first
  std::unordered_map<std::string, std::pair<std::shared_ptr<const GraphLayout>, std::list<std::string>::iterator>> cache_;
  std::thread worker_;  // last: starts after everything above exists
};

}  // namespace rt::viz
