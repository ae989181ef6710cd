// The CPU allocator's block cache (Note [CPU block cache]): size classes, reuse, per-thread caches
// and the shared pool, the limit, cpu_empty_cache across threads, accounting that counts what
// tensors asked for, and (under AddressSanitizer) poisoned cached blocks. The ctest entry
// "test_cpu_allocator (RT_CPU_ALLOCATOR=malloc)" runs the [malloc] cases with the cache off.
#include <catch2/catch.hpp>

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "memory/cpu_block_cache.h"
#include "rt/allocator.h"
#include "rt/ops/creation.h"
#include "rt/tensor.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

using rt::detail::CpuBlockCache;

namespace {
bool caching_on() { return rt::cpu_allocator_stats().caching; }

// Restores the cache's limit when a test changed it.
struct LimitGuard {
  size_t saved = CpuBlockCache::instance().limit();
  ~LimitGuard() { CpuBlockCache::instance().set_limit(saved); }
};
}  // namespace

TEST_CASE("size classes cover every request with at most an eighth of slack", "[cpu_allocator]") {
  int previous = -1;
  for (size_t bytes = 0; bytes <= (size_t(1) << 20); bytes += (bytes < 10000 ? 1 : 997)) {
    const int c = CpuBlockCache::size_class(bytes);
    REQUIRE(c >= previous);  // monotone in the request
    previous = c;
    const size_t cb = CpuBlockCache::class_bytes(c);
    REQUIRE(cb >= bytes);
    REQUIRE(cb % 64 == 0);
    if (bytes > 4096) REQUIRE(cb - bytes <= bytes / 8);
    else REQUIRE(cb - bytes < 64 + (bytes == 0 ? 64 : 0));
    if (c > 0) REQUIRE(CpuBlockCache::class_bytes(c - 1) < bytes);  // the smallest class that fits
  }
  CHECK(CpuBlockCache::size_class(CpuBlockCache::kMaxCachedBytes) >= 0);
  CHECK(CpuBlockCache::class_bytes(CpuBlockCache::size_class(CpuBlockCache::kMaxCachedBytes)) ==
        CpuBlockCache::kMaxCachedBytes);
  CHECK(CpuBlockCache::size_class(CpuBlockCache::kMaxCachedBytes + 1) == -1);
}

TEST_CASE("a freed tensor's block serves the next tensor of its size class", "[cpu_allocator]") {
  if (!caching_on()) return;  // the [malloc] entry checks the other side
  rt::cpu_empty_cache();
  const void* first = nullptr;
  {
    rt::Tensor a = rt::empty({250});  // 1000 bytes: the 1024-byte class
    first = a.raw_data();
    std::memset(a.raw_data(), 0x5a, 1000);
  }
  const rt::CpuAllocatorStats before = rt::cpu_allocator_stats();
  CHECK(before.cached_bytes >= 1024);
  rt::Tensor b = rt::empty({256});  // 1024 bytes: same class
  CHECK(b.raw_data() == first);
  const rt::CpuAllocatorStats after = rt::cpu_allocator_stats();
  CHECK(after.cache_hits == before.cache_hits + 1);
  CHECK(after.cached_bytes == before.cached_bytes - 1024);
  rt::Tensor c = rt::empty({2000});  // another class: a new block
  CHECK(c.raw_data() != first);
  CHECK(reinterpret_cast<uintptr_t>(c.raw_data()) % 64 == 0);
}

TEST_CASE("accounting and memory events count the bytes tensors asked for, not the cache", "[cpu_allocator]") {
  struct Recorder : rt::MemoryObserver {
    std::vector<rt::MemoryEvent> events;
    void on_memory_event(const rt::MemoryEvent& e) override {
      if (e.device.is_cpu()) events.push_back(e);
    }
  } rec;
  const size_t base = rt::cpu_memory_allocated();
  rt::add_memory_observer(&rec);
  {
    rt::MemoryCategoryGuard g(rt::MemoryCategory::OptimizerState);
    rt::Tensor a = rt::empty({1000});  // 4000 bytes, in a 4032-byte block
    CHECK(rt::cpu_memory_allocated() == base + 4000);
  }
  {
    rt::MemoryCategoryGuard g(rt::MemoryCategory::Gradient);
    rt::Tensor b = rt::empty({1000});  // the same block again, under another category
    CHECK(rt::cpu_memory_allocated() == base + 4000);
  }
  rt::remove_memory_observer(&rec);
  CHECK(rt::cpu_memory_allocated() == base);
  REQUIRE(rec.events.size() == 4);
  CHECK((rec.events[0].is_alloc && rec.events[0].bytes == 4000 &&
         rec.events[0].category == rt::MemoryCategory::OptimizerState));
  CHECK((!rec.events[1].is_alloc && rec.events[1].category == rt::MemoryCategory::OptimizerState));
  CHECK((rec.events[2].is_alloc && rec.events[2].category == rt::MemoryCategory::Gradient));
  CHECK((!rec.events[3].is_alloc && rec.events[3].category == rt::MemoryCategory::Gradient));
}

TEST_CASE("large blocks go through the shared pool and are reused by any thread", "[cpu_allocator]") {
  if (!caching_on()) return;
  rt::cpu_empty_cache();
  const void* made = nullptr;
  std::thread([&] {
    rt::Tensor big = rt::empty({1 << 20});  // 4 MiB: above the per-thread classes
    made = big.raw_data();
  }).join();
  CHECK(rt::cpu_allocator_stats().cached_bytes >= (size_t(4) << 20));
  rt::Tensor again = rt::empty({1 << 20});
  CHECK(again.raw_data() == made);
}

