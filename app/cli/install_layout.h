// app/cli/install_layout.h — where rtorch finds its companions, relative to its own executable.
//
//   build/bin/rtorch            this program
//   build/bin/rt_bench          bench_program()
//   build/python/rustytorch/    python_package_dirs() == {"build/python"}
//
// Overrides for other layouts: RT_PYTHONPATH (':'-separated directories that contain `rustytorch`, replacing
// the default) and RT_BENCH_DIR (the directory holding compare.py; default: the source tree's bench/).
#pragma once
#include <filesystem>
#include <vector>

namespace rt::cli {

std::filesystem::path executable_dir();
std::vector<std::filesystem::path> python_package_dirs();
std::filesystem::path bench_program();
std::filesystem::path bench_script_dir();

}  // namespace rt::cli
