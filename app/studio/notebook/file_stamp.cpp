#include "notebook/file_stamp.h"

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <sys/stat.h>

namespace rt::studio {

std::uint64_t fnv1a_64(std::string_view bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

FileStamp FileStamp::of(const std::filesystem::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return missing();
  std::ifstream in(path, std::ios::binary);
  if (!in) return missing();
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return missing();
  FileStamp stamp;
  stamp.exists = true;
  stamp.size = bytes.size();
  stamp.mtime_ns = static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec;
  stamp.content_hash = fnv1a_64(bytes);
  return stamp;
}

FileStamp FileStamp::of_bytes(std::string_view bytes) {
  FileStamp stamp;
  stamp.exists = true;
  stamp.size = bytes.size();
  stamp.mtime_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  stamp.content_hash = fnv1a_64(bytes);
  return stamp;
}

nlohmann::json FileStamp::to_json() const {
  if (!exists) return {{"exists", false}};
  // The hash is written as hex text: JSON readers elsewhere often hold numbers as doubles.
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(content_hash));
  return {{"exists", true}, {"size", size}, {"mtime_ns", mtime_ns}, {"fnv1a64", hash}};
}

FileStamp FileStamp::from_json(const nlohmann::json& value) {
  try {
    FileStamp stamp;
    stamp.exists = value.at("exists").get<bool>();
    if (!stamp.exists) return stamp;
    stamp.size = value.at("size").get<std::uint64_t>();
    stamp.mtime_ns = value.at("mtime_ns").get<std::int64_t>();
    const std::string hash = value.at("fnv1a64").get<std::string>();
    std::size_t used = 0;
    stamp.content_hash = std::stoull(hash, &used, 16);
    if (used != hash.size() || hash.size() != 16) throw std::invalid_argument("bad hash");
    return stamp;
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("invalid file stamp ") + value.dump() + ": " + e.what());
  }
}

}  // namespace rt::studio
