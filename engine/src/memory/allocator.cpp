// Note [Memory categories]
// Every allocation is tagged with the category current on the allocating thread: an explicit
// MemoryCategoryGuard wins (nn modules use Parameter, optimizers OptimizerState, the autograd
// engine Gradient for .grad and Temporary for intermediate gradients); otherwise memory made
// while grad mode is on and recording is Activation, and everything else Temporary.
// The CPU allocator hands out 64-byte aligned blocks, reused through its cache (Note [CPU block
// cache] in cpu_block_cache.cpp) unless RT_CPU_ALLOCATOR=malloc; events go to the event
// recorder and observers only when one is attached (the dispatch flag), so unobserved
// allocation costs one atomic load.
#include "rt/allocator.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "rt/autograd/grad_mode.h"
#include "rt/error.h"
#include "rt/op_observer.h"
#include "cpu_block_cache.h"
#include "memory_events.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define RT_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define RT_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace rt {
namespace {

std::mutex g_mem_mu;
std::vector<MemoryObserver*> g_mem_observers;
std::atomic<int> g_mem_observer_count{0};
std::atomic<size_t> g_cpu_allocated{0};
std::atomic<size_t> g_cpu_peak{0};

thread_local MemoryCategory t_category = MemoryCategory::Other;
thread_local bool t_category_explicit = false;

void emit(bool is_alloc, const void* p, size_t bytes, Device d, MemoryCategory c, size_t total_after) {
  if (!(detail::g_dispatch_flags.load(std::memory_order_relaxed) & detail::kObserved)) return;
  EventRecorder* recorder = event_recorder();
  const bool observed = g_mem_observer_count.load(std::memory_order_relaxed) != 0;
  if (!recorder && !observed) return;
  MemoryEvent e{is_alloc, p, bytes, d, c, current_op_name(), 0};  // a recorder keeps its own clock
  if (recorder) recorder->memory_event(e, int64_t(total_after));
  if (!observed) return;
  e.time_ns = now_ns();
  std::lock_guard<std::mutex> lk(g_mem_mu);
  for (auto* o : g_mem_observers) o->on_memory_event(e);
}

struct BlockHeader {  // stored just before the aligned block; remembers its category
  MemoryCategory category;
};
static_assert(sizeof(BlockHeader) <= detail::CpuBlockCache::kHeaderBytes);

// RT_CPU_ALLOCATOR: "caching" (the default) or "malloc" (no cache: every block from and back
// to the C library, so ASan and valgrind see each tensor's memory on its own).
bool caching_from_environment() {
  const char* env = std::getenv("RT_CPU_ALLOCATOR");
  if (!env || !*env || std::string_view(env) == "caching") return true;
  if (std::string_view(env) == "malloc") return false;
  throw ValueError(std::string("RT_CPU_ALLOCATOR=") + env +
                   ": expected 'caching' (the default: freed blocks are kept for reuse) or 'malloc' (every block "
                   "from and back to the C library, for ASan or valgrind)");
}

class CpuAllocator final : public Allocator {
 public:
  CpuAllocator() : caching_(caching_from_environment()), cache_(detail::CpuBlockCache::instance()) {}

