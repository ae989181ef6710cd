// Note [CPU block cache]
// A training step frees and allocates the same sizes every iteration: activations, their
// gradients, optimizer temporaries. glibc serves blocks above its mmap threshold with a fresh
// mmap, so each one costs a page fault per 4 KiB on first touch, and aligned_alloc skips its
// per-thread cache altogether. The CPU allocator therefore keeps freed blocks for reuse:
// - Size classes: up to 4 KiB in steps of 64 bytes; above that 8 classes per power of two
//   (a block is at most 1/8 larger than asked for). Blocks above 256 MiB are not cached.
// - Each thread keeps a few blocks per class up to 256 KiB (kThreadBlocksPerClass, at most
//   kThreadCacheBytes in all) that it takes and gives without a lock; everything else goes
//   through one shared pool under a mutex (a large block's memset or copy dwarfs the lock). A
//   block freed on another thread than the one that made it simply joins the freeing thread's
//   cache. A thread's cache moves to the shared pool when the thread ends.
// - The cache holds at most limit() bytes in all; a block given beyond that goes back to the C
//   library at once. empty() frees the shared pool and the calling thread's cache at once, and
//   bumps an epoch that makes every other thread free its own cache at its next call.
// - Under AddressSanitizer a cached block is poisoned from the moment it is given back until
//   the allocator hands it out again (and then only the bytes asked for are unpoisoned), so a
//   use after free through the cache, or past a tensor's end into its block's slack, is still
//   reported. RT_CPU_ALLOCATOR=malloc (allocator.cpp) bypasses the cache entirely.
// The allocator's accounting (cpu_memory_allocated, memory events, categories) counts the bytes
// tensors asked for, as before; the cache's own bytes show in stats().cached_bytes.
#include "cpu_block_cache.h"

#include <unistd.h>

#include <array>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "rt/error.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define RT_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define RT_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define RT_POISON(p, n) ((void)(p), (void)(n))
#define RT_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace rt::detail {
namespace {

constexpr size_t kSmallStep = 64;
constexpr size_t kSmallMax = 4096;
constexpr int kSmallClasses = int(kSmallMax / kSmallStep);  // 64, 128, ..., 4096
constexpr int kFirstPower = 12;                              // (4 KiB, 8 KiB] ...
constexpr int kLastPower = 27;                               // ... (128 MiB, 256 MiB]
constexpr int kClassesPerPower = 8;
constexpr int kClasses = kSmallClasses + (kLastPower - kFirstPower + 1) * kClassesPerPower;
constexpr size_t kThreadClassMaxBytes = size_t(256) << 10;
constexpr int kThreadBlocksPerClass = 8;
constexpr size_t kThreadCacheBytes = size_t(8) << 20;

struct SharedPool {
  std::mutex mu;
  std::array<std::vector<void*>, kClasses> blocks;
};
SharedPool& shared_pool() {
  static auto* pool = new SharedPool;  // leaked: threads may end after static destruction
  return *pool;
}

std::atomic<size_t> g_cached_bytes{0};
std::atomic<uint64_t> g_hits{0}, g_misses{0}, g_released{0};
std::atomic<uint64_t> g_epoch{0};

// One thread's lock-free cache of small blocks.
struct ThreadCache {
  struct Bin {
    std::array<void*, kThreadBlocksPerClass> blocks{};
    int count = 0;
  };
  std::array<Bin, kClasses> bins{};
  size_t bytes = 0;
  uint64_t epoch = g_epoch.load(std::memory_order_relaxed);

