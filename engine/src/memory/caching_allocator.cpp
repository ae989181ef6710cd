// Note [Caching allocator blocks]
// A segment is one allocation from the SegmentSource. It is cut into blocks that form a doubly
// linked list in address order (prev/next), each either handed out (in live_), freed but waiting
// for other streams' events (in pending_, once per event), or free (in its pool's set, ordered by
// stream, then size, then address, so lower_bound is the best fit on a stream). Invariants:
// - every block is in exactly one of live_, pending_ and its pool's free set; `allocated` is
//   true for the first two;
// - all blocks of a segment belong to the segment's stream;
// - two neighbours are never both free: release_block merges them at once;
// - a segment is unused exactly when it is a single free block (no prev, no next), which is
//   what release_unused_segments returns to the source.
// The small pool only ever holds 2 MiB segments and requests up to 1 MiB, so small requests
// never fragment the large segments (PyTorch's CUDACachingAllocator uses the same sizes).
// A large block is split only when more than 1 MiB would be left, so large segments are not
// shredded into slivers that no large request can use; the unsplit tail stays with the
// allocation and counts as allocated.
#include "caching_allocator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <functional>
#include <limits>
#include <memory>
#include <string_view>

#include "memory_events.h"
#include "rt/error.h"

namespace rt::cuda {

struct CachingAllocator::Block {
  char* ptr = nullptr;
  size_t size = 0;
  bool small = false;
  bool allocated = false;  // live, or waiting for events: not in a pool
  MemoryCategory category = MemoryCategory::Other;
  StreamId stream = nullptr;            // the stream it was allocated on (its segment's)
  std::vector<StreamId> stream_uses;    // other streams recorded by record_stream
  int pending_events = 0;               // events still to complete before it is free
  Block* prev = nullptr;  // neighbours in the same segment, by address
  Block* next = nullptr;
};

bool CachingAllocator::ByStreamSizeAddress::operator()(const Block* a, const Block* b) const {
  if (a->stream != b->stream) return std::less<StreamId>{}(a->stream, b->stream);
  if (a->size != b->size) return a->size < b->size;
  return std::less<const char*>{}(a->ptr, b->ptr);
}

size_t round_request(size_t bytes) {
  if (bytes == 0) return kMinBlockSize;
  return (bytes + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
}

size_t segment_size_for(size_t rounded) {
  if (rounded <= kSmallRequestMax) return kSmallSegmentSize;
  if (rounded < kMinOwnSegmentRequest) return kLargeSegmentSize;
  return (rounded + kOwnSegmentRounding - 1) / kOwnSegmentRounding * kOwnSegmentRounding;
}

std::string format_bytes(size_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double v = double(bytes) / 1024.0;
  size_t unit = 0;
  while (v >= 1024.0 && unit + 1 < std::size(kUnits)) {
    v /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.2f} {}", v, kUnits[unit]);
}

bool no_caching_requested(const char* value) { return value && *value && std::string_view(value) != "0"; }

CachingAllocator::CachingAllocator(SegmentSource& source, AllocatorOptions options)
    : source_(source), device_(source.device()), caching_(options.caching) {}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<std::mutex> lk(mu_);
  try {
    release_unused_segments();
  } catch (...) {
    // The device is going away (e.g. the CUDA runtime unloading at exit): nothing to hand back to.
  }
  std::set<Block*> waiting;  // a block is in pending_ once per event
  for (const PendingEvent& e : pending_) {
    try {
      source_.destroy_event(e.event);
    } catch (...) {
    }
    waiting.insert(e.block);
  }
  for (Block* b : waiting) delete b;
  for (FreeBlocks* pool : {&small_free_, &large_free_})
    for (Block* b : *pool) delete b;
  for (auto& [p, b] : live_) delete b;
}

Device CachingAllocator::device() const { return device_; }

void* CachingAllocator::allocate(size_t bytes) { return bytes == 0 ? nullptr : allocate(bytes, source_.current_stream()); }

void* CachingAllocator::allocate(size_t bytes, StreamId stream) {
  if (bytes == 0) return nullptr;
  // Past this, rounding up to a segment size would overflow; no device has that much anyway.
  if (bytes > std::numeric_limits<size_t>::max() / 2) {
    ooms_.fetch_add(1, std::memory_order_relaxed);
    throw_oom(bytes, bytes);
  }
  const size_t rounded = caching_ ? round_request(bytes) : bytes;
  const MemoryCategory category = current_memory_category();
  std::unique_lock<std::mutex> lk(mu_);
  if (!pending_.empty()) process_events(/*wait=*/false);
  Block* b = take_block(rounded, stream);
  if (!b) {
    retries_.fetch_add(1, std::memory_order_relaxed);
    process_events(/*wait=*/true);
    release_unused_segments();
    b = take_block(rounded, stream);
  }
  if (!b) {
    ooms_.fetch_add(1, std::memory_order_relaxed);
    lk.unlock();
    throw_oom(bytes, rounded);
  }
  b->allocated = true;
  b->category = category;
  live_.emplace(b->ptr, b);
  live_count_.store(live_.size(), std::memory_order_relaxed);
  const size_t now = allocated_.load(std::memory_order_relaxed) + b->size;
  allocated_.store(now, std::memory_order_relaxed);
  if (now > peak_.load(std::memory_order_relaxed)) peak_.store(now, std::memory_order_relaxed);
  detail::emit_memory_event(true, b->ptr, b->size, device_, category, now);
  return b->ptr;
}

void CachingAllocator::deallocate(void* p, size_t bytes) {
  if (!p) return;
  std::lock_guard<std::mutex> lk(mu_);
  auto it = live_.find(p);
  if (it == live_.end())
    throw ValueError(fmt::format(
        "CachingAllocator({}): deallocate({}, {} bytes) got a pointer this allocator did not hand out or "
        "already took back; free each block once, through the allocator of the device it came from",
        device_.str(), p, bytes));
  Block* b = it->second;
  live_.erase(it);
  live_count_.store(live_.size(), std::memory_order_relaxed);
  const size_t now = allocated_.load(std::memory_order_relaxed) - b->size;
  allocated_.store(now, std::memory_order_relaxed);
  detail::emit_memory_event(false, b->ptr, b->size, device_, b->category, now);
  if (b->stream_uses.empty()) {
    b->allocated = false;
    release_block(b);
    return;
  }
  // Other streams used the block: it goes back to a pool once each has reached this point.
  // deallocate runs in destructors and must not throw: a stream that cannot take an event
  // (a broken CUDA context) leaves the block out of the pools for good rather than risk reuse.
  std::vector<StreamId> uses;
  uses.swap(b->stream_uses);
  for (StreamId s : uses) {
    try {
      pending_.push_back({source_.record_event(s), b});
      ++b->pending_events;
    } catch (...) {
      ++b->pending_events;  // never completes
    }
  }
  pending_count_.store(pending_.size(), std::memory_order_relaxed);
}

void CachingAllocator::record_stream(void* p, StreamId stream) {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = live_.find(p);
  if (it == live_.end())
    throw ValueError(fmt::format(
        "CachingAllocator({}): record_stream({}) got a pointer that is not a live block of this allocator; pass "
        "the data pointer of a tensor's storage on this device while the tensor is alive",
        device_.str(), p));
  Block* b = it->second;
  if (stream == b->stream) return;
  if (std::find(b->stream_uses.begin(), b->stream_uses.end(), stream) == b->stream_uses.end())
    b->stream_uses.push_back(stream);
}

// An entry leaves pending_ before anything that could touch its block, so an exception from the
// source (a CUDA error) leaves the books consistent: later entries stay pending.
void CachingAllocator::process_events(bool wait) {
  size_t i = 0;
  while (i < pending_.size()) {
    const PendingEvent e = pending_[i];
    if (wait) {
      source_.wait_event(e.event);
    } else if (!source_.event_done(e.event)) {
      ++i;
      continue;
    }
    pending_.erase(pending_.begin() + std::ptrdiff_t(i));
    pending_count_.store(pending_.size(), std::memory_order_relaxed);
    try {
      source_.destroy_event(e.event);
    } catch (...) {
      // The event has completed; failing to destroy it leaks the event, not the block.
    }
    event_completed(e.block);
  }
}

void CachingAllocator::event_completed(Block* b) {
  if (--b->pending_events > 0) return;
  b->allocated = false;
  release_block(b);
}

CachingAllocator::FreeBlocks& CachingAllocator::pool_of(const Block* b) { return b->small ? small_free_ : large_free_; }

CachingAllocator::Block* CachingAllocator::take_block(size_t rounded, StreamId stream) {
  const bool small = rounded <= kSmallRequestMax;
  if (!caching_) return new_segment(rounded, small, stream);  // exactly the bytes asked for, never split
  FreeBlocks& pool = small ? small_free_ : large_free_;
  Block key;
  key.stream = stream;
  key.size = rounded;  // ptr nullptr: the stream's first block of this size or more, lowest address
  Block* b = nullptr;
  if (auto it = pool.lower_bound(&key); it != pool.end() && (*it)->stream == stream) {
    b = *it;
    pool.erase(it);
  } else {
    b = new_segment(segment_size_for(rounded), small, stream);
    if (!b) return nullptr;
  }
  split(b, rounded);
  return b;
}

CachingAllocator::Block* CachingAllocator::new_segment(size_t size, bool small, StreamId stream) {
  auto b = std::make_unique<Block>();
  void* p = source_.allocate_segment(size);
  if (!p) return nullptr;
  b->ptr = static_cast<char*>(p);
  b->size = size;
  b->small = small;
  b->stream = stream;
  const size_t reserved = reserved_.fetch_add(size, std::memory_order_relaxed) + size;
  if (reserved > peak_reserved_.load(std::memory_order_relaxed)) peak_reserved_.store(reserved, std::memory_order_relaxed);
  segments_.fetch_add(1, std::memory_order_relaxed);
  return b.release();
}

void CachingAllocator::split(Block* b, size_t rounded) {
  const size_t rest = b->size - rounded;
  const bool worth_it = b->small ? rest >= kMinBlockSize : rest > kSmallRequestMax;
  if (!worth_it) return;
  auto* r = new Block;
  r->ptr = b->ptr + rounded;
  r->size = rest;
  r->small = b->small;
  r->stream = b->stream;
  r->prev = b;
  r->next = b->next;
  if (b->next) b->next->prev = r;
  b->next = r;
  b->size = rounded;
  pool_of(r).insert(r);
}

void CachingAllocator::release_block(Block* b) {
  if (!caching_) {  // a block is its whole segment
    try {
      free_segment(b);
    } catch (...) {
      // deallocate runs in destructors and must not throw: a failed free (a broken CUDA
      // context) loses the segment, which the books already no longer count.
    }
    return;
  }
  FreeBlocks& pool = pool_of(b);
  if (Block* prev = b->prev; prev && !prev->allocated) {
    pool.erase(prev);
    prev->size += b->size;
    prev->next = b->next;
    if (b->next) b->next->prev = prev;
    delete b;
    b = prev;
  }
  if (Block* next = b->next; next && !next->allocated) {
    pool.erase(next);
    b->size += next->size;
    b->next = next->next;
    if (next->next) next->next->prev = b;
    delete next;
  }
  pool.insert(b);
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lk(mu_);
  process_events(/*wait=*/true);
  release_unused_segments();
}

void CachingAllocator::release_unused_segments() {
  for (FreeBlocks* pool : {&small_free_, &large_free_}) {
    for (auto it = pool->begin(); it != pool->end();) {
      Block* b = *it;
      if (b->prev || b->next) {
        ++it;
        continue;
      }
      it = pool->erase(it);
      free_segment(b);
    }
  }
}

void CachingAllocator::free_segment(Block* b) {
  const std::unique_ptr<Block> owned(b);
  reserved_.fetch_sub(b->size, std::memory_order_relaxed);
  segments_.fetch_sub(1, std::memory_order_relaxed);
  source_.free_segment(b->ptr, b->size);
}

AllocatorStats CachingAllocator::stats() const {
  AllocatorStats s;
  s.allocated_bytes = allocated_.load(std::memory_order_relaxed);
  s.peak_allocated_bytes = peak_.load(std::memory_order_relaxed);
  s.reserved_bytes = reserved_.load(std::memory_order_relaxed);
  s.peak_reserved_bytes = peak_reserved_.load(std::memory_order_relaxed);
  s.segments = segments_.load(std::memory_order_relaxed);
  s.allocations = live_count_.load(std::memory_order_relaxed);
  s.alloc_retries = retries_.load(std::memory_order_relaxed);
  s.ooms = ooms_.load(std::memory_order_relaxed);
  s.pending_events = pending_count_.load(std::memory_order_relaxed);
  return s;
}

void CachingAllocator::reset_peak() {
  std::lock_guard<std::mutex> lk(mu_);
  peak_.store(allocated_.load(std::memory_order_relaxed), std::memory_order_relaxed);
  peak_reserved_.store(reserved_.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

void CachingAllocator::throw_oom(size_t bytes, size_t rounded) {
  const MemoryInfo info = source_.mem_info();
  const AllocatorStats s = stats();
  const std::string device_memory =
      info.total_bytes == 0
          ? std::string("the device's free memory is unknown")
          : fmt::format("the device has {} free of {} total", format_bytes(info.free_bytes), format_bytes(info.total_bytes));
  throw OutOfMemoryError(fmt::format(
      "{} out of memory: tried to allocate {} ({} bytes requested, a {} block); {}; this allocator has {} allocated "
      "to tensors and {} reserved ({} of it cached but unused, even after returning unused segments). To fix: use a "
      "smaller batch size, free tensors you no longer need (and anything holding on to them, such as outputs kept "
      "with their autograd graph), or call rt.cuda.empty_cache() so other allocators can use cached memory",
      device_.str(), format_bytes(bytes), bytes, format_bytes(rounded), device_memory, format_bytes(s.allocated_bytes),
      format_bytes(s.reserved_bytes), format_bytes(s.reserved_bytes - std::min(s.reserved_bytes, s.allocated_bytes))));
}

}  // namespace rt::cuda
