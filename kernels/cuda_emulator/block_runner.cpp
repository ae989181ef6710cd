// Runs a kernel's grid on the calling thread: blocks one after another, a block's threads as
// ucontext fibers that switch only where CUDA threads synchronise. See device.h for what a kernel
// sees and which undefined behaviour is reported.
//
// Note [Rounds]. A round takes the block's warps one after another and runs each as far as it can
// go alone: its runnable fibers run until they wait (at __syncthreads, __syncwarp or a shuffle) or
// return, its complete warp groups are released (a group: the mask's lanes all waiting with the
// same kind and mask; a shuffle's lanes then read each other's published values), and again, until
// the warp waits at __syncthreads, at an incomplete group, or has returned. Then the next warp
// runs. After the last, __syncthreads is released once every thread that has not returned waits
// there (returned threads count as arrived, as on Volta and later). A round that releases nothing
// while threads still wait is a deadlock on a GPU too.
//
// Running one warp ahead of the others between block barriers is a schedule a GPU may choose, and
// the one that shows a missing __syncthreads: a warp that writes shared memory for the next step
// before the others have read the last one's. The first warp runs ahead by default, its lanes in
// order; with RT_CUDA_EMULATED_WARP_ORDER=last the last warp does, its lanes from the last (so a lane
// reading what a lower lane wrote without __syncwarp shows too). scripts/test.sh runs both.
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cuda_emulator/device.h"
#include "cuda_emulator/fault_report.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define RT_EMULATOR_ASAN 1
#endif

namespace rt::cuda_emulator {

thread_local const ThreadPosition* t_position = nullptr;
thread_local uint64_t t_block_serial = 0;

namespace {

// A CUDA thread may use 512 KiB of local memory; mapped lazily (MAP_NORESERVE), so untouched stack
// costs address space only.
constexpr size_t kStackBytes = 512 * 1024;
// Below each stack. Kernels compile with -fstack-clash-protection, so even a frame larger than this
// touches it page by page on its way down rather than skipping over it into the next stack.
constexpr size_t kGuardBytes = 64 * 1024;
constexpr int kWarp = 32;

// A fiber stack with an inaccessible guard region below it, so an overflow faults instead of
// writing into the next stack.
class FiberStack {
 public:
  FiberStack() {
    mapping_bytes_ = kStackBytes + kGuardBytes;
    void* p = mmap(nullptr, mapping_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      std::fprintf(stderr, "cuda emulator: cannot map a %zu KiB fiber stack\n", kStackBytes / 1024);
      std::abort();
    }
    mprotect(p, kGuardBytes, PROT_NONE);
    mapping_ = p;
    base_ = static_cast<char*>(p) + kGuardBytes;
  }
  ~FiberStack() { munmap(mapping_, mapping_bytes_); }
  FiberStack(const FiberStack&) = delete;
  FiberStack& operator=(const FiberStack&) = delete;
  char* base() const { return base_; }

 private:
  void* mapping_ = nullptr;
  size_t mapping_bytes_ = 0;
  char* base_ = nullptr;
};

enum class Wait { None, Block, Warp, Shuffle, Done, Refused };  // Refused: parked for good
enum class WarpOrder { First, Last, Invalid };
WarpOrder warp_order();

struct Fiber {
  ucontext_t context;
  ThreadPosition position;
  Wait wait = Wait::None;
  unsigned mask = 0;       // Warp / Shuffle: the lanes named
  unsigned char value[16]; // Shuffle: what this lane publishes
  size_t bytes = 0;
  int source = -1;         // Shuffle: the lane read, -1 for its own value
  void* result = nullptr;  // Shuffle: where the value read goes
};

// "3, 16-31" for the lanes set in `lanes`.
std::string lane_list(unsigned lanes) {
  std::string s;
  for (int l = 0; l < kWarp;) {
    if (!(lanes & (1u << l))) {
      ++l;
      continue;
    }
    int last = l;
    while (last + 1 < kWarp && (lanes & (1u << (last + 1)))) ++last;
    if (!s.empty()) s += ", ";
    s += std::to_string(l);
    if (last > l) s.append("-").append(std::to_string(last));
    l = last + 1;
  }
  return s;
}

const char* wait_name(Wait w) {
  switch (w) {
    case Wait::Block: return "__syncthreads";
    case Wait::Warp: return "__syncwarp";
    case Wait::Shuffle: return "a shuffle";
    case Wait::Done: return "return";
    case Wait::Refused: return "__launch_bounds__";
    case Wait::None: break;
  }
  return "running";
}

class BlockRunner;
thread_local BlockRunner* t_runner = nullptr;

class BlockRunner {
 public:
  BlockRunner(const char* kernel_name, const LaunchConfig& config, void (*body)(void*), void* context)
      : kernel_name_(kernel_name), config_(config), body_(body), context_(context) {
    threads_ = int(config.block.x * config.block.y * config.block.z);
    fibers_.resize(size_t(threads_));
    while (stacks().size() < size_t(threads_)) stacks().push_back(std::make_unique<FiberStack>());
    if (config.shared_bytes) shared_.reset(static_cast<unsigned char*>(std::aligned_alloc(128, round_up(config.shared_bytes))));
  }

