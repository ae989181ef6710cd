// rt/allocator.h — device memory, with an event for every allocation and free.
//
//   struct Printer : rt::MemoryObserver {
//     void on_memory_event(const rt::MemoryEvent& e) override {
//       std::printf("%s %zu bytes (%s)\n", e.is_alloc ? "alloc" : "free", e.bytes,
//                   rt::category_name(e.category));
//     }
//   } printer;
//   rt::add_memory_observer(&printer);
//   { rt::MemoryCategoryGuard g(rt::MemoryCategory::OptimizerState); auto m = rt::zeros({10}); }
//   rt::remove_memory_observer(&printer);
//
// Categories are tagged by the engine: nn modules allocate parameters under Parameter,
// autograd accumulates .grad under Gradient, optimizers allocate state under OptimizerState,
// ops run while grad is recorded produce Activation, everything else is Temporary.
// See Note [Memory categories] in engine/src/allocator.cpp.
#pragma once
#include <cstddef>
#include <cstdint>

#include "rt/device.h"
#include "rt/export.h"

RT_API_BEGIN

namespace rt {

enum class MemoryCategory : uint8_t { Parameter, Gradient, Activation, OptimizerState, Temporary, Other };
const char* category_name(MemoryCategory c);  // "parameter", "gradient", ...

struct MemoryEvent {
  bool is_alloc = true;
  const void* ptr = nullptr;
  size_t bytes = 0;
  Device device;
  MemoryCategory category = MemoryCategory::Other;
  const char* op = nullptr;  // the op running when the block was allocated, or nullptr
  int64_t time_ns = 0;       // steady clock
};

class MemoryObserver {
 public:
  virtual ~MemoryObserver() = default;
  // Called on the allocating/freeing thread; must not allocate tensors.
  virtual void on_memory_event(const MemoryEvent& e) = 0;
};
void add_memory_observer(MemoryObserver* o);
void remove_memory_observer(MemoryObserver* o);

// Sets the category for allocations made on this thread while the guard lives.
class MemoryCategoryGuard {
 public:
  explicit MemoryCategoryGuard(MemoryCategory c);
  ~MemoryCategoryGuard();
  MemoryCategoryGuard(const MemoryCategoryGuard&) = delete;
  MemoryCategoryGuard& operator=(const MemoryCategoryGuard&) = delete;

 private:
  MemoryCategory saved_;
  bool saved_explicit_;
};
// The category a new allocation on this thread gets.
MemoryCategory current_memory_category();

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(size_t bytes) = 0;   // throws rt::Error when out of memory
  virtual void deallocate(void* p, size_t bytes) = 0;
  virtual Device device() const = 0;
};
Allocator* cpu_allocator();  // 64-byte aligned, reports MemoryEvents

// Bytes currently allocated through the CPU allocator, and the peak since the last reset.
size_t cpu_memory_allocated();
size_t cpu_max_memory_allocated();
void reset_cpu_peak_memory();

// The CPU allocator keeps freed blocks for reuse, as PyTorch's CUDA allocator does on the GPU:
//
//   rt::CpuAllocatorStats s = rt::cpu_allocator_stats();   // s.cached_bytes held for reuse
//   rt::cpu_empty_cache();                                 // hands them back to the C library
//
// RT_CPU_ALLOCATOR=malloc in the environment turns the cache off (each block comes from and goes
// back to the C library: for ASan or valgrind); RT_CPU_CACHE_LIMIT_MB caps what it holds
// (default: a quarter of RAM, at most 4 GiB; 0 keeps nothing). The allocated bytes above and
// memory events count what tensors asked for, never the cache.
struct CpuAllocatorStats {
  bool caching = true;           // false under RT_CPU_ALLOCATOR=malloc
  size_t cached_bytes = 0;       // freed blocks held for reuse, every thread together
  uint64_t cache_hits = 0;       // allocations served from the cache
  uint64_t cache_misses = 0;     // allocations that went to the C library
  uint64_t released_bytes = 0;   // cached bytes handed back (over the limit, or cpu_empty_cache)
  size_t cache_limit = 0;        // the most bytes the cache may hold
};
CpuAllocatorStats cpu_allocator_stats();
// Frees every cached block: the calling thread's and the shared pool's now, other threads' at
// their next allocation or free.
void cpu_empty_cache();

}  // namespace rt

RT_API_END
