#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "rt/io/safetensors.h"
#include "testing.h"

namespace fs = std::filesystem;
using rt::io::NamedTensorList;

namespace {

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("rt_test_safetensors_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  fs::path operator/(const std::string& name) const { return path / name; }
};

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

std::string read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

std::string u64_le(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[size_t(i)] = char((v >> (8 * i)) & 0xff);
  return s;
}

// A safetensors file from a header text and a data buffer; `n` overrides the length prefix.
std::string raw_file(const std::string& header, size_t data_bytes, std::optional<uint64_t> n = std::nullopt) {
  return u64_le(n.value_or(header.size())) + header + std::string(data_bytes, '\0');
}

std::string bytes_of(const rt::Tensor& t) {
  rt::Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.raw_data()), c.nbytes());
}

void require_identical(const rt::Tensor& actual, const rt::Tensor& expected, const std::string& name) {
  INFO("tensor '" << name << "'");
  REQUIRE(actual.defined());
  CHECK(actual.dtype() == expected.dtype());
  CHECK(actual.sizes() == expected.sizes());
  CHECK(actual.is_contiguous());
  CHECK_FALSE(actual.requires_grad());
  CHECK(bytes_of(actual) == bytes_of(expected));
}

// Every dtype, contiguous or not; values chosen so that bytes compare exactly.
NamedTensorList all_dtypes() {
  using rt::testing::random;
  using rt::testing::random_int;
  return {
      {"f64", random({3, 4}, rt::kFloat64, -2, 2, 1)},
      {"f32.transposed", random({4, 3}, rt::kFloat32, -2, 2, 2).t()},
      {"f16.strided", random({4, 6}, rt::kFloat16, -2, 2, 3).slice(1, 0, 6, 2)},
      {"bf16", random({2, 3, 2}, rt::kBFloat16, -100, 100, 4)},
      {"i64.expanded", random_int({3, 1}, -(int64_t(1) << 40), int64_t(1) << 40, 5).expand({3, 4})},
      {"i32.narrowed", random_int({5, 3}, -1000000, 1000000, 6, rt::kInt32).narrow(0, 2, 3)},
      {"u8", random_int({7}, 0, 256, 7, rt::kUInt8)},
      {"bool.column", random_int({4, 3}, 0, 2, 8, rt::kUInt8).to(rt::kBool).select(1, 1)},
      {"scalar", rt::scalar_tensor(2.5, rt::kFloat32)},
      {"empty", rt::zeros({0, 5}, rt::kFloat64)},
  };
}

void check_error(const std::function<void()>& fn, const std::vector<std::string>& parts) {
  try {
    fn();
    FAIL("no exception; expected one mentioning '" << parts.front() << "'");
  } catch (const rt::ValueError& e) {
    const std::string msg = e.what();
    INFO("message: " << msg);
    for (const auto& p : parts) CHECK(msg.find(p) != std::string::npos);
  }
}

// A corrupt file must fail the same way from disk, from the header-only reader and from memory.
void check_corrupt(const TempDir& dir, const std::string& name, const std::string& bytes,
                   const std::vector<std::string>& parts) {
  INFO("corrupt case '" << name << "'");
  const fs::path p = dir / (name + ".safetensors");
  write_bytes(p, bytes);
  std::vector<std::string> with_file = parts;
  with_file.push_back(p.string());
  check_error([&] { rt::io::load_safetensors(p); }, with_file);
  check_error([&] { rt::io::read_safetensors_header(p); }, with_file);
  check_error([&] { rt::io::deserialize_safetensors(bytes, name); }, parts);
}

std::string format_values(const rt::Tensor& t) {
  std::string out;
  rt::Tensor c = t.contiguous();
  rt::visit_dtype(c.dtype(), [&]<typename T>() {
    const T* p = static_cast<const T*>(c.raw_data());
    char buf[64];
    for (int64_t i = 0; i < c.numel(); ++i) {
      if constexpr (std::is_integral_v<T>) std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(p[i]));
      else std::snprintf(buf, sizeof buf, "%.17g", double(rt::compute_t<T>(p[i])));
      if (i) out += ',';
      out += buf;
    }
  });
  return out;
}

}  // namespace

