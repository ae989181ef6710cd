// engine/src/memory/caching_allocator.h — a caching device allocator with PyTorch's block sizes.
//
//   rt::cuda::CudaSegmentSource source(0);            // cudaMalloc/cudaFree on cuda:0
//   rt::cuda::CachingAllocator alloc(source);         // the source must outlive the allocator
//   void* p = alloc.allocate(1000);                   // 1024-byte block cut from a 2 MiB segment
//   alloc.deallocate(p, 1000);                        // back to the cache, not to the device
//   alloc.stats().reserved_bytes;                     // 2 MiB still held
//   alloc.empty_cache();                              // unused segments go back: reserved 0
//
//   // Streams: a block belongs to the stream current when it was allocated. Work on another
//   // stream that uses it must be recorded, or the block could be reused under that work:
//   void* q = alloc.allocate(4096);                   // on source.current_stream(), say s1
//   alloc.record_stream(q, s2);                       // kernels on s2 read q
//   alloc.deallocate(q, 4096);                        // reused once s2 reached this point (an event)
//
// Plain C++ with no CUDA headers: every build compiles it, and the tests drive it with a
// host-memory SegmentSource. Only CudaSegmentSource (cuda_segment_source.h) talks to CUDA.
//
// The rules (see Note [Caching allocator blocks] in caching_allocator.cpp):
// - Requests are rounded up to 512 bytes. Zero bytes give nullptr, and deallocate(nullptr) does
//   nothing.
// - Requests up to 1 MiB come from the small pool, whose segments are 2 MiB. Larger requests
//   come from the large pool: under 10 MiB they share 20 MiB segments, from 10 MiB up they are
//   rounded up to a multiple of 2 MiB and get a segment of exactly that size.
// - A request takes the smallest free block of its pool that fits (the lowest address among
//   equals) and splits it when what is left is at least 512 bytes (small pool) or more than
//   1 MiB (large pool); otherwise the whole block serves the request.
// - A freed block merges with the free blocks next to it in the same segment. Segments go
//   back to the source only through empty_cache(), the destructor, or an allocation the source
//   refused: that frees every unused segment and asks once more; if the source still refuses,
//   allocate() throws rt::OutOfMemoryError naming the request, the device's free and total
//   memory, what this allocator holds, and what to do about it.
// - Blocks belong to a stream (PyTorch's rule): allocate() takes the source's current stream, a
//   block is cut only from free blocks of its own stream (segments are per stream), and a freed
//   block is reused at once by later work on that stream, which the stream orders after the
//   work already queued. record_stream(p, s) notes that work on another stream s uses the
//   block: deallocate() then records an event on each such stream and keeps the block out of
//   the pools until every event has completed (checked at each allocate(); empty_cache() and
//   the out-of-memory retry wait for them). Its bytes leave allocated_bytes at deallocate().
//
// Without caching (AllocatorOptions{.caching = false}; the engine's device allocators when the
// environment sets PYTORCH_NO_CUDA_MEMORY_CACHING=1, PyTorch's switch) every request is a
// segment of exactly the bytes asked for, handed back to the source as soon as the block is free
// (after other streams' events, as above). Slow (a cudaMalloc and a cudaFree per tensor), but a
// tool such as compute-sanitizer's memcheck then sees an access past a tensor's last byte, which
// inside a cached segment lands in a neighbouring block and goes unnoticed.
//
// Every allocation and free emits an rt::MemoryEvent (rt/allocator.h) with the block size, the
// source's device, the category current on the allocating thread (a free reports the category
// its block was allocated under) and total_after = allocated bytes after the event. Events are
// emitted while the allocator's lock is held, so they arrive in order; an observer may read
// stats() (lock-free) but must not allocate or free through this allocator.
//
// Thread-safe: one mutex guards the pools.
#pragma once
#include <atomic>
#include <cstddef>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "rt/allocator.h"
#include "rt/device.h"
#include "rt/export.h"

// Exported from rt_engine (rt/export.h): its tests (tests/engine/test_caching_allocator.cpp) drive it with a host segment source.
RT_API_BEGIN

