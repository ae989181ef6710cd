// Where the kernel finds the rustytorch package: the same rule as the rtorch CLI (app/cli/install_layout.cpp).
#include <cstdlib>
#include <sstream>
#include <string>
#include <system_error>

#include "python_kernel.h"

namespace rt::studio {

namespace fs = std::filesystem;

std::vector<fs::path> default_python_paths() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("RT_PYTHONPATH"); env && *env) {
    std::stringstream list(env);
    for (std::string dir; std::getline(list, dir, ':');)
      if (!dir.empty()) dirs.emplace_back(dir);
    return dirs;
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return dirs;
  const fs::path dir = fs::weakly_canonical(exe.parent_path() / ".." / "python", ec);
  if (!ec && fs::is_directory(dir)) dirs.push_back(dir);
  return dirs;
}

}  // namespace rt::studio
