#include "thread_settings.h"

#include <cblas.h>
#include <fmt/core.h>

#include <charconv>
#include <cstdlib>
#include <string>

#include "rt/parallel.h"

namespace rt::cli {

namespace {
constexpr int kMaxThreads = 4096;
}

CLI::Validator thread_count_validator() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        int n = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
        if (ec != std::errc() || end != value.data() + value.size() || n < 1 || n > kMaxThreads)
          return fmt::format("expected a whole number of threads from 1 to {}, got '{}' (e.g. --threads 2)",
                             kMaxThreads, value);
        return {};
      },
      "N>=1", "thread count");
}

void apply_thread_count(int n) {
  rt::set_num_threads(n);
  openblas_set_num_threads(n);
  const std::string text = std::to_string(n);
  setenv("OMP_NUM_THREADS", text.c_str(), 1);
  setenv("OPENBLAS_NUM_THREADS", text.c_str(), 1);
}

}  // namespace rt::cli
