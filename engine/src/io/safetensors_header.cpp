// safetensors header validation; follows the reference implementation's rules.
#include "io/safetensors_header.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <vector>

namespace rt::io {
namespace {

using ordered_json = nlohmann::ordered_json;
using detail::fail;
using detail::quoted;
constexpr uint64_t kMaxHeaderSize = 100'000'000;

struct DTypeName {
  ScalarType dtype;
  std::string_view name;
};
constexpr DTypeName kDTypeNames[] = {{kFloat64, "F64"}, {kFloat32, "F32"}, {kFloat16, "F16"},
                                     {kBFloat16, "BF16"}, {kInt64, "I64"}, {kInt32, "I32"},
                                     {kUInt8, "U8"},      {kBool, "BOOL"}};

uint64_t read_u64_le(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | uint64_t(static_cast<unsigned char>(p[i]));
  return v;
}

// Rejects duplicate keys (nlohmann would keep the last) and nesting no valid header has.
ordered_json parse_json(std::string_view text, const std::string& source) {
  std::vector<std::set<std::string>> keys;
  auto callback = [&](int depth, ordered_json::parse_event_t ev, ordered_json& parsed) {
    using E = ordered_json::parse_event_t;
    if ((ev == E::object_start || ev == E::array_start) && depth >= 3)
      fail(source, "header JSON nests deeper than a safetensors header can (depth " + std::to_string(depth + 1) + ")");
    if (ev == E::object_start) keys.emplace_back();
    if (ev == E::object_end) keys.pop_back();
    if (ev == E::key && !keys.empty()) {
      const std::string& k = parsed.get_ref<const std::string&>();
      if (!keys.back().insert(k).second)
        fail(source, depth == 1 ? "duplicate tensor name " + quoted(k) : "duplicate key " + quoted(k) + " in a header entry");
    }
    return true;
  };
  try {
    return ordered_json::parse(text.begin(), text.end(), callback);
  } catch (const ordered_json::exception& e) {
    fail(source, std::string("header is not valid JSON: ") + e.what());
  }
}

uint64_t as_u64(const ordered_json& v, const std::string& source, const std::string& what) {
  if (!v.is_number_unsigned()) fail(source, what + " must be a non-negative integer, got " + v.dump());
  return v.get<uint64_t>();
}

SafetensorsEntry parse_entry(const std::string& name, const ordered_json& v, uint64_t data_size,
                             const std::string& source) {
  const std::string where = "tensor " + quoted(name);
  if (!v.is_object()) fail(source, where + ": entry must be a JSON object, got " + v.dump());
  auto field = [&](const char* key) -> const ordered_json& {
    auto it = v.find(key);
    if (it == v.end()) fail(source, where + ": entry has no \"" + key + "\"");
    return *it;
  };
  SafetensorsEntry e;
  e.name = name;
  const ordered_json& dt = field("dtype");
  if (!dt.is_string()) fail(source, where + ": \"dtype\" must be a string, got " + dt.dump());
  try {
    e.dtype = dtype_from_safetensors_name(dt.get_ref<const std::string&>());
  } catch (const ValueError& err) {
    fail(source, where + ": " + err.what());
  }

  const ordered_json& shape = field("shape");
  if (!shape.is_array()) fail(source, where + ": \"shape\" must be an array, got " + shape.dump());
  uint64_t numel = 1;
  for (const auto& d : shape) {
    const uint64_t n = as_u64(d, source, where + ": every \"shape\" entry");
    if (n > uint64_t(INT64_MAX) || __builtin_mul_overflow(numel, n, &numel))
      fail(source, where + ": shape " + shape.dump() + " has more elements than fit in 64 bits");
    e.shape.push_back(int64_t(n));
  }
  uint64_t nbytes = 0;
  if (__builtin_mul_overflow(numel, uint64_t(element_size(e.dtype)), &nbytes))
    fail(source, where + ": shape " + shape.dump() + " is too large to store");

  const ordered_json& off = field("data_offsets");
  if (!off.is_array() || off.size() != 2)
    fail(source, where + ": \"data_offsets\" must be an array [begin, end], got " + off.dump());
  e.begin = as_u64(off[0], source, where + ": data_offsets begin");
  e.end = as_u64(off[1], source, where + ": data_offsets end");
  const std::string range = "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) + ")";
  if (e.begin > e.end) fail(source, where + ": " + range + " end before they begin");
  if (e.end > data_size)
    fail(source, where + ": " + range + " run past the end of the " + std::to_string(data_size) +
                     "-byte data buffer (truncated file?)");
  if (e.end - e.begin != nbytes)
    fail(source, where + ": shape " + format_shape(e.shape) + " of " + std::string(dt.get<std::string>()) + " needs " +
                     std::to_string(nbytes) + " bytes but " + range + " span " + std::to_string(e.end - e.begin));
  return e;
}

// Every byte of the buffer belongs to exactly one tensor (zero-size tensors take no bytes).
void check_coverage(std::vector<SafetensorsEntry>& entries, uint64_t data_size, const std::string& source) {
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return std::tie(a.begin, a.end) < std::tie(b.begin, b.end); });
  uint64_t covered = 0;
  const SafetensorsEntry* prev = nullptr;
  for (const auto& e : entries) {
    if (e.begin < covered)
      fail(source, "tensor " + quoted(e.name) + " at byte " + std::to_string(e.begin) + " overlaps tensor " +
                       quoted(prev->name) + " which ends at byte " + std::to_string(covered));
    if (e.begin > covered)
      fail(source, "bytes [" + std::to_string(covered) + ", " + std::to_string(e.begin) +
                       ") of the data buffer belong to no tensor (gap before tensor " + quoted(e.name) + ")");
    covered = e.end;
    prev = &e;
  }
  if (covered != data_size)
    fail(source, std::to_string(data_size - covered) + " bytes after the last tensor belong to no tensor (" +
                     std::to_string(data_size) + "-byte data buffer, tensors end at byte " + std::to_string(covered) + ")");
}

}  // namespace

