// A per-process scratch folder for store files, removed when the test binary exits (forked
// children leave with _exit, so only the parent removes it).
//
//   static rt::prof::testing::TempStoreDir scratch("rt_store_test_");
//   fs::path db = scratch.fresh("a.sqlite");   // no stale db, -wal or -shm left from earlier
#pragma once
#include <unistd.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace rt::prof::testing {

class TempStoreDir {
 public:
  explicit TempStoreDir(std::string_view prefix)
      : dir_(std::filesystem::temp_directory_path() / (std::string(prefix) + std::to_string(::getpid()))) {}
  ~TempStoreDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  TempStoreDir(const TempStoreDir&) = delete;
  TempStoreDir& operator=(const TempStoreDir&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  // dir()/name with any earlier database of that name (and its -wal/-shm files) removed.
  std::filesystem::path fresh(std::string_view name) const {
    std::filesystem::create_directories(dir_);
    const std::filesystem::path p = dir_ / name;
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove_all(p.string() + suffix);
    return p;
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace rt::prof::testing