TEST_CASE("safetensors: round trip of every dtype, contiguous or not, with metadata") {
  TempDir dir;
  const NamedTensorList tensors = all_dtypes();
  const rt::io::Metadata meta = {{"format", "pt"}, {"epoch", "3"}, {"note", "ünïcödé \"quoted\""}};
  const fs::path p = dir / "all.safetensors";
  rt::io::save_safetensors(p, tensors, meta);
  CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);  // no temp file left

  rt::io::SafetensorsContents back = rt::io::load_safetensors(p);
  CHECK(back.metadata == meta);
  REQUIRE(back.tensors.size() == tensors.size());
  for (const auto& [name, t] : tensors) {
    auto it = std::find_if(back.tensors.begin(), back.tensors.end(), [&](const auto& kv) { return kv.first == name; });
    REQUIRE(it != back.tensors.end());
    require_identical(it->second, t, name);
  }
  // File order: decreasing element size, ties in the given order; every tensor aligned to its size.
  std::vector<std::string> order;
  for (const auto& kv : back.tensors) order.push_back(kv.first);
  CHECK(order == std::vector<std::string>{"f64", "i64.expanded", "empty", "f32.transposed", "i32.narrowed",
                                          "scalar", "f16.strided", "bf16", "u8", "bool.column"});
  const rt::io::SafetensorsHeader h = rt::io::read_safetensors_header(p);
  CHECK(h.header_size % 8 == 0);
  CHECK(h.metadata == meta);
  for (const auto& e : h.tensors) CHECK(e.begin % rt::element_size(e.dtype) == 0);
  CHECK(8 + h.header_size + h.data_size == fs::file_size(p));

  // The in-memory form is the same bytes.
  const std::string bytes = rt::io::serialize_safetensors(tensors, meta);
  CHECK(bytes == read_bytes(p));
  const auto mem = rt::io::deserialize_safetensors(bytes);
  REQUIRE(mem.tensors.size() == tensors.size());
  for (size_t i = 0; i < mem.tensors.size(); ++i)
    require_identical(mem.tensors[i].second, back.tensors[i].second, mem.tensors[i].first);
}

TEST_CASE("safetensors: header is compact JSON padded with spaces to 8 bytes, metadata first") {
  const std::string bytes = rt::io::serialize_safetensors({{"a", rt::tensor({1.f, 2.f, 3.f})}}, {{"k", "v"}});
  const uint64_t n = uint8_t(bytes[0]) | uint64_t(uint8_t(bytes[1])) << 8;
  CHECK(n % 8 == 0);
  const std::string json = R"({"__metadata__":{"k":"v"},"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}})";
  REQUIRE(n >= json.size());
  CHECK(bytes.substr(8, json.size()) == json);
  CHECK(bytes.substr(8 + json.size(), n - json.size()) == std::string(n - json.size(), ' '));
  CHECK(bytes.size() == 8 + n + 12);

  // No metadata: no "__metadata__" key at all, as the reference writer does.
  const std::string plain = rt::io::serialize_safetensors({{"a", rt::tensor({1.f})}});
  CHECK(plain.find("__metadata__") == std::string::npos);
}

TEST_CASE("safetensors: state dict round trip keeps names and dtypes") {
  TempDir dir;
  rt::io::TensorMap sd;
  sd["fc.weight"] = rt::testing::random({4, 3}, rt::kFloat32, -1, 1, 11).requires_grad_();
  sd["fc.bias"] = rt::testing::random({4}, rt::kBFloat16, -1, 1, 12);
  sd["bn.num_batches_tracked"] = rt::scalar_tensor(int64_t(17), rt::kInt64);
  sd["mask"] = rt::testing::random_int({2, 2}, 0, 2, 13, rt::kUInt8).to(rt::kBool);
  rt::io::save_state_dict(dir / "sd.safetensors", sd, {{"step", "100"}});

  rt::io::Metadata meta;
  const rt::io::TensorMap back = rt::io::load_state_dict(dir / "sd.safetensors", &meta);
  CHECK(meta == rt::io::Metadata{{"step", "100"}});
  REQUIRE(back.size() == sd.size());
  for (const auto& [name, t] : sd) {
    REQUIRE(back.count(name) == 1);
    require_identical(back.at(name), t, name);
  }
  CHECK(rt::io::load_state_dict(dir / "sd.safetensors").size() == sd.size());  // metadata pointer is optional
}