  // Frees every block (empty() ran on some thread since this cache last looked).
  void release_all() {
    for (int c = 0; c < kClasses; ++c) {
      Bin& b = bins[size_t(c)];
      for (int i = 0; i < b.count; ++i) {
        const size_t cb = CpuBlockCache::class_bytes(c);
        g_cached_bytes.fetch_sub(cb, std::memory_order_relaxed);
        g_released.fetch_add(cb, std::memory_order_relaxed);
        RT_UNPOISON(b.blocks[size_t(i)], cb);
        CpuBlockCache::free_block(b.blocks[size_t(i)]);
      }
      b.count = 0;
    }
    bytes = 0;
  }
  void sync_epoch() {
    const uint64_t e = g_epoch.load(std::memory_order_relaxed);
    if (e != epoch) {
      release_all();
      epoch = e;
    }
  }
  ~ThreadCache() {  // the blocks move to the shared pool (still counted as cached)
    SharedPool& pool = shared_pool();
    std::lock_guard<std::mutex> lk(pool.mu);
    for (int c = 0; c < kClasses; ++c) {
      Bin& b = bins[size_t(c)];
      for (int i = 0; i < b.count; ++i) pool.blocks[size_t(c)].push_back(b.blocks[size_t(i)]);
    }
  }
};

ThreadCache& thread_cache() {
  thread_local ThreadCache cache;
  return cache;
}

size_t default_limit() {
  if (const char* env = std::getenv("RT_CPU_CACHE_LIMIT_MB"); env && *env) {
    char* end = nullptr;
    const unsigned long long mb = std::strtoull(env, &end, 10);
    if (*end != '\0' || env[0] == '-')
      throw ValueError(std::string("RT_CPU_CACHE_LIMIT_MB=") + env +
                       ": expected a whole number of MiB (0 turns the CPU allocator's cache off)");
    return size_t(mb) << 20;
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const size_t ram = pages > 0 && page > 0 ? size_t(pages) * size_t(page) : size_t(4) << 30;
  return std::min(ram / 4, size_t(4) << 30);
}

}  // namespace

int CpuBlockCache::size_class(size_t bytes) {
  if (bytes <= kSmallMax) return bytes == 0 ? 0 : int((bytes - 1) / kSmallStep);
  if (bytes > kMaxCachedBytes) return -1;
  const int k = 63 - __builtin_clzll((unsigned long long)(bytes - 1));  // 2^k < bytes <= 2^(k+1)
  const size_t step = size_t(1) << (k - 3);
  const size_t j = (bytes - (size_t(1) << k) + step - 1) / step - 1;  // 0..7
  return kSmallClasses + (k - kFirstPower) * kClassesPerPower + int(j);
}

size_t CpuBlockCache::class_bytes(int c) {
  if (c < kSmallClasses) return size_t(c + 1) * kSmallStep;
  const int k = kFirstPower + (c - kSmallClasses) / kClassesPerPower;
  const size_t j = size_t((c - kSmallClasses) % kClassesPerPower);
  return (size_t(1) << k) + (j + 1) * (size_t(1) << (k - 3));
}

void* CpuBlockCache::allocate_block(int c, size_t bytes) {
  const size_t usable = c >= 0 ? class_bytes(c) : (bytes + kAlign - 1) / kAlign * kAlign;
  char* raw = static_cast<char*>(std::aligned_alloc(kAlign, kHeaderBytes + usable));
  return raw ? raw + kHeaderBytes : nullptr;
}

void CpuBlockCache::free_block(void* p) { std::free(static_cast<char*>(p) - kHeaderBytes); }

CpuBlockCache& CpuBlockCache::instance() {
  static auto* cache = new CpuBlockCache;  // leaked, like the shared pool
  return *cache;
}

CpuBlockCache::CpuBlockCache() : limit_(default_limit()) {}

void* CpuBlockCache::take(int c) {
  if (size_t(c) < kClasses && class_bytes(c) <= kThreadClassMaxBytes) {
    ThreadCache& tc = thread_cache();
    tc.sync_epoch();
    ThreadCache::Bin& b = tc.bins[size_t(c)];
    if (b.count > 0) {
      void* p = b.blocks[size_t(--b.count)];
      tc.bytes -= class_bytes(c);
      g_cached_bytes.fetch_sub(class_bytes(c), std::memory_order_relaxed);
      g_hits.fetch_add(1, std::memory_order_relaxed);
      return p;
    }
  }
  SharedPool& pool = shared_pool();
  {
    std::lock_guard<std::mutex> lk(pool.mu);
    std::vector<void*>& v = pool.blocks[size_t(c)];
    if (!v.empty()) {
      void* p = v.back();
      v.pop_back();
      g_cached_bytes.fetch_sub(class_bytes(c), std::memory_order_relaxed);
      g_hits.fetch_add(1, std::memory_order_relaxed);
      return p;
    }
  }
  g_misses.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

void CpuBlockCache::give(void* p, int c) {
  const size_t cb = class_bytes(c);
  if (g_cached_bytes.load(std::memory_order_relaxed) + cb > limit()) {
    g_released.fetch_add(cb, std::memory_order_relaxed);
    free_block(p);
    return;
  }
  RT_POISON(p, cb);
  if (cb <= kThreadClassMaxBytes) {
    ThreadCache& tc = thread_cache();
    tc.sync_epoch();
    ThreadCache::Bin& b = tc.bins[size_t(c)];
    if (b.count < kThreadBlocksPerClass && tc.bytes + cb <= kThreadCacheBytes) {
      b.blocks[size_t(b.count++)] = p;
      tc.bytes += cb;
      g_cached_bytes.fetch_add(cb, std::memory_order_relaxed);
      return;
    }
  }
  SharedPool& pool = shared_pool();
  std::lock_guard<std::mutex> lk(pool.mu);
  pool.blocks[size_t(c)].push_back(p);
  g_cached_bytes.fetch_add(cb, std::memory_order_relaxed);
}

void CpuBlockCache::empty() {
  g_epoch.fetch_add(1, std::memory_order_relaxed);
  thread_cache().sync_epoch();
  SharedPool& pool = shared_pool();
  std::lock_guard<std::mutex> lk(pool.mu);
  for (int c = 0; c < kClasses; ++c) {
    const size_t cb = class_bytes(c);
    for (void* p : pool.blocks[size_t(c)]) {
      g_cached_bytes.fetch_sub(cb, std::memory_order_relaxed);
      g_released.fetch_add(cb, std::memory_order_relaxed);
      RT_UNPOISON(p, cb);
      free_block(p);
    }
    pool.blocks[size_t(c)].clear();
    pool.blocks[size_t(c)].shrink_to_fit();
  }
}

CpuCacheStats CpuBlockCache::stats() const {
  return {g_cached_bytes.load(std::memory_order_relaxed), g_hits.load(std::memory_order_relaxed),
          g_misses.load(std::memory_order_relaxed), g_released.load(std::memory_order_relaxed)};
}

}  // namespace rt::detail
