// app/cli/install_layout.h — where rtorch finds its companions, relative to its own executable.
//
//   build/bin/rtorch            this program
//   build/bin/rt_bench          bench_program()
//   build/python/rustytorch/    python_package_dirs() == {"build/python"} (app/common/python_package_dirs.h)
//
// Overrides for other layouts: RT_PYTHONPATH (':'-separated directories that contain `rustytorch`, replacing
// the default) and RT_BENCH_DIR (the directory holding compare.py; default: the source tree's bench/).
#pragma once
#include <filesystem>

#include "python_package_dirs.h"

namespace rt::cli {

using rt::app::executable_dir;
using rt::app::python_package_dirs;
std::filesystem::path bench_program();
std::filesystem::path bench_script_dir();

}  // namespace rt::cli