TEST_CASE("safetensors: saving overwrites atomically and refuses bad input") {
  TempDir dir;
  const fs::path p = dir / "x.safetensors";
  rt::io::save_safetensors(p, {{"a", rt::zeros({100})}});
  rt::io::save_safetensors(p, {{"b", rt::ones({2})}});
  const auto back = rt::io::load_safetensors(p);
  REQUIRE(back.tensors.size() == 1);
  CHECK(back.tensors[0].first == "b");

  check_error([&] { rt::io::save_safetensors(p, {{"w", rt::zeros({1})}, {"w", rt::ones({1})}}); },
              {"duplicate tensor name 'w'", p.string()});
  check_error([&] { rt::io::save_safetensors(p, {{"__metadata__", rt::zeros({1})}}); }, {"reserved"});
  check_error([&] { rt::io::save_safetensors(p, {{"u", rt::Tensor()}}); }, {"tensor 'u' is undefined"});
  check_error([&] { rt::io::serialize_safetensors({{std::string("bad\xff"), rt::zeros({1})}}); }, {"UTF-8"});
  CHECK(rt::io::load_safetensors(p).tensors[0].first == "b");  // failed saves left the file alone

  try {
    rt::io::save_safetensors(dir / "no_such_dir" / "x.safetensors", {{"a", rt::zeros({1})}});
    FAIL("saving into a missing directory must throw");
  } catch (const rt::Error& e) {
    CHECK(std::string(e.what()).find("cannot create") != std::string::npos);
  }
  try {
    rt::io::load_safetensors(dir / "missing.safetensors");
    FAIL("loading a missing file must throw");
  } catch (const rt::Error& e) {
    CHECK(std::string(e.what()).find("missing.safetensors") != std::string::npos);
  }
}