  void* shared_memory() const { return shared_.get(); }

  // Runs block `block`; false (after printing why) when the kernel did what a GPU leaves undefined.
  bool run_block(uint3 block) {
    ++t_block_serial;  // __shared__ variables refill with 0xff bytes at their first use in this block
    if (shared_) std::memset(shared_.get(), 0xff, config_.shared_bytes);  // NaN / -1 where read before written
#if RT_EMULATOR_ASAN
    // Frames of fibers a failed launch abandoned stay poisoned for ASan: cleared here, only then
    // (see start_fiber).
    if (t_stacks_abandoned)
      for (const auto& stack : stacks()) ASAN_UNPOISON_MEMORY_REGION(stack->base(), kStackBytes);
#endif
    t_stacks_abandoned = false;
    for (int t = 0; t < threads_; ++t) start_fiber(t, block);
    const int warps = (threads_ + kWarp - 1) / kWarp;
    const bool reverse = warp_order() == WarpOrder::Last;
    for (;;) {
      bool released = false;
      for (int i = 0; i < warps; ++i) {
        const int w = reverse ? warps - 1 - i : i;
        const int first = w * kWarp, lanes = std::min(kWarp, threads_ - first);
        for (bool warp_released = true; warp_released;) {
          for (int l = 0; l < lanes; ++l) {
            const int t = first + (reverse ? lanes - 1 - l : l);
            if (fibers_[size_t(t)].wait == Wait::None) switch_to(t);
          }
          warp_released = false;
          if (!release_warp(w, warp_released)) return false;
          released = released || warp_released;
        }
      }
      if (!kernel_problem_.empty()) return fail(kernel_problem_thread_, kernel_problem_);
      int live = 0, at_block_barrier = 0;
      for (const Fiber& f : fibers_) {
        live += f.wait != Wait::Done;
        at_block_barrier += f.wait == Wait::Block;
      }
      if (live == 0) return true;
      if (at_block_barrier == live) {
        for (Fiber& f : fibers_)
          if (f.wait == Wait::Block) f.wait = Wait::None;
        released = true;
      }
      if (!released) return report_deadlock();
    }
  }

  // Called on a fiber: waits for the scheduler to release it.
  void wait(Wait kind) {
    fibers_[size_t(current_)].wait = kind;
    switch_to_scheduler(false);
  }
  Fiber& current() { return fibers_[size_t(current_)]; }

  // Called on a fiber by a shuffle whose width is not a power of two from 1 to 32: reported after
  // this round, and the lane reads its own value meanwhile.
  void shuffle_width_problem() {
    if (!kernel_problem_.empty()) return;
    kernel_problem_ = "a shuffle's width is not a power of two from 1 to 32";
    kernel_problem_thread_ = current_;
  }

  // Called on a fiber by check_launch_bounds: the block is larger than the kernel allows.
  void exceeds_launch_bounds(unsigned max_threads) {
    if (kernel_problem_.empty())
      kernel_problem_ = "a block of " + std::to_string(threads_) + " threads, more than the kernel's " +
                               "__launch_bounds__ of " + std::to_string(max_threads) +
                               " (a GPU refuses the launch: too many resources requested)";
  }
  int threads() const { return threads_; }

