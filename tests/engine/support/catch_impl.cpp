// Catch2's implementation for the test binaries that define main() themselves, compiled once per build tree
// (the rt_catch library) rather than into each of them: it is the slowest translation unit of the tests,
// about a minute. Binaries with a plain main() link Debian's prebuilt Catch2::Catch2WithMain instead. The
// studio runner's tests keep their own copy, built without Catch's signal handlers (runner_test_main.cpp).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "catch_run.h"

namespace rt::testing {

int run_catch(int argc, const char* const* argv) { return Catch::Session().run(argc, argv); }

}  // namespace rt::testing