TEST_CASE("safetensors: every kind of corrupt file is a clear ValueError") {
  TempDir dir;
  const std::string f32_6 = R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})";
  check_corrupt(dir, "empty", "", {"0 bytes, shorter than the 8-byte header length"});
  check_corrupt(dir, "short", "abcde", {"5 bytes, shorter than the 8-byte header length"});
  check_corrupt(dir, "length_past_end", raw_file(f32_6, 24, 1000), {"header length 1000 runs past the end"});
  check_corrupt(dir, "length_huge", raw_file(f32_6, 24, 200'000'000), {"exceeds the 100000000-byte limit"});
  check_corrupt(dir, "length_max", raw_file(f32_6, 24, ~uint64_t(0)), {"exceeds the 100000000-byte limit"});
  check_corrupt(dir, "not_object", raw_file("[1, 2]  ", 0), {"does not start with '{'"});
  check_corrupt(dir, "zero_header", raw_file("", 0), {"does not start with '{'"});
  check_corrupt(dir, "invalid_json", raw_file(R"({"w":{"dtype":"F32",)", 24), {"not valid JSON"});
  check_corrupt(dir, "trailing_garbage", raw_file(f32_6 + "xx", 24), {"not valid JSON"});
  check_corrupt(dir, "bad_utf8", raw_file("{\"w\xff\":{}}", 0), {"not valid JSON"});
  check_corrupt(dir, "unknown_dtype", raw_file(R"({"w":{"dtype":"Q7","shape":[2],"data_offsets":[0,2]}})", 2),
                {"tensor 'w'", "unsupported dtype 'Q7'"});
  check_corrupt(dir, "unsupported_dtype", raw_file(R"({"w":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}})", 4),
                {"tensor 'w'", "unsupported dtype 'I16'"});
  check_corrupt(dir, "dtype_not_string", raw_file(R"({"w":{"dtype":7,"shape":[2],"data_offsets":[0,8]}})", 8),
                {"tensor 'w'", "\"dtype\" must be a string"});
  check_corrupt(dir, "size_mismatch", raw_file(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}})", 20),
                {"tensor 'w'", "shape [2, 3] of F32 needs 24 bytes but data_offsets [0, 20) span 20"});
  check_corrupt(dir, "past_buffer", raw_file(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[8,32]}})", 24),
                {"tensor 'w'", "run past the end of the 24-byte data buffer"});
  check_corrupt(dir, "reversed", raw_file(R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", 8),
                {"tensor 'w'", "end before they begin"});
  check_corrupt(dir, "overlap",
                raw_file(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                         R"("b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})", 24),
                {"tensor 'b' at byte 8 overlaps tensor 'a'"});
  check_corrupt(dir, "gap",
                raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                         R"("b":{"dtype":"F32","shape":[2],"data_offsets":[16,24]}})", 24),
                {"bytes [8, 16)", "gap before tensor 'b'"});
  check_corrupt(dir, "hole_at_start", raw_file(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})", 4),
                {"bytes [0, 2)", "gap before tensor 'a'"});
  check_corrupt(dir, "trailing_bytes", raw_file(f32_6, 32), {"8 bytes after the last tensor belong to no tensor"});
  check_corrupt(dir, "duplicate_name",
                raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                         R"("a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", 16),
                {"duplicate tensor name 'a'"});
  check_corrupt(dir, "duplicate_field",
                raw_file(R"({"a":{"dtype":"F32","dtype":"F64","shape":[2],"data_offsets":[0,8]}})", 8),
                {"duplicate key 'dtype'"});
  check_corrupt(dir, "negative_dim", raw_file(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4),
                {"tensor 'a'", "non-negative integer, got -1"});
  check_corrupt(dir, "float_dim", raw_file(R"({"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", 4),
                {"tensor 'a'", "non-negative integer, got 1.5"});
  check_corrupt(dir, "overflow",
                raw_file(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})", 4),
                {"tensor 'a'", "more elements than fit in 64 bits"});
  check_corrupt(dir, "bytes_overflow",
                raw_file(R"({"a":{"dtype":"F64","shape":[4611686018427387904],"data_offsets":[0,4]}})", 4),
                {"tensor 'a'", "too large to store"});
  check_corrupt(dir, "missing_offsets", raw_file(R"({"a":{"dtype":"F32","shape":[1]}})", 4),
                {"tensor 'a'", "no \"data_offsets\""});
  check_corrupt(dir, "offsets_arity",
                raw_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}})", 4),
                {"tensor 'a'", "must be an array [begin, end]"});
  check_corrupt(dir, "entry_not_object", raw_file(R"({"a":5})", 0), {"tensor 'a'", "must be a JSON object"});
  check_corrupt(dir, "metadata_not_string", raw_file(R"({"__metadata__":{"k":1}})", 0),
                {"__metadata__ value for 'k' must be a string"});
  check_corrupt(dir, "metadata_not_object", raw_file(R"({"__metadata__":[]})", 0), {"\"__metadata__\" must be an object"});
  check_corrupt(dir, "deep", raw_file(R"({"a":{"shape":[[[[[1]]]]]}})", 0), {"nests deeper"});

  std::string deep(5000, '[');  // no stack overflow on hostile nesting
  check_corrupt(dir, "deeper", raw_file("{\"a\":" + deep, 0), {"nests deeper"});
}

TEST_CASE("safetensors: accepts what the format allows") {
  // Unknown fields are ignored like the reference reader does; no tensors at all is a valid file;
  // BOOL bytes other than 0 read as true.
  auto c = rt::io::deserialize_safetensors(
      raw_file(R"({"m":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3],"extra":{"x":1}}})", 0) + std::string("\x00\x02\x01", 3));
  REQUIRE(c.tensors.size() == 1);
  CHECK(c.tensors[0].second.to_vector<bool>() == std::vector<bool>{false, true, true});
  CHECK(rt::io::deserialize_safetensors(raw_file("{}      ", 0)).tensors.empty());
  CHECK(rt::io::deserialize_safetensors(rt::io::serialize_safetensors({})).tensors.empty());
}

