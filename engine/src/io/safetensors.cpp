// safetensors files and buffers: writing, and reading once io/safetensors_header.cpp has
// validated the header. See the contracts in rt/io/safetensors.h.
#include "rt/io/safetensors.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "io/safetensors_header.h"
#include "rt/ops/view.h"

namespace rt::io {
namespace {

using ordered_json = nlohmann::ordered_json;
using detail::fail;
using detail::quoted;

[[noreturn]] void fail_os(const std::string& source, const std::string& what) {
  throw Error("safetensors: " + quoted(source) + ": " + what + ": " + std::strerror(errno));
}

// Tensor bytes are little-endian in the file; swaps in place on big-endian hosts.
void to_or_from_little_endian(void* data, size_t nbytes, size_t elem) {
  if constexpr (std::endian::native == std::endian::big) {
    auto* p = static_cast<unsigned char*>(data);
    for (size_t i = 0; i + elem <= nbytes; i += elem) std::reverse(p + i, p + i + elem);
  }
}

std::string u64_le(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[size_t(i)] = char((v >> (8 * i)) & 0xff);
  return s;
}

void read_exact(std::FILE* f, void* dst, size_t n, const std::string& source, const std::string& what) {
  if (std::fread(dst, 1, n, f) == n) return;
  if (std::ferror(f)) fail_os(source, "cannot read " + what);
  throw Error("safetensors: " + quoted(source) + ": the file ended while reading " + what + " (was it modified while loading?)");
}

void finish_loaded(Tensor& t) {
  to_or_from_little_endian(t.raw_data(), t.nbytes(), t.element_size());
  if (t.dtype() == kBool) {
    auto* p = static_cast<unsigned char*>(t.raw_data());
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = p[i] != 0;
  }
}

// ---- writing -----------------------------------------------------------------------------

struct PlannedTensor {
  const std::string* name;
  Tensor data;  // contiguous
};

struct Plan {
  std::string header;  // the 8-byte length and the padded JSON
  std::vector<PlannedTensor> tensors;
  uint64_t data_size = 0;
};

Plan plan(const NamedTensorList& tensors, const Metadata& metadata, const std::string& target) {
  std::set<std::string_view> names;
  Plan p;
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__") fail(target, "\"__metadata__\" is reserved and cannot name a tensor");
    if (!names.insert(name).second) fail(target, "duplicate tensor name " + quoted(name));
    if (!t.defined()) fail(target, "tensor " + quoted(name) + " is undefined");
    if (!t.device().is_cpu())
      throw DeviceError("safetensors: " + quoted(target) + ": tensor " + quoted(name) + " is on " + t.device().str() +
                        "; move it to the CPU first (t.to(rt::Device::cpu()))");
    p.tensors.push_back({&name, rt::contiguous(detach(t))});
  }
  std::stable_sort(p.tensors.begin(), p.tensors.end(), [](const auto& a, const auto& b) {
    return a.data.element_size() > b.data.element_size();
  });
  ordered_json h = ordered_json::object();
  if (!metadata.empty()) h["__metadata__"] = metadata;
  for (const auto& pt : p.tensors) {
    const uint64_t begin = p.data_size;
    p.data_size += pt.data.nbytes();
    h[*pt.name] = {{"dtype", std::string(safetensors_dtype_name(pt.data.dtype()))},
                   {"shape", pt.data.sizes()},
                   {"data_offsets", {begin, p.data_size}}};
  }
  std::string json;
  try {
    json = h.dump();
  } catch (const ordered_json::exception& e) {
    fail(target, std::string("a tensor name or metadata string is not valid UTF-8: ") + e.what());
  }
  json.append((8 - json.size() % 8) % 8, ' ');
  p.header = u64_le(json.size()) + json;
  return p;
}

