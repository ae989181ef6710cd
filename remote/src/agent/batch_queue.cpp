#include "agent/batch_queue.h"

namespace rt::remote {

size_t BatchQueue::estimated_bytes(const rt::prof::SessionDelta& delta) {
  const auto& d = delta.records;
  size_t n = 128 + d.ops.size() * 61 + d.gpu.size() * 102 + d.collectives.size() * 93 + d.memory.size() * 49 +
             d.counters.size() * 20 + d.steps.size() * 24 + d.threads.size() * 20;
  for (const auto& h : d.gradient_histograms) n += 68 + h.counts.size() * 8;
  for (const auto& s : delta.new_strings) n += 4 + s.size();
  if (delta.reset)
    for (const auto& s : d.strings.all()) n += 4 + s.size();
  for (const auto& g : d.graphs) n += 64 + g.graph.nodes.size() * 96 + g.graph.edges.size() * 40;
  return n;
}

void BatchQueue::push(rt::prof::SessionDelta delta) {
  Entry e;
  e.bytes = estimated_bytes(delta);
  e.delta = std::move(delta);
  bytes_ += e.bytes;
  queue_.push_back(std::move(e));
  // See Note [Dropping for a slow client].
  for (auto it = queue_.begin(); bytes_ > capacity_ && it != queue_.end(); ++it) {
    if (it->stripped || it->delta.reset || !it->notice.empty()) continue;  // a reset replaces: never strip it
    auto& d = it->delta.records;
    dropped_ += record_count(d);
    d.ops = {};
    d.gpu = {};
    d.collectives = {};
    d.memory = {};
    d.counters = {};
    d.gradient_histograms = {};
    if (it->delta.graphs_changed) {
      d.graphs = {};
      it->delta.graphs_changed = false;
    }
    it->stripped = true;
    const size_t now = estimated_bytes(it->delta);
    bytes_ -= it->bytes - now;
    it->bytes = now;
  }
}

void BatchQueue::push_notice(std::string notice_json) {
  Entry e;
  e.notice = std::move(notice_json);
  e.bytes = e.notice.size();
  bytes_ += e.bytes;
  queue_.push_back(std::move(e));
}

std::optional<BatchQueue::Item> BatchQueue::pop() {
  if (queue_.empty()) return std::nullopt;
  Entry e = std::move(queue_.front());
  queue_.pop_front();
  bytes_ -= e.bytes;
  if (!e.notice.empty()) return Item{std::nullopt, std::move(e.notice)};
  return Item{EventBatch{std::move(e.delta), dropped_}, {}};
}

}  // namespace rt::remote