 private:
  static std::vector<std::unique_ptr<FiberStack>>& stacks() {
    thread_local std::vector<std::unique_ptr<FiberStack>> pool;
    return pool;
  }
  // Set when a launch fails with fibers mid-kernel (whose stacks may hold poisoned frames).
  static inline thread_local bool t_stacks_abandoned = false;

  static size_t round_up(size_t n) { return (n + 127) / 128 * 128; }

  void start_fiber(int t, uint3 block) {
    Fiber& f = fibers_[size_t(t)];
    const dim3 b = config_.block;
    f.position.thread_idx = uint3{unsigned(t) % b.x, unsigned(t) / b.x % b.y, unsigned(t) / (b.x * b.y)};
    f.position.block_idx = block;
    f.position.block_dim = b;
    f.position.grid_dim = config_.grid;
    f.position.lane = t % kWarp;
    f.wait = Wait::None;
    char* stack = stacks()[size_t(t)]->base();
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = stack;
    f.context.uc_stack.ss_size = kStackBytes;
    f.context.uc_link = nullptr;
    makecontext(&f.context, &BlockRunner::fiber_main, 0);
#if RT_EMULATOR_ASAN
    // ASan's swapcontext clears the shadow of the whole stack it switches to, at every switch: for
    // a 512 KiB stack that is an mmap and an madvise each time (64 KiB of shadow is past its
    // clear_shadow_mmap_threshold), which made the op check 15 times slower. makecontext has set
    // the stack pointer already, so the stack's bounds are hidden from it. Kernel frames that return
    // leave their stack clean; fiber_main's own frame at the top never returns, so the top 16 KiB
    // is cleared here (2 KiB of shadow), and the stacks a failed launch abandons in run_block.
    f.context.uc_stack.ss_sp = nullptr;
    f.context.uc_stack.ss_size = 0;
    constexpr size_t kTopBytes = 16 * 1024;
    ASAN_UNPOISON_MEMORY_REGION(stack + kStackBytes - kTopBytes, kTopBytes);
#endif
  }

  static void fiber_main() {
    BlockRunner* self = t_runner;
    self->arrived_on_fiber();
    self->body_(self->context_);
    self->current().wait = Wait::Done;
    self->switch_to_scheduler(true);
  }

  void switch_to(int t) {
    current_ = t;
    t_position = &fibers_[size_t(t)].position;
    t_running_kernel = RunningKernel{kernel_name_, stacks()[size_t(t)]->base(), kStackBytes, kGuardBytes};
#if RT_EMULATOR_ASAN
    void* fake_stack = nullptr;
    __sanitizer_start_switch_fiber(&fake_stack, stacks()[size_t(t)]->base(), kStackBytes);
    swapcontext(&scheduler_, &fibers_[size_t(t)].context);
    __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#else
    swapcontext(&scheduler_, &fibers_[size_t(t)].context);
#endif
    t_position = nullptr;
    t_running_kernel = RunningKernel{};
  }

  void arrived_on_fiber() {
#if RT_EMULATOR_ASAN
    __sanitizer_finish_switch_fiber(nullptr, &scheduler_stack_, &scheduler_stack_bytes_);
#endif
  }

  void switch_to_scheduler(bool finished) {
#if RT_EMULATOR_ASAN
    void* fake_stack = nullptr;
    __sanitizer_start_switch_fiber(finished ? nullptr : &fake_stack, scheduler_stack_, scheduler_stack_bytes_);
    swapcontext(&current().context, &scheduler_);
    __sanitizer_finish_switch_fiber(fake_stack, &scheduler_stack_, &scheduler_stack_bytes_);
#else
    (void)finished;
    swapcontext(&current().context, &scheduler_);
#endif
  }