void append_le(std::string& out, const Tensor& t) {
  const size_t at = out.size();
  out.append(static_cast<const char*>(t.raw_data()), t.nbytes());
  to_or_from_little_endian(out.data() + at, t.nbytes(), t.element_size());
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

void write_file(const std::filesystem::path& path, const NamedTensorList& tensors, const Metadata& metadata) {
  const std::string source = path.string();
  Plan p = plan(tensors, metadata, source);
  const std::filesystem::path tmp = source + ".tmp-" + std::to_string(::getpid());
  {
    File f(std::fopen(tmp.c_str(), "wb"));
    if (!f) fail_os(source, "cannot create " + quoted(tmp.string()));
    bool ok = std::fwrite(p.header.data(), 1, p.header.size(), f.get()) == p.header.size();
    std::string swapped;
    for (const auto& pt : p.tensors) {
      if (!ok) break;
      const char* bytes = static_cast<const char*>(pt.data.raw_data());
      if constexpr (std::endian::native == std::endian::big) {
        swapped.clear();
        append_le(swapped, pt.data);
        bytes = swapped.data();
      }
      ok = std::fwrite(bytes, 1, pt.data.nbytes(), f.get()) == pt.data.nbytes();
    }
    ok = ok && std::fflush(f.get()) == 0 && ::fsync(::fileno(f.get())) == 0;
    if (!ok) {
      const int err = errno;
      f.reset();
      std::filesystem::remove(tmp);
      errno = err;
      fail_os(source, "writing " + quoted(tmp.string()) + " failed");
    }
    if (std::fclose(f.release()) != 0) {
      std::filesystem::remove(tmp);
      fail_os(source, "closing " + quoted(tmp.string()) + " failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    throw Error("safetensors: " + quoted(source) + ": cannot rename " + quoted(tmp.string()) + " over it: " + ec.message());
  }
}

// Opens `path` and checks its prefix; returns the file, its parsed header and N.
struct OpenedFile {
  File file;
  SafetensorsHeader header;
};

OpenedFile open_and_parse(const std::filesystem::path& path) {
  const std::string source = path.string();
  std::error_code ec;
  const uint64_t total = std::filesystem::file_size(path, ec);
  if (ec) throw Error("safetensors: " + quoted(source) + ": cannot open: " + ec.message());
  if (total < 8)
    fail(source, "file is " + std::to_string(total) + " bytes, shorter than the 8-byte header length (not a safetensors file?)");
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) fail_os(source, "cannot open");
  char prefix[8];
  read_exact(f.get(), prefix, 8, source, "the header length");
  const uint64_t n = detail::header_length(prefix, total, source);
  std::string text(n, '\0');
  read_exact(f.get(), text.data(), n, source, "the " + std::to_string(n) + "-byte header");
  return {std::move(f), detail::parse_header(text, total - 8 - n, source)};
}

}  // namespace

std::string serialize_safetensors(const NamedTensorList& tensors, const Metadata& metadata) {
  Plan p = plan(tensors, metadata, "<memory>");
  std::string out = std::move(p.header);
  out.reserve(out.size() + p.data_size);
  for (const auto& pt : p.tensors) append_le(out, pt.data);
  return out;
}

void save_safetensors(const std::filesystem::path& path, const NamedTensorList& tensors, const Metadata& metadata) {
  write_file(path, tensors, metadata);
}

void save_state_dict(const std::filesystem::path& path, const TensorMap& state, const Metadata& metadata) {
  write_file(path, NamedTensorList(state.begin(), state.end()), metadata);
}

SafetensorsHeader read_safetensors_header(const std::filesystem::path& path) {
  return open_and_parse(path).header;
}

SafetensorsContents load_safetensors(const std::filesystem::path& path) {
  const std::string source = path.string();
  OpenedFile of = open_and_parse(path);
  const uint64_t data_start = 8 + of.header.header_size;
  SafetensorsContents c;
  c.metadata = std::move(of.header.metadata);
  for (const auto& e : of.header.tensors) {
    Tensor t = make_tensor(e.shape, e.dtype);
    const size_t n = size_t(e.end - e.begin);
    if (n > 0) {
      if (::fseeko(of.file.get(), off_t(data_start + e.begin), SEEK_SET) != 0)
        fail_os(source, "cannot seek to the data of tensor " + quoted(e.name));
      read_exact(of.file.get(), t.raw_data(), n, source, "the data of tensor " + quoted(e.name));
    }
    finish_loaded(t);
    c.tensors.emplace_back(e.name, std::move(t));
  }
  return c;
}

TensorMap load_state_dict(const std::filesystem::path& path, Metadata* metadata) {
  SafetensorsContents c = load_safetensors(path);
  if (metadata) *metadata = std::move(c.metadata);
  return TensorMap(std::make_move_iterator(c.tensors.begin()), std::make_move_iterator(c.tensors.end()));
}

SafetensorsContents deserialize_safetensors(std::string_view bytes, const std::string& source) {
  if (bytes.size() < 8)
    fail(source, std::to_string(bytes.size()) + " bytes, shorter than the 8-byte header length (not safetensors data?)");
  const uint64_t n = detail::header_length(bytes.data(), bytes.size(), source);
  SafetensorsHeader h = detail::parse_header(bytes.substr(8, n), bytes.size() - 8 - n, source);
  const char* data = bytes.data() + 8 + n;
  SafetensorsContents c;
  c.metadata = std::move(h.metadata);
  for (const auto& e : h.tensors) {
    Tensor t = make_tensor(e.shape, e.dtype);
    if (e.end > e.begin) std::memcpy(t.raw_data(), data + e.begin, size_t(e.end - e.begin));
    finish_loaded(t);
    c.tensors.emplace_back(e.name, std::move(t));
  }
  return c;
}

}  // namespace rt::io
