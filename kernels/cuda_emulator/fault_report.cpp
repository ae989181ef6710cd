// kernels/cuda_emulator/fault_report.cpp — see fault_report.h.
#include "cuda_emulator/fault_report.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <mutex>

#include "cuda_emulator/device.h"

namespace rt::cuda_emulator {

thread_local RunningKernel t_running_kernel;

namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE};
struct sigaction g_previous[sizeof kSignals / sizeof kSignals[0]];
volatile sig_atomic_t g_handled = 0;  // a fault went through on_fault already

int signal_index(int sig) {
  for (int i = 0; i < int(sizeof kSignals / sizeof kSignals[0]); ++i)
    if (kSignals[i] == sig) return i;
  return -1;
}

// What went wrong, in the terms of a CUDA programmer.
const char* describe(int sig, const siginfo_t* info, const RunningKernel& k) {
  const char* address = static_cast<const char*>(info->si_addr);
  if (sig == SIGSEGV && k.stack_low && address < k.stack_low && address >= k.stack_low - k.guard_bytes)
    return "stack overflow: the thread used more than the 512 KiB of local memory a CUDA thread may have "
           "(deep recursion or a large local array)";
  if (sig == SIGFPE)
    return "arithmetic trap (an integer division by zero: a GPU returns an unspecified value instead, "
           "so the kernel's result is wrong there too)";
  if (sig == SIGBUS) return "bus error at the address (a misaligned or unmapped access)";
  return "segmentation fault reading or writing the address (an access outside any allocation: "
         "on a GPU, cudaErrorIllegalAddress)";
}

// async-signal-safe enough: snprintf of integers and strings into a stack buffer, then write(2).
void on_fault(int sig, siginfo_t* info, void* /*ucontext*/) {
  const RunningKernel& k = t_running_kernel;
  const ThreadPosition* p = t_position;
  const bool sent = info->si_code <= 0;  // kill(), raise(), pthread_kill(): not a fault of this thread
  if (k.name && p && !sent && !g_handled) {
    char text[1024];
    const int n = std::snprintf(
        text, sizeof text, "cuda emulator: kernel %s, block (%u, %u, %u), thread (%u, %u, %u): %s; %s %p\n",
        k.name, p->block_idx.x, p->block_idx.y, p->block_idx.z, p->thread_idx.x, p->thread_idx.y, p->thread_idx.z,
        describe(sig, info, k), sig == SIGFPE ? "instruction" : "address", info->si_addr);
    if (n > 0) {
      const ssize_t ignored = write(STDERR_FILENO, text, size_t(n) < sizeof text ? size_t(n) : sizeof text - 1);
      (void)ignored;
    }
  }
  // Hand the signal to whoever had it before. A fault re-runs its instruction when this returns,
  // now under that handler; a sent signal is sent again (it stays blocked until this returns).
  // A second fault through here (a previous handler that hands it back to us) goes to the default
  // action, so handlers that chain to each other cannot loop; install_fault_report no longer
  // reinstalls ours once a fault went through (another thread's launch would catch the re-run).
  const int i = signal_index(sig);
  struct sigaction previous = g_previous[i];
  if (previous.sa_handler == SIG_IGN || (g_handled && !sent)) {  // an ignored fault would loop forever
    previous = {};
    previous.sa_handler = SIG_DFL;
  }
  if (!sent) g_handled = 1;
  sigaction(sig, &previous, nullptr);
  if (sent) raise(sig);
}

// An alternate signal stack for this thread while it has none (unmapped when the thread ends, if
// it is still ours): a handler needs one to run when the fault is the thread's stack overflowing.
class AlternateStack {
 public:
  // One sigaltstack call when the thread has one (ours, ASan's, the host's); maps ours at first need.
  void ensure() {
    stack_t current{};
    if (sigaltstack(nullptr, &current) != 0 || !(current.ss_flags & SS_DISABLE)) return;
    if (!mapping_) {
      void* p = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) return;  // no report for a stack overflow on this thread; the rest still works
      mapping_ = p;
    }
    stack_t mine{};
    mine.ss_sp = mapping_;
    mine.ss_size = kBytes;
    sigaltstack(&mine, nullptr);
  }
  AlternateStack() = default;
  ~AlternateStack() {
    if (!mapping_) return;
    stack_t current{};
    if (sigaltstack(nullptr, &current) == 0 && current.ss_sp == mapping_) {
      stack_t off{};
      off.ss_flags = SS_DISABLE;
      sigaltstack(&off, nullptr);
    }
    munmap(mapping_, kBytes);
  }
  AlternateStack(const AlternateStack&) = delete;
  AlternateStack& operator=(const AlternateStack&) = delete;

 private:
  static constexpr size_t kBytes = 64 * 1024;
  void* mapping_ = nullptr;
};

}  // namespace

void install_fault_report() {
  // Checked at every launch, not once: a test framework's temporary alternate stack may be gone,
  // and a handler installed after ours (Catch2's, pytest's faulthandler, a forked child's SIG_DFL)
  // is wrapped again rather than left to hide the kernel.
  thread_local AlternateStack alternate_stack;
  alternate_stack.ensure();
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (g_handled) return;  // a fault is on its way to the previous handler
  for (int i = 0; i < int(sizeof kSignals / sizeof kSignals[0]); ++i) {
    struct sigaction current{};
    if (sigaction(kSignals[i], nullptr, &current) != 0) continue;
    if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == on_fault) continue;
    struct sigaction action{};
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    g_previous[i] = current;
    sigaction(kSignals[i], &action, nullptr);
  }
}

}  // namespace rt::cuda_emulator
