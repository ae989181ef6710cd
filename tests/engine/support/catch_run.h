// For test binaries that define main() themselves and link rt_catch (catch_impl.cpp): Catch2's Session is
// declared only where its implementation is compiled, so they run their tests through this.
//
//   int main(int argc, char** argv) {
//     if (!ready()) return 77;                 // skipped
//     return rt::testing::run_catch(argc, argv);
//   }
#pragma once

namespace rt::testing {

// Catch::Session().run(argc, argv): the tests argv selects; returns the number of failed tests (capped).
int run_catch(int argc, const char* const* argv);

}  // namespace rt::testing
