#include "install_layout.h"

#include <cstdlib>

namespace rt::cli {

namespace fs = std::filesystem;

fs::path bench_program() { return executable_dir() / "rt_bench"; }

fs::path bench_script_dir() {
  if (const char* env = std::getenv("RT_BENCH_DIR"); env && *env) return env;
  return fs::path(RT_SOURCE_DIR) / "bench";
}

}  // namespace rt::cli
