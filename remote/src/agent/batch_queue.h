// The records an agent has read for one client and not yet sent. Bounded: when a slow or stalled client lets
// it grow past its capacity, the oldest batches lose their records (ops, GPU activities, collectives, memory
// events, counters, graphs) and the count is reported to the client with every later batch; their strings,
// threads, header and steps stay, so the client's session stays consistent (Note [Dropping for a slow
// client]). Training never waits for a client.
//
// Note [Dropping for a slow client]
// Increments only make sense in order: each one's new strings continue the previous one's table, and a step
// may replace the previous batch's open step. So a queue never discards a batch whole. It empties the oldest
// batches' record vectors instead, which no later batch refers to; what is left is small (strings and steps
// are a few per step). A stripped batch that carried new graphs stops claiming graphs_changed, so the client
// keeps the graphs it had.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "rt/remote/event_batch.h"

namespace rt::remote {

class BatchQueue {
 public:
  explicit BatchQueue(size_t capacity_bytes) : capacity_(capacity_bytes) {}
  struct Item {
    std::optional<EventBatch> batch;  // or
    std::string notice;               // a Notice frame's JSON, sent in its place in the order
  };
  void push(rt::prof::SessionDelta delta);
  void push_notice(std::string notice_json);
  std::optional<Item> pop();
  bool empty() const { return queue_.empty(); }
  size_t bytes() const { return bytes_; }
  uint64_t dropped() const { return dropped_; }

  // What a delta costs in the queue, about its encoded size.
  static size_t estimated_bytes(const rt::prof::SessionDelta& d);

 private:
  struct Entry {
    rt::prof::SessionDelta delta;
    size_t bytes = 0;
    bool stripped = false;
    std::string notice;
  };
  size_t capacity_;
  size_t bytes_ = 0;
  uint64_t dropped_ = 0;
  std::deque<Entry> queue_;
};

}  // namespace rt::remote