  // Releases the complete groups of warp w; false after reporting a mask that names a lane that
  // does not exist, has returned, or a shuffle reading a lane outside its mask.
  bool release_warp(int w, bool& released) {
    const int first = w * kWarp;
    const int lanes = std::min(kWarp, threads_ - first);
    const unsigned existing = lanes == kWarp ? 0xffffffffu : (1u << lanes) - 1;
    for (int l = 0; l < lanes; ++l) {
      Fiber& f = fibers_[size_t(first + l)];
      if (f.wait != Wait::Warp && f.wait != Wait::Shuffle) continue;
      if (f.mask & ~existing)
        return fail(first + l, std::string(wait_name(f.wait)) + " with mask 0x" + hex(f.mask) + " names lane(s) " +
                                   lane_list(f.mask & ~existing) + ", which this block of " + std::to_string(threads_) +
                                   " threads does not have");
      if (!(f.mask & (1u << l)))
        return fail(first + l, std::string(wait_name(f.wait)) + " with mask 0x" + hex(f.mask) +
                                   " does not name the calling lane " + std::to_string(l));
      unsigned complete = 0, returned = 0;
      for (int m = 0; m < lanes; ++m) {
        if (!(f.mask & (1u << m))) continue;
        const Fiber& g = fibers_[size_t(first + m)];
        if (g.wait == Wait::Done) returned |= 1u << m;
        if (g.wait == f.wait && g.mask == f.mask) complete |= 1u << m;
      }
      if (returned)
        return fail(first + l, std::string(wait_name(f.wait)) + " with mask 0x" + hex(f.mask) + " waits for lane(s) " +
                                   lane_list(returned) + ", which returned from the kernel");
      if (complete != f.mask) continue;  // others still on their way, or at another barrier (a deadlock, if nothing moves)
      if (f.wait == Wait::Shuffle) {
        for (int m = 0; m < lanes; ++m) {
          if (!(f.mask & (1u << m))) continue;
          Fiber& g = fibers_[size_t(first + m)];
          if (g.source >= 0 && !(f.mask & (1u << g.source)))
            return fail(first + m, "a shuffle with mask 0x" + hex(f.mask) + " reads lane " + std::to_string(g.source) +
                                       ", which is not in the mask (its value is undefined)");
          const Fiber& from = g.source >= 0 ? fibers_[size_t(first + g.source)] : g;
          std::memcpy(g.result, from.value, g.bytes);
        }
      }
      for (int m = 0; m < lanes; ++m)
        if (f.mask & (1u << m)) fibers_[size_t(first + m)].wait = Wait::None;
      released = true;
    }
    return true;
  }

  bool report_deadlock() {
    std::string waits;
    for (int t = 0; t < threads_;) {
      const Fiber& f = fibers_[size_t(t)];
      int u = t + 1;
      while (u < threads_ && fibers_[size_t(u)].wait == f.wait && fibers_[size_t(u)].mask == f.mask) ++u;
      waits.append(u - t > 1 ? "; threads " : "; thread ").append(std::to_string(t));
      if (u - t > 1) waits.append("-").append(std::to_string(u - 1));
      waits.append(": ").append(wait_name(f.wait));
      if (f.wait == Wait::Warp || f.wait == Wait::Shuffle) waits += " (mask 0x" + hex(f.mask) + ")";
      t = u;
    }
    return fail(-1, "deadlock: no barrier can complete" + waits);
  }

  static std::string hex(unsigned v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08x", v);
    return buf;
  }

  bool fail(int thread, const std::string& what) {
    t_stacks_abandoned = true;
    const uint3 b = fibers_[0].position.block_idx;
    std::fprintf(stderr, "cuda emulator: kernel %s, block (%u, %u, %u)%s: %s\n", kernel_name_, b.x, b.y, b.z,
                 thread >= 0 ? (", thread " + std::to_string(thread)).c_str() : "", what.c_str());
    return false;
  }

