// app/common/python_package_dirs.h — where an app embedding CPython (rtorch, rtorch-studio) finds the
// rustytorch package, relative to its own executable.
//
//   build/bin/rtorch, build/bin/rtorch-studio   the programs
//   build/python/rustytorch/                     python_package_dirs() == {"build/python"}
//
// RT_PYTHONPATH (':'-separated directories that contain `rustytorch`) replaces the default, for other layouts.
#pragma once
#include <filesystem>
#include <vector>

namespace rt::app {

// The directory of the running executable (/proc/self/exe); the working directory if that cannot be read.
std::filesystem::path executable_dir();

// RT_PYTHONPATH's entries, or <executable dir>/../python when that directory exists, or nothing.
std::vector<std::filesystem::path> python_package_dirs();

}  // namespace rt::app
