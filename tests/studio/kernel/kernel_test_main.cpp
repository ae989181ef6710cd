// Catch2 main for the kernel tests: runs the selected tests, then destroys the kernel (a clean stop:
// interrupt, join, fds restored) so every test process also exercises PythonKernel's destructor.
// Catch2 itself is rt_catch's (engine/support/catch_impl.cpp), with its own SIGINT handler on: the kernel
// must put Python's back before each cell (PythonRuntime::discard_pending_interrupt), so the interrupt tests
// also cover a host that installed one.
#include <catch2/catch.hpp>

#include "catch_run.h"

#include "kernel_recorder.h"

int main(int argc, char** argv) {
  const int failed = rt::testing::run_catch(argc, argv);
  rt::studio::testing::shut_down_test_kernel();
  return failed;
}
