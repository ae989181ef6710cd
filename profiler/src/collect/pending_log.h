// collect/pending_log.h — records that arrive on any thread, rarely (a finished collective, a gradient
// histogram), kept under a mutex until the session's collector takes them; bounded, with the ones it had to
// drop counted.
//
//   PendingLog<PendingCollective>& log = PendingLog<PendingCollective>::process(kMaxPendingCollectives);
//   log.push([&] { return PendingCollective{e, std::string(e.group), ...}; });   // from a backend thread
//   uint64_t dropped = 0;
//   for (PendingCollective& p : log.take(dropped)) ...;                           // from the collector
//
// Contracts
// - push never throws: a full log, or `make` throwing (out of memory), counts one dropped record. `make` runs
//   outside the lock.
// - take returns everything pending, in push order, and adds the drops since the last take to `dropped`.
// - process() gives one log per record type for the whole process, never destroyed (reporting threads may run
//   during static destruction); its capacity is the first caller's.
#pragma once
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace rt::prof::collect {

template <typename T>
class PendingLog {
 public:
  explicit PendingLog(size_t capacity) : capacity_(capacity) {}

  static PendingLog& process(size_t capacity) {
    static auto* log = new PendingLog(capacity);
    return *log;
  }

  template <typename Make>
  void push(Make&& make) noexcept {
    try {
      T item = make();
      std::lock_guard<std::mutex> lock(mu_);
      if (items_.size() >= capacity_) {
        ++dropped_;
        return;
      }
      items_.push_back(std::move(item));
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      ++dropped_;
    }
  }

  std::vector<T> take(uint64_t& dropped) {
    std::vector<T> taken;
    std::lock_guard<std::mutex> lock(mu_);
    taken.swap(items_);
    dropped += std::exchange(dropped_, 0);
    return taken;
  }

  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    items_.clear();
    dropped_ = 0;
  }

 private:
  std::mutex mu_;
  std::vector<T> items_;
  uint64_t dropped_ = 0;
  size_t capacity_;
};

}  // namespace rt::prof::collect