TEST_CASE("safetensors: reads a file written by an independent Python writer") {
  // tests/engine/fixtures/python_written.safetensors comes from make_safetensors_fixture.py.
  const fs::path p = fs::path(RT_SOURCE_DIR) / "tests/engine/fixtures/python_written.safetensors";
  const auto c = rt::io::load_safetensors(p);
  CHECK(c.metadata == rt::io::Metadata{{"format", "pt"}, {"producer", "make_safetensors_fixture.py"}});
  rt::io::TensorMap sd(c.tensors.begin(), c.tensors.end());
  REQUIRE(sd.size() == 10);
  auto expect = [&](const std::string& name, const rt::Tensor& want) { require_identical(sd.at(name), want, name); };
  expect("f64", rt::from_vector<double>({-0.5, -0.25, 0, 0.25, 0.5, 0.75}, {2, 3}));
  expect("f32", rt::from_vector<float>({-3.75f, -2.25f, -0.75f, 0.75f, 2.25f, 3.75f}, {3, 2}));
  expect("f16", rt::from_vector<float>({0.5f, -1.f, 65504.f, 5.9604644775390625e-08f}).to(rt::kFloat16));
  expect("bf16", rt::from_vector<float>({1.f, -2.5f, 3.140625f, 1.2676506002282294e+30f}, {2, 2}).to(rt::kBFloat16));
  expect("i64", rt::from_vector<int64_t>({-(int64_t(1) << 40), 0, (int64_t(1) << 62) + 5}));
  expect("i32", rt::from_vector<int32_t>({-7, 2147483647, -2147483647 - 1, 42}, {2, 2}));
  expect("u8", rt::from_vector<uint8_t>({0, 1, 127, 128, 255}));
  expect("bool", rt::from_vector<bool>({true, false, true}));
  expect("scalar", rt::scalar_tensor(7.5, rt::kFloat32));
  expect("empty", rt::zeros({0, 3}));
}

TEST_CASE("safetensors: files we write are read by an independent Python reader") {
  const fs::path python = "/usr/bin/python3";
  if (!fs::exists(python)) {
    WARN("skipped: /usr/bin/python3 is missing, so the Python-side read-back cannot run");
    return;
  }
  TempDir dir;
  const fs::path p = dir / "for_python.safetensors";
  const NamedTensorList tensors = all_dtypes();
  rt::io::save_safetensors(p, tensors, {{"format", "pt"}, {"epoch", "3"}});

  std::string expected = "meta epoch=3\nmeta format=pt\n";
  for (const auto& e : rt::io::read_safetensors_header(p).tensors) {
    const rt::Tensor& t = std::find_if(tensors.begin(), tensors.end(), [&](const auto& kv) { return kv.first == e.name; })->second;
    std::string shape;
    for (int64_t d : t.sizes()) {
      if (!shape.empty()) shape += ',';
      shape += std::to_string(d);
    }
    expected += e.name + " " + std::string(rt::io::safetensors_dtype_name(t.dtype())) + " [" + shape + "] " +
                format_values(t) + "\n";
  }
  const std::string cmd = python.string() + " " + RT_SOURCE_DIR + "/tests/engine/fixtures/safetensors_dump.py '" +
                          p.string() + "' 2>&1";
  std::FILE* pipe = ::popen(cmd.c_str(), "r");
  REQUIRE(pipe);
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  const int status = ::pclose(pipe);
  INFO("python output:\n" << out);
  REQUIRE(status == 0);
  CHECK(out == expected);
}

TEST_CASE("safetensors: random corruption is a ValueError or a valid load, never a crash") {
  const std::string base = rt::io::serialize_safetensors(all_dtypes(), {{"k", "v"}});
  std::mt19937_64 gen(2024);
  int loaded = 0, rejected = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string bytes = base;
    if (iter % 4 == 0) {
      bytes.resize(size_t(gen() % bytes.size()));
    } else {
      const int flips = 1 + int(gen() % 4);
      // Mostly the header, where the structure lives.
      const size_t span = iter % 2 ? 8 + size_t(base[0] & 0xff) + (size_t(base[1] & 0xff) << 8) : bytes.size();
      for (int f = 0; f < flips; ++f) bytes[size_t(gen() % span)] = char(gen());
    }
    try {
      rt::io::deserialize_safetensors(bytes, "fuzz");
      ++loaded;
    } catch (const rt::ValueError&) {
      ++rejected;
    }
  }
  CHECK(rejected > 1000);
  CHECK(loaded > 0);  // flips inside tensor data are still valid files
}
