// kernels/cuda_emulator/fault_report.h — names the kernel, block and thread when a kernel crashes.
//
// A GPU reports a kernel's bad access as cudaErrorIllegalAddress and compute-sanitizer names the
// thread; on the CPU the same access is a SIGSEGV of the whole process, which says nothing of the
// kernel. The block runner calls install_fault_report() before each launch; then a fault inside a
// kernel prints, before the process dies as it would have:
//
//   cuda emulator: kernel softmax_kernel<float, 4>, block (7, 0, 0), thread (96, 0, 0): segmentation fault
//       reading or writing the address (an access outside any allocation: on a GPU,
//       cudaErrorIllegalAddress); address 0x40
//
// The previous handler (the default, ASan's, Python's faulthandler) then takes the fault, so
// sanitizer reports and core dumps stay as they were; a signal sent with kill() or raise() goes
// to it unreported. Handlers run on an alternate signal stack (the thread's own if it has one,
// else one of ours), so a thread that overflows its fiber stack is reported too ("stack
// overflow"). Where a fault is not a signal it is not reported: an integer division by zero traps
// on x86-64 (SIGFPE) but returns 0 on AArch64; under UBSan, UBSan reports it first.
#pragma once
#include <cstddef>

namespace rt::cuda_emulator {

// Installs the handlers for SIGSEGV, SIGBUS and SIGFPE where they are not already ours (wrapping
// whatever is there now; not while a fault is on its way to the previous handler), and an
// alternate signal stack for the calling thread if it has none.
// Three sigaction calls after the first on a thread.
void install_fault_report();

// What the handler reports: set by the block runner as it switches to a kernel thread's fiber.
struct RunningKernel {
  const char* name = nullptr;      // the kernel as launched ("softmax_kernel<float, 4>")
  const char* stack_low = nullptr; // the running fiber's stack: [stack_low, stack_low + stack_bytes)
  size_t stack_bytes = 0;
  size_t guard_bytes = 0;          // the inaccessible region below stack_low
};
extern thread_local RunningKernel t_running_kernel;

}  // namespace rt::cuda_emulator