TEST_CASE("a small block freed on a thread that ends joins the shared pool", "[cpu_allocator]") {
  if (!caching_on()) return;
  rt::cpu_empty_cache();
  const void* made = nullptr;
  std::thread([&] {
    rt::Tensor t = rt::empty({100});
    made = t.raw_data();
  }).join();  // the thread's cache moved to the shared pool when it ended
  rt::Tensor again = rt::empty({100});
  CHECK(again.raw_data() == made);
}

TEST_CASE("cpu_empty_cache frees this thread's blocks now and another thread's at its next call", "[cpu_allocator]") {
  if (!caching_on()) return;
  rt::cpu_empty_cache();
  std::mutex mu;
  std::condition_variable cv;
  int stage = 0;  // 1: worker cached a block; 2: main emptied the cache; 3: worker made its next call
  std::thread worker([&] {
    { rt::Tensor t = rt::empty({64}); }  // 256 bytes into this thread's cache
    {
      std::unique_lock<std::mutex> lk(mu);
      stage = 1;
      cv.notify_all();
      cv.wait(lk, [&] { return stage == 2; });
    }
    { rt::Tensor u = rt::empty({3}); }  // its next call frees what it cached before
    std::lock_guard<std::mutex> lk(mu);
    stage = 3;
    cv.notify_all();
  });
  {
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [&] { return stage == 1; });
  }
  { rt::Tensor mine = rt::empty({512}); }  // 2 KiB in the main thread's cache
  const rt::CpuAllocatorStats before = rt::cpu_allocator_stats();
  CHECK(before.cached_bytes >= 256 + 2048);
  rt::cpu_empty_cache();
  const rt::CpuAllocatorStats emptied = rt::cpu_allocator_stats();
  CHECK(emptied.cached_bytes == 256);  // only the worker's block is left, until it looks
  CHECK(emptied.released_bytes >= before.released_bytes + 2048);
  {
    std::unique_lock<std::mutex> lk(mu);
    stage = 2;
    cv.notify_all();
    cv.wait(lk, [&] { return stage == 3; });
  }
  worker.join();
  // The worker freed its 256-byte block at its next allocation; its 64-byte block went to the
  // shared pool when it ended.
  CHECK(rt::cpu_allocator_stats().cached_bytes == 64);
  rt::cpu_empty_cache();
  CHECK(rt::cpu_allocator_stats().cached_bytes == 0);
}

TEST_CASE("the cache never holds more than its limit", "[cpu_allocator]") {
  if (!caching_on()) return;
  LimitGuard restore;
  rt::cpu_empty_cache();
  CpuBlockCache::instance().set_limit(size_t(1) << 20);  // 1 MiB
  const rt::CpuAllocatorStats before = rt::cpu_allocator_stats();
  {
    std::vector<rt::Tensor> ts;
    for (int i = 0; i < 8; ++i) ts.push_back(rt::empty({64 * 1024}));  // 8 x 256 KiB
  }
  const rt::CpuAllocatorStats after = rt::cpu_allocator_stats();
  CHECK(after.cached_bytes <= (size_t(1) << 20));
  CHECK(after.released_bytes - before.released_bytes >= (size_t(1) << 20));
  CpuBlockCache::instance().set_limit(0);
  rt::cpu_empty_cache();
  { rt::Tensor t = rt::empty({10}); }
  CHECK(rt::cpu_allocator_stats().cached_bytes == 0);
}

TEST_CASE("many threads allocating and freeing across each other keep the accounting exact", "[cpu_allocator]") {
  const size_t base = rt::cpu_memory_allocated();
  std::mutex mu;
  std::vector<rt::Tensor> handoff;  // made on one thread, freed on another
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        rt::Tensor x = rt::empty({int64_t(1 + (i * 37 + t * 11) % 3000)});
        static_cast<float*>(x.raw_data())[0] = float(i);
        std::lock_guard<std::mutex> lk(mu);
        if (handoff.size() > 16) handoff.erase(handoff.begin());
        handoff.push_back(x);
      }
    });
  for (auto& th : threads) th.join();
  handoff.clear();
  CHECK(rt::cpu_memory_allocated() == base);
  rt::cpu_empty_cache();
}

TEST_CASE("with RT_CPU_ALLOCATOR=malloc nothing is cached", "[malloc]") {
  const char* env = std::getenv("RT_CPU_ALLOCATOR");
  if (!env || std::string(env) != "malloc") return;  // run by the ctest entry that sets it
  const rt::CpuAllocatorStats before = rt::cpu_allocator_stats();
  CHECK_FALSE(before.caching);
  for (int i = 0; i < 10; ++i) rt::Tensor t = rt::empty({1000});
  const rt::CpuAllocatorStats after = rt::cpu_allocator_stats();
  CHECK(after.cached_bytes == 0);
  CHECK(after.cache_hits == before.cache_hits);
}

#if defined(__SANITIZE_ADDRESS__)
TEST_CASE("under ASan a cached block is poisoned until handed out, and its slack stays poisoned", "[cpu_allocator]") {
  if (!caching_on()) return;
  rt::cpu_empty_cache();
  char* p = nullptr;
  {
    rt::Tensor a = rt::empty({25});  // 100 bytes in a 128-byte block
    p = static_cast<char*>(a.raw_data());
    CHECK_FALSE(__asan_address_is_poisoned(p));
    CHECK_FALSE(__asan_address_is_poisoned(p + 99));
  }
  CHECK(__asan_address_is_poisoned(p));  // freed into the cache: a read here is reported
  CHECK(__asan_address_is_poisoned(p + 64));
  rt::Tensor b = rt::empty({20});  // 80 bytes, same class: the same block
  REQUIRE(static_cast<char*>(b.raw_data()) == p);
  CHECK_FALSE(__asan_address_is_poisoned(p + 79));
  CHECK(__asan_address_is_poisoned(p + 80));  // past the tensor's end
}
#endif