namespace detail {

std::string quoted(const std::string& s) { return "'" + s + "'"; }

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw ValueError("safetensors: " + quoted(source) + ": " + what);
}

uint64_t header_length(const char* prefix, uint64_t total, const std::string& source) {
  const uint64_t n = read_u64_le(prefix);
  if (n > kMaxHeaderSize)
    fail(source, "header length " + std::to_string(n) + " exceeds the 100000000-byte limit (corrupt or not a safetensors file)");
  if (n > total - 8)
    fail(source, "header length " + std::to_string(n) + " runs past the end of the " + std::to_string(total) +
                     "-byte file (truncated file?)");
  return n;
}

SafetensorsHeader parse_header(std::string_view text, uint64_t data_size, const std::string& source) {
  if (text.empty() || text.front() != '{')
    fail(source, "header does not start with '{' (not a safetensors file?)");
  const ordered_json j = parse_json(text, source);
  if (!j.is_object()) fail(source, "header must be a JSON object");
  SafetensorsHeader h;
  h.header_size = text.size();
  h.data_size = data_size;
  for (const auto& [key, value] : j.items()) {
    if (key != "__metadata__") {
      h.tensors.push_back(parse_entry(key, value, data_size, source));
      continue;
    }
    if (!value.is_object()) fail(source, "\"__metadata__\" must be an object of strings, got " + value.dump());
    for (const auto& [mk, mv] : value.items()) {
      if (!mv.is_string()) fail(source, "__metadata__ value for " + quoted(mk) + " must be a string, got " + mv.dump());
      h.metadata.emplace(mk, mv.get<std::string>());
    }
  }
  check_coverage(h.tensors, data_size, source);
  return h;
}

}  // namespace detail

std::string_view safetensors_dtype_name(ScalarType t) {
  for (const auto& d : kDTypeNames)
    if (d.dtype == t) return d.name;
  throw DTypeError("safetensors: dtype " + std::string(dtype_name(t)) + " has no safetensors name");
}

ScalarType dtype_from_safetensors_name(std::string_view name) {
  for (const auto& d : kDTypeNames)
    if (d.name == name) return d.dtype;
  throw ValueError("unsupported dtype '" + std::string(name) + "' (rt reads F64, F32, F16, BF16, I64, I32, U8, BOOL)");
}

}  // namespace rt::io
