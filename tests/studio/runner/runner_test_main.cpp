// Catch2 main for the runner tests: Catch's SIGINT handler must not take the kernel's interrupts, and the
// kernel is shut down cleanly at the end.
#define CATCH_CONFIG_RUNNER
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include "runner_test_kernel.h"

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

namespace rt::studio::test {
namespace {
std::unique_ptr<PythonKernel>& kernel_slot() {
  static std::unique_ptr<PythonKernel> kernel;
  return kernel;
}
}  // namespace

PythonKernel& fresh_test_kernel() {
  auto& kernel = kernel_slot();
  if (!kernel) {
    KernelOptions options;
    options.echo_output = true;  // fd 1/2 are captured: echo, or Catch's own report would vanish
    kernel = std::make_unique<PythonKernel>(options);
  } else {
    kernel->restart();
  }
  REQUIRE(kernel->wait_until_idle(std::chrono::seconds(60)));
  REQUIRE(kernel->startup_error().empty());
  return *kernel;
}

void shut_down_test_kernel() { kernel_slot().reset(); }

RunOptions allowing_errors() {
  RunOptions options;
  options.allow_errors = true;
  return options;
}

Notebook notebook_of(const std::vector<std::string>& code_sources) {
  Notebook nb = Notebook::new_empty();
  nb.cells.push_back(Cell::new_markdown(nb, "# test notebook"));
  for (const auto& source : code_sources) nb.cells.push_back(Cell::new_code(nb, source));
  return nb;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string nbformat_problems(const std::filesystem::path& path) {
  const std::string command = std::string(RT_PYTHON) + " " + RT_SOURCE_DIR +
                              "/tests/studio/notebook/nbformat_check.py " + path.string() + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return "cannot run " + command;
  std::string output;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  return ::pclose(pipe) == 0 ? std::string() : output;
}

}  // namespace rt::studio::test

int main(int argc, char** argv) {
  const int failed = Catch::Session().run(argc, argv);
  rt::studio::test::shut_down_test_kernel();
  return failed;
}
