// engine/src/memory/cpu_block_cache.h — the CPU allocator's cache of freed blocks.
//
//   rt::detail::CpuBlockCache& cache = rt::detail::CpuBlockCache::instance();
//   const int c = rt::detail::CpuBlockCache::size_class(1000);   // 1024-byte class
//   void* p = cache.take(c);                    // a cached block of that class, or nullptr
//   if (!p) p = rt::detail::CpuBlockCache::allocate_block(c);   // a new one from the C library
//   ...
//   cache.give(p, c);                           // kept for the next take(c), or freed when full
//   cache.empty();                              // every cached block back to the C library
//
// See Note [CPU block cache] in cpu_block_cache.cpp. Blocks are 64-byte aligned and have
// kHeaderBytes of header in front of them that the cache never touches (the allocator keeps the
// block's memory category there). Requests larger than kMaxCachedBytes have no class
// (size_class returns -1): the allocator takes and frees them directly.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "rt/export.h"

RT_API_BEGIN  // exported for tests/engine/test_cpu_allocator.cpp

namespace rt::detail {

struct CpuCacheStats {
  size_t cached_bytes = 0;      // blocks held for reuse, in every thread's cache and the shared pool
  uint64_t hits = 0;            // take() calls that returned a block
  uint64_t misses = 0;          // take() calls that found none
  uint64_t released_bytes = 0;  // bytes handed back to the C library by the cache (limit, empty())
};

class CpuBlockCache {
 public:
  static constexpr size_t kAlign = 64;
  static constexpr size_t kHeaderBytes = kAlign;         // in front of every block
  static constexpr size_t kMaxCachedBytes = size_t(1) << 28;  // 256 MiB: larger blocks are not cached

  // The class of a request of `bytes`, or -1 when it is too large to cache.
  static int size_class(size_t bytes);
  // The usable bytes of every block of class `c` (>= any request of that class).
  static size_t class_bytes(int c);
  // A new block of class c (or of exactly `bytes` when c is -1) from the C library; nullptr
  // when out of memory.
  static void* allocate_block(int c, size_t bytes = 0);
  static void free_block(void* p);

  static CpuBlockCache& instance();

  void* take(int c);         // a cached block of class c, or nullptr
  void give(void* p, int c);  // keeps p for reuse or, over the limit, frees it
  void empty();              // frees every cached block (other threads' caches on their next call)
  CpuCacheStats stats() const;
  // The most bytes the cache holds (RT_CPU_CACHE_LIMIT_MB, default: a quarter of RAM, at most
  // 4 GiB); 0 turns caching off.
  size_t limit() const { return limit_.load(std::memory_order_relaxed); }
  void set_limit(size_t bytes) { limit_.store(bytes, std::memory_order_relaxed); }

 private:
  CpuBlockCache();
  std::atomic<size_t> limit_;
};

}  // namespace rt::detail

RT_API_END
