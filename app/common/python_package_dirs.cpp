#include "python_package_dirs.h"

#include <cstdlib>
#include <sstream>
#include <string>
#include <system_error>

namespace rt::app {

namespace fs = std::filesystem;

fs::path executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : exe.parent_path();
}

std::vector<fs::path> python_package_dirs() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("RT_PYTHONPATH"); env && *env) {
    std::stringstream list(env);
    for (std::string dir; std::getline(list, dir, ':');)
      if (!dir.empty()) dirs.emplace_back(dir);
    return dirs;
  }
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(executable_dir() / ".." / "python", ec);
  if (!ec && fs::is_directory(dir)) dirs.push_back(dir);
  return dirs;
}

}  // namespace rt::app
