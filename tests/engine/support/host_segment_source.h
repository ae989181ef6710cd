// tests/kernels/host_segment_source.h — a SegmentSource over host memory with a capacity.
//
//   HostSegmentSource source(64 << 20, rt::Device::cuda(0));  // 64 MiB "device"
//   rt::cuda::CachingAllocator alloc(source);                 // declare the source first
//   source.set_capacity(0);                                   // every further segment is refused
//   source.set_current_stream(s1);                            // allocate() now puts blocks on s1
//   source.complete(s2);                                      // events recorded on s2 so far are done
//
// A real source, not a mock: segments are real (512-byte aligned) memory the tests write to,
// a request past the capacity is refused with nullptr as cudaMalloc's out-of-memory would be,
// and freeing a segment it did not hand out, or with another size, throws std::logic_error.
// It records what it was asked so tests can check the allocator's segment sizes.
// Streams are names (any distinct pointers); an event recorded on a stream is done once the test
// calls complete() on that stream after it was recorded, or once the allocator waited for it (a
// host wait returns when the device got there). Destroying an event twice, or one it did not
// make, throws std::logic_error.
#pragma once
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "memory/caching_allocator.h"

class HostSegmentSource final : public rt::cuda::SegmentSource {
 public:
  explicit HostSegmentSource(size_t capacity, rt::Device device = rt::Device::cuda(0))
      : capacity_(capacity), device_(device) {}
  // Segments the allocator still held (blocks that outlived it) are freed here.
  ~HostSegmentSource() override {
    for (auto& [p, bytes] : live_) std::free(p);
  }
  HostSegmentSource(const HostSegmentSource&) = delete;
  HostSegmentSource& operator=(const HostSegmentSource&) = delete;

  void* allocate_segment(size_t bytes) override {
    std::lock_guard<std::mutex> lk(mu_);
    requests_.push_back(bytes);
    if (bytes > capacity_ || used_ > capacity_ - bytes) {
      ++refusals_;
      return nullptr;
    }
    void* p = std::aligned_alloc(512, (bytes + 511) / 512 * 512);
    if (!p) {
      ++refusals_;
      return nullptr;
    }
    live_.emplace(p, bytes);
    used_ += bytes;
    return p;
  }

  void free_segment(void* p, size_t bytes) override {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = live_.find(p);
    if (it == live_.end()) throw std::logic_error("HostSegmentSource: free_segment of a pointer it did not hand out");
    if (it->second != bytes)
      throw std::logic_error("HostSegmentSource: segment of " + std::to_string(it->second) + " bytes freed as " +
                             std::to_string(bytes));
    used_ -= bytes;
    live_.erase(it);
    std::free(p);
  }

  rt::cuda::MemoryInfo mem_info() override {
    std::lock_guard<std::mutex> lk(mu_);
    return {capacity_ > used_ ? capacity_ - used_ : 0, capacity_};
  }
  rt::Device device() const override { return device_; }

  rt::cuda::StreamId current_stream() override {
    std::lock_guard<std::mutex> lk(mu_);
    return current_;
  }
  void* record_event(rt::cuda::StreamId stream) override {
    std::lock_guard<std::mutex> lk(mu_);
    events_.push_back(Event{stream, false, false});
    return reinterpret_cast<void*>(events_.size());  // 1-based index: never nullptr
  }
  bool event_done(void* event) override {
    std::lock_guard<std::mutex> lk(mu_);
    const Event& e = event_of(event);
    if (e.stream == failing_) throw std::runtime_error("HostSegmentSource: the query failed (as a CUDA error would)");
    return e.done;
  }
  void wait_event(void* event) override {
    std::lock_guard<std::mutex> lk(mu_);
    event_of(event).done = true;
    ++waits_;
  }
  void destroy_event(void* event) override {
    std::lock_guard<std::mutex> lk(mu_);
    Event& e = event_of(event);
    if (e.destroyed) throw std::logic_error("HostSegmentSource: event destroyed twice");
    e.destroyed = true;
  }

  void set_capacity(size_t bytes) {
    std::lock_guard<std::mutex> lk(mu_);
    capacity_ = bytes;
  }
  size_t used() const {
    std::lock_guard<std::mutex> lk(mu_);
    return used_;
  }
  size_t live_segments() const {
    std::lock_guard<std::mutex> lk(mu_);
    return live_.size();
  }
  void set_current_stream(rt::cuda::StreamId s) {
    std::lock_guard<std::mutex> lk(mu_);
    current_ = s;
  }
  // The device reached every event recorded on `stream` so far.
  void complete(rt::cuda::StreamId stream) {
    std::lock_guard<std::mutex> lk(mu_);
    for (Event& e : events_)
      if (e.stream == stream) e.done = true;
  }
  // Queries of events on `stream` throw std::runtime_error from now on (nullptr: none do).
  void fail_queries_on(rt::cuda::StreamId stream) {
    std::lock_guard<std::mutex> lk(mu_);
    failing_ = stream;
  }
  size_t events_recorded() const {
    std::lock_guard<std::mutex> lk(mu_);
    return events_.size();
  }
  size_t events_alive() const {
    std::lock_guard<std::mutex> lk(mu_);
    size_t n = 0;
    for (const Event& e : events_) n += e.destroyed ? 0 : 1;
    return n;
  }
  size_t host_waits() const {
    std::lock_guard<std::mutex> lk(mu_);
    return waits_;
  }
  size_t refusals() const {
    std::lock_guard<std::mutex> lk(mu_);
    return refusals_;
  }
  // Every segment size asked for, refused ones included, in order.
  std::vector<size_t> requests() const {
    std::lock_guard<std::mutex> lk(mu_);
    return requests_;
  }

 private:
  struct Event {
    rt::cuda::StreamId stream;
    bool done;
    bool destroyed;
  };
  Event& event_of(void* event) {
    const auto i = reinterpret_cast<size_t>(event);
    if (i == 0 || i > events_.size()) throw std::logic_error("HostSegmentSource: an event it did not record");
    return events_[i - 1];
  }

  mutable std::mutex mu_;
  size_t capacity_;
  rt::Device device_;
  size_t used_ = 0;
  size_t refusals_ = 0;
  std::map<void*, size_t> live_;
  std::vector<size_t> requests_;
  rt::cuda::StreamId current_ = nullptr;
  rt::cuda::StreamId failing_ = nullptr;
  std::vector<Event> events_;
  size_t waits_ = 0;
};
