// app/studio/notebook/file_stamp.h — "is this still the file I read?": size, modification time and a content
// hash of a file at one moment.
//
//   rt::studio::FileStamp seen = rt::studio::FileStamp::of("train.ipynb");
//   ...                                        // someone else may rewrite the file meanwhile
//   if (rt::studio::FileStamp::of("train.ipynb") != seen) ask_reload_or_overwrite();
//
// Contracts:
// - of() never throws: a missing or unreadable file gives FileStamp::missing() (exists == false).
// - Two stamps are equal when both are missing, or both exist with the same size and content hash (a touch that
//   only changes the mtime is not a change). content_hash is 64-bit FNV-1a of the bytes.
// - to_json/from_json keep stamps in recovery files; from_json throws std::invalid_argument on a bad value.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string_view>

namespace rt::studio {

struct FileStamp {
  bool exists = false;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;  // since the Unix epoch
  std::uint64_t content_hash = 0;

  static FileStamp missing() { return {}; }
  static FileStamp of(const std::filesystem::path& path);
  // The stamp a file holding exactly `bytes` would have (mtime_ns = now); used right after writing it.
  static FileStamp of_bytes(std::string_view bytes);

  friend bool operator==(const FileStamp& a, const FileStamp& b) {
    if (!a.exists || !b.exists) return a.exists == b.exists;
    return a.size == b.size && a.content_hash == b.content_hash;
  }

  nlohmann::json to_json() const;
  static FileStamp from_json(const nlohmann::json& value);
};

// 64-bit FNV-1a of `bytes`.
std::uint64_t fnv1a_64(std::string_view bytes);

}  // namespace rt::studio
