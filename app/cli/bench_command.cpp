// `rtorch bench [--quick] [--filter WORKLOAD...]`: runs bench/compare.py (rt_bench next to rtorch against
// bench/torch_bench.py) in the embedded interpreter and prints its ratio table.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cstdio>
#include <filesystem>

#include "command.h"
#include "embedded_python.h"
#include "install_layout.h"

namespace rt::cli {
namespace {

namespace fs = std::filesystem;

class BenchCommand final : public Command {
 public:
  std::string name() const override { return "bench"; }
  std::string summary() const override {
    return "Run the benchmark suite and print times and ratios against PyTorch (when installed)";
  }

  void configure(CLI::App& app) override {
    app.add_option("--filter", filter_, "Only these workloads (names as in bench/compare.py --help)")
        ->type_name("WORKLOAD...")
        ->expected(1, -1);
    app.add_flag("--quick", quick_, "Only the short micro-benchmarks (a few seconds)");
    app.add_option("--rt-bench", rt_bench_, "The rt_bench program to run (default: rt_bench next to rtorch)");
    app.footer(
        "Threads: the global --threads N (rtorch --threads 2 bench) is used by both sides; "
        "default: all cores.\nOverride the location of compare.py with RT_BENCH_DIR.");
  }

  int execute(const GlobalOptions& global) override {
    const fs::path program = rt_bench_.empty() ? bench_program() : fs::path(rt_bench_);
    if (!fs::is_regular_file(program)) {
      fmt::print(stderr, "rtorch bench: {} not found; build it (ninja -C <build dir> rt_bench) or pass --rt-bench PATH\n",
                 program.string());
      return 1;
    }
    const fs::path compare = bench_script_dir() / "compare.py";
    if (!fs::is_regular_file(compare)) {
      fmt::print(stderr, "rtorch bench: {} not found; set RT_BENCH_DIR to the directory holding compare.py\n",
                 compare.string());
      return 1;
    }
    std::vector<std::string> args = {"--rt-bench", program.string()};
    if (global.threads > 0) args.insert(args.end(), {"--threads", std::to_string(global.threads)});
    if (quick_) args.push_back("--quick");
    if (!filter_.empty()) {
      args.push_back("--only");
      args.insert(args.end(), filter_.begin(), filter_.end());
    }
    std::fflush(stdout);
    return run_python_main({PythonTarget::Kind::script, compare.string(), args});
  }

 private:
  std::vector<std::string> filter_;
  bool quick_ = false;
  std::string rt_bench_;
};

}  // namespace

std::unique_ptr<Command> make_bench_command() { return std::make_unique<BenchCommand>(); }

}  // namespace rt::cli
