// tests/studio/notebook/notebook_test_support.h — scratch folders, file I/O and python3 calls for the
// rt_notebook tests.
#pragma once
#include <filesystem>
#include <string>

namespace rt::studio::test {

// A fresh folder under the system temp dir, removed with everything in it when the object goes away.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix = "rt-notebook-test");
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

std::string read_bytes(const std::filesystem::path& path);
void write_bytes(const std::filesystem::path& path, const std::string& bytes);

// Runs `RT_PYTHON args...` (the /usr/bin/python3 the build uses), returns its exit code; stdout+stderr go into
// `output`.
int run_python(const std::string& args, std::string& output);

// tests/studio/notebook/ in the source tree (the helper scripts), and samples/notebooks/.
std::filesystem::path test_source_dir();
std::filesystem::path samples_dir();

}  // namespace rt::studio::test
