#include "data/file_contents.h"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <memory>

#include "rt/error.h"

namespace rt::data::detail {
namespace {

// No deflate stream expands by more than 1032:1; larger output means a corrupt or hostile file.
constexpr uint64_t kMaxRatio = 1032;

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && uint8_t(bytes[0]) == 0x1f && uint8_t(bytes[1]) == 0x8b;
}

std::string prefix(const char* who, const std::string& source) { return std::string(who) + ": '" + source + "': "; }

}  // namespace

std::string gunzip(std::string_view compressed, const std::string& source, const char* who) {
  const uint64_t limit = std::max<uint64_t>(compressed.size(), 1) * kMaxRatio;
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) throw Error(prefix(who, source) + "zlib cannot initialise");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&zs, inflateEnd);
  const auto* data = reinterpret_cast<const Bytef*>(compressed.data());
  size_t fed = 0;  // bytes handed to zlib so far (avail_in is 32-bit)
  zs.next_in = const_cast<Bytef*>(data);
  std::string out;
  char chunk[1 << 16];
  for (;;) {
    if (zs.avail_in == 0 && fed < compressed.size()) {
      const size_t n = std::min<size_t>(compressed.size() - fed, size_t(1) << 30);
      zs.next_in = const_cast<Bytef*>(data + fed);
      zs.avail_in = uInt(n);
      fed += n;
    }
    zs.next_out = reinterpret_cast<Bytef*>(chunk);
    zs.avail_out = sizeof chunk;
    const int rc = inflate(&zs, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - zs.avail_out);
    if (out.size() > limit)
      throw ValueError(prefix(who, source) + "gzip data expands past " + std::to_string(limit) +
                       " bytes, more than deflate allows (corrupt file?)");
    const std::string_view rest = compressed.substr(size_t(zs.next_in - data));
    if (rc == Z_STREAM_END) {
      if (rest.empty()) return out;
      if (!is_gzip(rest))
        throw ValueError(prefix(who, source) + std::to_string(rest.size()) + " bytes of garbage after the gzip data");
      inflateReset(&zs);  // another gzip member follows
      continue;
    }
    if (rc == Z_BUF_ERROR && rest.empty())
      throw ValueError(prefix(who, source) + "gzip data is truncated (file cut short?)");
    if (rc != Z_OK && rc != Z_BUF_ERROR)
      throw ValueError(prefix(who, source) + "corrupt gzip data: " + (zs.msg ? zs.msg : zError(rc)));
  }
}

std::string read_file_contents(const std::filesystem::path& path, const char* who) {
  const std::string source = path.string();
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) throw Error(prefix(who, source) + "cannot open: " + ec.message());
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) throw Error(prefix(who, source) + "cannot open: " + std::strerror(errno));
  std::string bytes(size, '\0');
  if (std::fread(bytes.data(), 1, size, f.get()) != size)
    throw Error(prefix(who, source) + "cannot read " + std::to_string(size) + " bytes" +
                (std::ferror(f.get()) ? std::string(": ") + std::strerror(errno) : " (file shrank while reading?)"));
  return is_gzip(bytes) ? gunzip(bytes, source, who) : bytes;
}

}  // namespace rt::data::detail