namespace rt::cuda {

// Free and total bytes of a device, as cudaMemGetInfo reports them; total 0 means unknown.
struct MemoryInfo {
  size_t free_bytes = 0;
  size_t total_bytes = 0;
};

// A stream as the allocator sees it: a cudaStream_t, nullptr for the legacy default stream.
using StreamId = void*;

// Where a CachingAllocator gets its segments and stream events: one device's runtime.
class SegmentSource {
 public:
  virtual ~SegmentSource() = default;
  // A new segment of `bytes`, or nullptr when the device has no room for it. Other failures
  // (no usable device, a broken context) throw rt::Error.
  virtual void* allocate_segment(size_t bytes) = 0;
  // Returns a segment from allocate_segment, with the size it was asked for.
  virtual void free_segment(void* p, size_t bytes) = 0;
  virtual MemoryInfo mem_info() = 0;
  virtual Device device() const = 0;
  // The stream the calling thread's work on this device goes to (where allocate() puts blocks).
  virtual StreamId current_stream() = 0;
  // An event marking the work queued on `stream` so far; done() once that work has finished.
  // wait_event blocks the host until it has; every event is destroyed exactly once.
  virtual void* record_event(StreamId stream) = 0;
  virtual bool event_done(void* event) = 0;
  virtual void wait_event(void* event) = 0;
  virtual void destroy_event(void* event) = 0;
};

// Sizes of the block scheme; see the rules above.
inline constexpr size_t kMinBlockSize = 512;                 // every block is a multiple of this
inline constexpr size_t kSmallRequestMax = 1 << 20;          // up to here: the small pool
inline constexpr size_t kSmallSegmentSize = 2 << 20;         // small-pool segments
inline constexpr size_t kLargeSegmentSize = 20 << 20;        // shared large-pool segments
inline constexpr size_t kMinOwnSegmentRequest = 10 << 20;    // from here: a segment of its own
inline constexpr size_t kOwnSegmentRounding = 2 << 20;       // ... rounded up to this

// The block size a request of `bytes` is rounded up to (512-byte multiples).
size_t round_request(size_t bytes);
// The segment size requested from the source for a rounded request no cached block can serve.
size_t segment_size_for(size_t rounded);
// "512 B", "1.50 KiB", "20.00 MiB", "3.25 GiB".
std::string format_bytes(size_t bytes);

struct AllocatorStats {
  size_t allocated_bytes = 0;       // blocks handed out: rounded sizes, plus tails too small to split off
  size_t peak_allocated_bytes = 0;  // since construction or the last reset_peak()
  size_t reserved_bytes = 0;        // all segments, in use or cached
  size_t peak_reserved_bytes = 0;   // since construction or the last reset_peak()
  size_t segments = 0;              // segments held
  size_t allocations = 0;           // blocks handed out and not yet freed
  size_t alloc_retries = 0;         // allocations that emptied the cache and asked again
  size_t ooms = 0;                  // allocations that ended in OutOfMemoryError
  size_t pending_events = 0;        // events that freed blocks still wait for (other streams)
};

struct AllocatorOptions {
  bool caching = true;  // false: a segment per request, freed with its block (see above)
};

// True when the environment variable's value asks for no caching: set, and neither "" nor "0"
// (PyTorch reads PYTORCH_NO_CUDA_MEMORY_CACHING the same way). `value` is getenv's result.
bool no_caching_requested(const char* value);

class CachingAllocator final : public Allocator {
 public:
  explicit CachingAllocator(SegmentSource& source, AllocatorOptions options = {});
  // Returns unused segments to the source. Segments still holding live blocks are left alone
  // (tensors that outlive their allocator keep their memory).
  ~CachingAllocator() override;
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // Throws rt::OutOfMemoryError when the source cannot provide the memory even after the
  // cache was emptied; the allocator stays usable.
  // The block belongs to source.current_stream().
  void* allocate(size_t bytes) override;
  // The same on an explicit stream.
  void* allocate(size_t bytes, StreamId stream);
  // Work on `stream` uses the live block at `p` (a pointer allocate() returned): when the block
  // is freed it is reused only after that work. Recording the block's own stream, or a stream
  // twice, changes nothing. Throws rt::ValueError for a pointer that is not a live block.
  void record_stream(void* p, StreamId stream);
  // Throws rt::ValueError for a pointer this allocator did not hand out (or already took back).
  void deallocate(void* p, size_t bytes) override;
  Device device() const override;
  bool caching() const { return caching_; }

  // Waits for the events of blocks freed while other streams used them, then returns every
  // segment with no live block to the source.
  void empty_cache();
  // Lock-free snapshot; fields may be mid-update relative to each other under concurrency.
  AllocatorStats stats() const;
  // The peak starts again from what is allocated now.
  void reset_peak();

 private:
  struct Block;
  struct ByStreamSizeAddress {
    bool operator()(const Block* a, const Block* b) const;
  };
  using FreeBlocks = std::set<Block*, ByStreamSizeAddress>;
  struct PendingEvent {
    void* event;
    Block* block;
  };

  Block* take_block(size_t rounded, StreamId stream);  // lock held; nullptr when the source refused
  Block* new_segment(size_t bytes, bool small, StreamId stream);  // a segment of `bytes` as one free block
  void split(Block* b, size_t rounded);
  void release_block(Block* b);
  void free_segment(Block* b);  // b is a whole unused segment, in no pool
  void release_unused_segments();
  void process_events(bool wait);  // lock held: releases blocks whose events all completed
  void event_completed(Block* b);
  FreeBlocks& pool_of(const Block* b);
  [[noreturn]] void throw_oom(size_t bytes, size_t rounded);

  SegmentSource& source_;
  const Device device_;
  const bool caching_;
  mutable std::mutex mu_;
  FreeBlocks small_free_;
  FreeBlocks large_free_;
  std::unordered_map<void*, Block*> live_;
  std::vector<PendingEvent> pending_;  // in the order they were recorded
  std::atomic<size_t> allocated_{0}, peak_{0}, reserved_{0}, peak_reserved_{0}, segments_{0}, retries_{0}, ooms_{0},
      live_count_{0}, pending_count_{0};
};

}  // namespace rt::cuda

RT_API_END