  void* allocate(size_t bytes) override {
    using detail::CpuBlockCache;
    const int c = caching_ ? CpuBlockCache::size_class(bytes) : -1;
    void* p = c >= 0 ? cache_.take(c) : nullptr;
    if (!p) {
      p = CpuBlockCache::allocate_block(c, bytes);
      if (!p && c >= 0) {  // the cache may hold what the C library needs: give it back and retry
        cache_.empty();
        p = CpuBlockCache::allocate_block(c, bytes);
      }
      if (!p)
        throw Error("out of memory: the CPU allocator could not allocate " + std::to_string(bytes) +
                    " bytes; reduce the batch size or free tensors you no longer need");
    } else {
      RT_UNPOISON(p, bytes);
    }
    const MemoryCategory cat = current_memory_category();
    reinterpret_cast<BlockHeader*>(static_cast<char*>(p) - sizeof(BlockHeader))->category = cat;
    const size_t now = g_cpu_allocated.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    size_t peak = g_cpu_peak.load(std::memory_order_relaxed);
    while (now > peak && !g_cpu_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {}
    emit(true, p, bytes, Device::cpu(), cat, now);
    return p;
  }
  void deallocate(void* p, size_t bytes) override {
    if (!p) return;
    char* cp = static_cast<char*>(p);
    const size_t now = g_cpu_allocated.fetch_sub(bytes, std::memory_order_relaxed) - bytes;
    emit(false, p, bytes, Device::cpu(), reinterpret_cast<BlockHeader*>(cp - sizeof(BlockHeader))->category, now);
    const int c = caching_ ? detail::CpuBlockCache::size_class(bytes) : -1;
    if (c >= 0) cache_.give(p, c);
    else detail::CpuBlockCache::free_block(p);
  }
  Device device() const override { return Device::cpu(); }
  bool caching() const { return caching_; }

 private:
  const bool caching_;
  detail::CpuBlockCache& cache_;
};

CpuAllocator& the_cpu_allocator() {
  static CpuAllocator a;
  return a;
}

}  // namespace

namespace detail {
void set_memory_observed(bool on);

void emit_memory_event(bool is_alloc, const void* p, size_t bytes, Device d, MemoryCategory c, size_t total_after) {
  emit(is_alloc, p, bytes, d, c, total_after);
}
}  // namespace detail

const char* category_name(MemoryCategory c) {
  switch (c) {
    case MemoryCategory::Parameter: return "parameter";
    case MemoryCategory::Gradient: return "gradient";
    case MemoryCategory::Activation: return "activation";
    case MemoryCategory::OptimizerState: return "optimizer_state";
    case MemoryCategory::Temporary: return "temporary";
    case MemoryCategory::Other: return "other";
  }
  return "other";
}

void add_memory_observer(MemoryObserver* o) {
  std::lock_guard<std::mutex> lk(g_mem_mu);
  g_mem_observers.push_back(o);
  g_mem_observer_count.store(int(g_mem_observers.size()));
  detail::set_memory_observed(true);
}

void remove_memory_observer(MemoryObserver* o) {
  std::lock_guard<std::mutex> lk(g_mem_mu);
  g_mem_observers.erase(std::remove(g_mem_observers.begin(), g_mem_observers.end(), o), g_mem_observers.end());
  g_mem_observer_count.store(int(g_mem_observers.size()));
  detail::set_memory_observed(!g_mem_observers.empty());
}

MemoryCategoryGuard::MemoryCategoryGuard(MemoryCategory c) : saved_(t_category), saved_explicit_(t_category_explicit) {
  t_category = c;
  t_category_explicit = true;
}
MemoryCategoryGuard::~MemoryCategoryGuard() {
  t_category = saved_;
  t_category_explicit = saved_explicit_;
}

MemoryCategory current_memory_category() {
  if (t_category_explicit) return t_category;
  return GradMode::is_enabled() ? MemoryCategory::Activation : MemoryCategory::Temporary;
}

Allocator* cpu_allocator() { return &the_cpu_allocator(); }

CpuAllocatorStats cpu_allocator_stats() {
  const detail::CpuBlockCache& cache = detail::CpuBlockCache::instance();
  const detail::CpuCacheStats s = cache.stats();
  return {the_cpu_allocator().caching(), s.cached_bytes, s.hits, s.misses, s.released_bytes, cache.limit()};
}

void cpu_empty_cache() { detail::CpuBlockCache::instance().empty(); }

size_t cpu_memory_allocated() { return g_cpu_allocated.load(); }
size_t cpu_max_memory_allocated() { return g_cpu_peak.load(); }
void reset_cpu_peak_memory() { g_cpu_peak.store(g_cpu_allocated.load()); }

}  // namespace rt