  const char* kernel_name_;
  LaunchConfig config_;
  void (*body_)(void*);
  void* context_;
  int threads_ = 0;
  int current_ = -1;
  std::string kernel_problem_;  // what fails the launch after this round, reported for thread
  int kernel_problem_thread_ = -1;  // (or for the block, -1)
  std::vector<Fiber> fibers_;
  struct FreeDeleter {
    void operator()(unsigned char* p) const { std::free(p); }
  };
  std::unique_ptr<unsigned char, FreeDeleter> shared_;
  ucontext_t scheduler_{};  // swapcontext fills it; uc_stack stays empty (nothing for ASan to clear)
  const void* scheduler_stack_ = nullptr;
  size_t scheduler_stack_bytes_ = 0;
};

// RT_CUDA_EMULATED_WARP_ORDER: "first" (or unset) runs the first warp ahead, "last" the last one
// (Note [Rounds]); anything else fails every launch, after saying so once.
WarpOrder warp_order() {
  static const WarpOrder order = [] {
    const char* text = std::getenv("RT_CUDA_EMULATED_WARP_ORDER");
    if (!text || std::string(text) == "first") return WarpOrder::First;
    if (std::string(text) == "last") return WarpOrder::Last;
    std::fprintf(stderr, "cuda emulator: RT_CUDA_EMULATED_WARP_ORDER=\"%s\" is neither \"first\" nor \"last\"; "
                 "every launch fails with cudaErrorInvalidValue\n", text);
    return WarpOrder::Invalid;
  }();
  return order;
}

BlockRunner& runner_on_fiber(const char* what) {
  if (!t_runner || !t_position) {
    std::fprintf(stderr, "cuda emulator: %s called outside a kernel\n", what);
    std::abort();
  }
  return *t_runner;
}

cudaError_t check_config(const void* kernel, const LaunchConfig& c) {
  const dim3 b = c.block, g = c.grid;
  if (b.x == 0 || b.y == 0 || b.z == 0 || b.x > 1024 || b.y > 1024 || b.z > 64 ||
      uint64_t(b.x) * b.y * b.z > uint64_t(kMaxThreadsPerBlock))
    return cudaErrorInvalidConfiguration;
  if (g.x == 0 || g.y == 0 || g.z == 0 || g.x > 2147483647u || g.y > 65535 || g.z > 65535)
    return cudaErrorInvalidConfiguration;
  if (c.shared_bytes > max_dynamic_shared_bytes(kernel)) return cudaErrorInvalidValue;
  return cudaSuccess;
}

}  // namespace

cudaError_t run_grid(const char* kernel_name, const void* kernel, const LaunchConfig& config, void (*body)(void*),
                     void* context) {
  if (t_runner) {  // dynamic parallelism: the kernels here never launch kernels
    std::fprintf(stderr, "cuda emulator: kernel %s launched from inside a kernel, which the emulator does not run\n",
                 kernel_name);
    return cudaErrorNotSupported;
  }
  if (const cudaError_t e = check_config(kernel, config); e != cudaSuccess) return e;
  if (const cudaError_t e = check_launch_stream(config.stream); e != cudaSuccess) return e;
  if (warp_order() == WarpOrder::Invalid) return cudaErrorInvalidValue;
  install_fault_report();
  BlockRunner runner(kernel_name, config, body, context);
  t_runner = &runner;
  bool ok = true;
  for (unsigned z = 0; ok && z < config.grid.z; ++z)
    for (unsigned y = 0; ok && y < config.grid.y; ++y)
      for (unsigned x = 0; ok && x < config.grid.x; ++x) ok = runner.run_block(uint3{x, y, z});
  t_runner = nullptr;
  return ok ? cudaSuccess : cudaErrorLaunchFailure;
}

void check_launch_bounds(unsigned max_threads) {
  BlockRunner& r = runner_on_fiber("__launch_bounds__");
  if (unsigned(r.threads()) <= max_threads) return;
  r.exceeds_launch_bounds(max_threads);
  r.wait(Wait::Refused);  // never released: no kernel code runs in a block a GPU would not start
}

void* dynamic_shared_memory() { return runner_on_fiber("dynamic shared memory").shared_memory(); }

void sync_threads() { runner_on_fiber("__syncthreads").wait(Wait::Block); }

void sync_warp(unsigned mask) {
  BlockRunner& r = runner_on_fiber("__syncwarp");
  r.current().mask = mask;
  r.wait(Wait::Warp);
}

void shuffle(unsigned mask, const void* value, size_t bytes, int source, void* result) {
  BlockRunner& r = runner_on_fiber("a warp shuffle");
  if (source == kBadShuffleWidth) r.shuffle_width_problem();
  Fiber& f = r.current();
  f.mask = mask;
  std::memcpy(f.value, value, bytes);
  f.bytes = bytes;
  f.source = source;
  f.result = result;
  r.wait(Wait::Shuffle);
}

}  // namespace rt::cuda_emulator
