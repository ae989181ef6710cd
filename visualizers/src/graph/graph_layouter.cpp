#include "rt/viz/graph_layouter.h"

#include <fmt/format.h>

#include "graph/layout_thread.h"
#include "rt/error.h"

namespace rt::viz {
namespace {
constexpr LayoutTicket kRememberedTickets = 256;
}

GraphLayouter::GraphLayouter(TextMeasure measure, GraphLayouterOptions options)
    : measure_(std::move(measure)), options_(options) {
  if (!measure_) throw ValueError("GraphLayouter: no text measure callback");
  if (options_.cache_capacity == 0) throw ValueError("GraphLayouter: cache_capacity must be at least 1");
  worker_ = std::thread([this] { run(); });
}

GraphLayouter::~GraphLayouter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    supersede_pending();
  }
  work_cv_.notify_all();
  worker_.join();
  done_cv_.notify_all();
}

LayoutTicket GraphLayouter::request(VisibleGraph graph) {
  return request(std::make_shared<const VisibleGraph>(std::move(graph)));
}

LayoutTicket GraphLayouter::request(std::shared_ptr<const VisibleGraph> graph) {
  if (!graph) throw ValueError("GraphLayouter::request: no visible graph");
  const std::string key = graph->key;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto hit = cache_find(key)) {
      const LayoutTicket ticket = ++next_ticket_;
      supersede_pending();
      remember(ticket, {key, {LayoutStatus::Ready, std::move(hit), {}}});
      return ticket;
    }
    if (running_ && running_key_ == key) {
      const LayoutTicket ticket = ++next_ticket_;
      supersede_pending();
      remember(ticket, {key, {}});
      return ticket;
    }
  }
  // Measuring calls the view's text metrics: outside the lock, on the caller's thread.
  LayoutInput input = measure_graph(std::move(graph), measure_, options_.style);
  LayoutTicket ticket;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ticket = ++next_ticket_;
    supersede_pending();
    remember(ticket, {key, {}});
    queued_ = Job{ticket, std::move(input)};
  }
  work_cv_.notify_one();
  return ticket;
}

void GraphLayouter::supersede_pending() {
  for (auto& [t, e] : entries_)
    if (e.result.status == LayoutStatus::Pending) e.result.status = LayoutStatus::Superseded;
  queued_.reset();
}

void GraphLayouter::remember(LayoutTicket ticket, Entry entry) {
  entries_[ticket] = std::move(entry);
  if (ticket > kRememberedTickets) entries_.erase(ticket - kRememberedTickets);
}

void GraphLayouter::run() {
  detail::mark_layout_thread();
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stop_ || queued_.has_value(); });
    if (stop_) return;
    Job job = std::move(*queued_);
    queued_.reset();
    const std::string key = job.input.graph->key;
    running_ = true;
    running_key_ = key;
    lock.unlock();
    LayoutResult result;
    try {
      result.layout = layout_with_dot(job.input);
      result.status = LayoutStatus::Ready;
    } catch (const std::exception& e) {
      result.status = LayoutStatus::Failed;
      result.error = e.what();
    }
    lock.lock();
    running_ = false;
    running_key_.clear();
    ++layouts_run_;
    if (result.layout) cache_put(key, result.layout);
    for (auto& [t, e] : entries_)
      if (e.key == key && (e.result.status == LayoutStatus::Pending || t == job.ticket)) e.result = result;
    done_cv_.notify_all();
  }
}

std::shared_ptr<const GraphLayout> GraphLayouter::cache_find(const std::string& key) {
  auto it = cache_.find(key);
  if (it == cache_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second.second);
  return it->second.first;
}

void GraphLayouter::cache_put(const std::string& key, std::shared_ptr<const GraphLayout> layout) {
  if (auto it = cache_.find(key); it != cache_.end()) {
    it->second.first = std::move(layout);
    lru_.splice(lru_.begin(), lru_, it->second.second);
    return;
  }
  lru_.push_front(key);
  cache_.emplace(key, std::make_pair(std::move(layout), lru_.begin()));
  while (cache_.size() > options_.cache_capacity) {
    cache_.erase(lru_.back());
    lru_.pop_back();
  }
}

LayoutResult GraphLayouter::result_of(LayoutTicket ticket) const {
  if (ticket == 0 || ticket > next_ticket_)
    throw IndexError(fmt::format("GraphLayouter: ticket {} was never handed out (last is {})", ticket, next_ticket_));
  auto it = entries_.find(ticket);
  if (it == entries_.end()) return {LayoutStatus::Superseded, nullptr, {}};
  return it->second.result;
}

LayoutResult GraphLayouter::poll(LayoutTicket ticket) const {
  std::lock_guard<std::mutex> lock(mu_);
  return result_of(ticket);
}

LayoutResult GraphLayouter::wait(LayoutTicket ticket) const {
  std::unique_lock<std::mutex> lock(mu_);
  LayoutResult r = result_of(ticket);
  done_cv_.wait(lock, [&] { return (r = result_of(ticket)).status != LayoutStatus::Pending; });
  return r;
}

std::shared_ptr<const GraphLayout> GraphLayouter::cached(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cache_.find(key);
  return it == cache_.end() ? nullptr : it->second.first;
}

size_t GraphLayouter::cache_size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_.size();
}

void GraphLayouter::clear_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  cache_.clear();
  lru_.clear();
}

size_t GraphLayouter::layouts_run() const {
  std::lock_guard<std::mutex> lock(mu_);
  return layouts_run_;
}

}  // namespace rt::viz
