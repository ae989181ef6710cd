// Catch2 main for the kernel tests: runs the selected tests, then destroys the kernel (a clean stop:
// interrupt, join, fds restored) so every test process also exercises PythonKernel's destructor.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "kernel_recorder.h"

int main(int argc, char** argv) {
  const int failed = Catch::Session().run(argc, argv);
  rt::studio::testing::shut_down_test_kernel();
  return failed;
}
