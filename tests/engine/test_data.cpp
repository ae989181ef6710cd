#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "rt/data/csv.h"
#include "rt/data/dataloader.h"
#include "rt/data/dataset.h"
#include "rt/data/digits.h"
#include "rt/data/idx.h"
#include "testing.h"

namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("rt_test_data_" + std::to_string(::getpid()));
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

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(char(x));
  return s;
}

const fs::path kDigits = fs::path(RT_SOURCE_DIR) / "samples/data/digits.csv.gz";

template <typename E>
void check_throws(const std::function<void()>& fn, const std::vector<std::string>& parts) {
  try {
    fn();
    FAIL("no exception; expected one mentioning '" << parts.front() << "'");
  } catch (const E& e) {
    const std::string msg = e.what();
    INFO("message: " << msg);
    for (const auto& p : parts) CHECK(msg.find(p) != std::string::npos);
  }
}

void require_equal(const rt::Tensor& a, const rt::Tensor& b) {
  REQUIRE(a.defined());
  CHECK(a.dtype() == b.dtype());
  CHECK(a.sizes() == b.sizes());
  CHECK(rt::testing::values(a) == rt::testing::values(b));
}

// Row i of the loader tests' data is [3i, 3i+1, 3i+2]; its target is i.
std::shared_ptr<rt::data::TensorDataset> rows_dataset(int64_t n) {
  return std::make_shared<rt::data::TensorDataset>(rt::arange(n * 3, rt::kFloat32).view({n, 3}), rt::arange(n));
}

std::vector<int64_t> targets_of(rt::data::DataLoader& loader) {
  std::vector<int64_t> out;
  for (const auto& batch : loader) {
    const auto t = batch.target.to_vector<int64_t>();
    const auto d = batch.data.to_vector<float>();
    REQUIRE(d.size() == t.size() * 3);
    for (size_t i = 0; i < t.size(); ++i) CHECK(d[i * 3] == float(3 * t[i]));  // data and target stay paired
    out.insert(out.end(), t.begin(), t.end());
  }
  return out;
}

// A dataset with no get_batch override: exercises get() + collate().
struct Squares : rt::data::Dataset {
  int64_t size() const override { return 7; }
  rt::data::Example get(int64_t i) const override {
    return {rt::full({2}, double(i), rt::kFloat64), rt::scalar_tensor(i * i, rt::kInt64)};
  }
};

}  // namespace

TEST_CASE("idx: a hand-written big-endian file reads as its bytes say") {
  // uint8 [2, 3]
  rt::Tensor u8 = rt::data::parse_idx(bytes({0, 0, 0x08, 2, 0, 0, 0, 2, 0, 0, 0, 3, 1, 2, 3, 250, 254, 255}));
  require_equal(u8, rt::from_vector<uint8_t>({1, 2, 3, 250, 254, 255}, {2, 3}));
  // int8 and int16 widen to int32 with their signs
  require_equal(rt::data::parse_idx(bytes({0, 0, 0x09, 1, 0, 0, 0, 3, 0x7f, 0x80, 0xff})),
                rt::from_vector<int32_t>({127, -128, -1}));
  require_equal(rt::data::parse_idx(bytes({0, 0, 0x0B, 1, 0, 0, 0, 2, 0x12, 0x34, 0xff, 0xfe})),
                rt::from_vector<int32_t>({0x1234, -2}));
  require_equal(rt::data::parse_idx(bytes({0, 0, 0x0C, 1, 0, 0, 0, 1, 0x80, 0, 0, 0})),
                rt::from_vector<int32_t>({INT32_MIN}));
  require_equal(rt::data::parse_idx(bytes({0, 0, 0x0D, 1, 0, 0, 0, 2, 0x3f, 0xc0, 0, 0, 0xc1, 0x20, 0, 0})),
                rt::from_vector<float>({1.5f, -10.f}));
  require_equal(rt::data::parse_idx(bytes({0, 0, 0x0E, 0, 0x40, 0x09, 0x21, 0xfb, 0x54, 0x44, 0x2d, 0x18})),
                rt::scalar_tensor(3.141592653589793, rt::kFloat64));
}

TEST_CASE("idx: write_idx round trip for every IDX dtype, including non-contiguous input") {
  TempDir dir;
  const std::vector<rt::Tensor> cases = {
      rt::testing::random_int({3, 4, 5}, 0, 256, 1, rt::kUInt8),
      rt::testing::random_int({4, 3}, INT32_MIN, INT32_MAX, 2, rt::kInt32).t(),
      rt::testing::random({6}, rt::kFloat32, -1e6, 1e6, 3).slice(0, 0, 6, 2),
      rt::testing::random({2, 2}, rt::kFloat64, -1, 1, 4),
      rt::zeros({0, 28, 28}, rt::kUInt8),
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    INFO("case " << i);
    const fs::path p = dir / (std::to_string(i) + "-idx");
    rt::data::write_idx(p, cases[i]);
    CHECK(fs::file_size(p) == 4 + 4 * size_t(cases[i].dim()) + cases[i].nbytes());
    require_equal(rt::data::read_idx(p), cases[i]);
  }
  // Big-endian on disk: the int32 1 is 00 00 00 01.
  rt::data::write_idx(dir / "one", rt::from_vector<int32_t>({1}));
  CHECK(read_bytes(dir / "one") == bytes({0, 0, 0x0C, 1, 0, 0, 0, 1, 0, 0, 0, 1}));
  check_throws<rt::DTypeError>([&] { rt::data::write_idx(dir / "x", rt::zeros({2}, rt::kInt64)); }, {"int64"});

  if (std::system(("gzip -c '" + (dir / "0-idx").string() + "' > '" + (dir / "0-idx.gz").string() + "'").c_str()) == 0) {
    require_equal(rt::data::read_idx(dir / "0-idx.gz"), cases[0]);
  } else {
    WARN("skipped the gzip IDX check: the gzip command is not available");
  }
}

TEST_CASE("idx: truncated or corrupt files are clear ValueErrors") {
  TempDir dir;
  const std::string good = bytes({0, 0, 0x08, 2, 0, 0, 0, 2, 0, 0, 0, 3, 1, 2, 3, 4, 5, 6});
  auto check = [&](const std::string& name, const std::string& content, const std::vector<std::string>& parts) {
    INFO("case '" << name << "'");
    const fs::path p = dir / name;
    write_bytes(p, content);
    std::vector<std::string> all = parts;
    all.push_back(p.string());
    check_throws<rt::ValueError>([&] { rt::data::read_idx(p); }, all);
  };
  check("empty", "", {"0 bytes, shorter than the 4-byte IDX magic"});
  check("short", good.substr(0, 3), {"3 bytes"});
  check("magic", bytes({1, 0, 0x08, 1, 0, 0, 0, 0}), {"bad magic number"});
  check("type", bytes({0, 0, 0x0A, 1, 0, 0, 0, 0}), {"unknown element type code 0x0A"});
  check("dims_past_end", bytes({0, 0, 0x08, 3, 0, 0, 0, 2}), {"declares 3 dimensions", "need 16 bytes", "has 8"});
  check("truncated_data", good.substr(0, good.size() - 2), {"sizes [2, 3] of unsigned byte need 6 data bytes", "has 4",
                                                            "truncated"});
  check("trailing", good + "xy", {"need 6 data bytes but the file has 8", "trailing"});
  check("overflow", bytes({0, 0, 0x0E, 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}),
        {"overflow"});
  check("float_truncated", bytes({0, 0, 0x0D, 1, 0, 0, 0, 2, 0x3f, 0xc0, 0, 0}), {"need 8 data bytes", "has 4"});
  check_throws<rt::Error>([&] { rt::data::read_idx(dir / "missing"); }, {"cannot open", "missing"});
}

TEST_CASE("csv: numbers, header, label column, whitespace and line endings") {
  const std::string text =
      "\xEF\xBB\xBF" "a, \"b\" ,label,c\r\n"
      "1, 2.5, 0, -3\r\n"
      "\n"
      "+4,1e3,2,nan\n"
      "  7 ,\t8 , 1 , .5";
  rt::data::CsvOptions opts;
  opts.header = true;
  opts.label_column = 2;
  const rt::data::CsvTable t = rt::data::parse_csv(text, opts);
  CHECK(t.column_names == std::vector<std::string>{"a", "b", "c"});
  CHECK(t.label_name == "label");
  REQUIRE(t.features.sizes() == rt::Shape{3, 3});
  CHECK(t.features.dtype() == rt::kFloat32);
  const auto f = t.features.to_vector<float>();
  CHECK(f[0] == 1.f);
  CHECK(f[1] == 2.5f);
  CHECK(f[2] == -3.f);
  CHECK(f[3] == 4.f);
  CHECK(f[4] == 1000.f);
  CHECK(std::isnan(f[5]));
  CHECK(f[8] == 0.5f);
  require_equal(t.labels, rt::from_vector<int64_t>({0, 2, 1}));

  // No header, no labels, float64, another delimiter, negative label index.
  rt::data::CsvOptions semi;
  semi.delimiter = ';';
  semi.dtype = rt::kFloat64;
  const auto plain = rt::data::parse_csv("1;2\n3;4\n", semi);
  require_equal(plain.features, rt::from_vector<double>({1, 2, 3, 4}, {2, 2}));
  CHECK_FALSE(plain.labels.defined());
  semi.label_column = -1;
  semi.label_dtype = rt::kFloat32;
  const auto reg = rt::data::parse_csv("1;2.5\n3;4.25\n", semi);
  require_equal(reg.labels, rt::from_vector<float>({2.5f, 4.25f}));
}

TEST_CASE("csv: errors name the file, line, column and text") {
  rt::data::CsvOptions labelled;
  labelled.label_column = -1;
  check_throws<rt::ValueError>([] { rt::data::parse_csv("1,2,3\n4,5\n", {}, "f.csv"); },
                               {"'f.csv', line 2", "has 2 fields but line 1 has 3"});
  check_throws<rt::ValueError>([] { rt::data::parse_csv("1,2\n\n3,x7\n", {}, "f.csv"); },
                               {"line 3", "column 2", "'x7' is not a number"});
  check_throws<rt::ValueError>([] { rt::data::parse_csv("1,,2\n", {}, "f.csv"); }, {"column 2", "'' is not a number"});
  check_throws<rt::ValueError>([] { rt::data::parse_csv("1,2\n+-3,4\n", {}, "f.csv"); }, {"'+-3' is not a number"});
  check_throws<rt::ValueError>([] { rt::data::parse_csv("1,1e999\n", {}, "f.csv"); }, {"out of range"});
  check_throws<rt::ValueError>([&] { rt::data::parse_csv("1,2.5\n", labelled, "f.csv"); },
                               {"label '2.5' is not an integer"});
  check_throws<rt::ValueError>([] { rt::data::parse_csv("\n \n", {}, "f.csv"); }, {"'f.csv'", "no data rows"});
  rt::data::CsvOptions header_only;
  header_only.header = true;
  check_throws<rt::ValueError>([&] { rt::data::parse_csv("a,b\n", header_only, "f.csv"); }, {"no data rows"});
  rt::data::CsvOptions bad_col;
  bad_col.label_column = 5;
  check_throws<rt::ValueError>([&] { rt::data::parse_csv("1,2\n", bad_col, "f.csv"); },
                               {"label_column 5 is out of range for 2 columns"});
  rt::data::CsvOptions int_features;
  int_features.dtype = rt::kInt64;
  check_throws<rt::DTypeError>([&] { rt::data::parse_csv("1\n", int_features); }, {"must be floating"});
}

TEST_CASE("csv: files, plain and gzip, and damaged gzip") {
  TempDir dir;
  write_bytes(dir / "t.csv", "1,2,0\n3,4,1\n");
  rt::data::CsvOptions opts;
  opts.label_column = -1;
  const auto t = rt::data::read_csv(dir / "t.csv", opts);
  require_equal(t.features, rt::from_vector<float>({1, 2, 3, 4}, {2, 2}));

  const std::string gz = read_bytes(kDigits);
  write_bytes(dir / "cut.csv.gz", gz.substr(0, gz.size() / 2));
  check_throws<rt::ValueError>([&] { rt::data::read_csv(dir / "cut.csv.gz"); }, {"cut.csv.gz", "truncated"});
  std::string flipped = gz;
  for (size_t i = 100; i < 200; ++i) flipped[i] = char(~flipped[i]);
  write_bytes(dir / "bad.csv.gz", flipped);
  check_throws<rt::ValueError>([&] { rt::data::read_csv(dir / "bad.csv.gz"); }, {"bad.csv.gz", "corrupt gzip data"});
  write_bytes(dir / "tail.csv.gz", gz + "junk");
  check_throws<rt::ValueError>([&] { rt::data::read_csv(dir / "tail.csv.gz"); }, {"4 bytes of garbage after the gzip"});
  write_bytes(dir / "twice.csv.gz", gz + gz);  // concatenated gzip members are one stream
  CHECK(rt::data::read_csv(dir / "twice.csv.gz", opts).features.size(0) == 2 * 1797);
}

TEST_CASE("digits: 1797 images of 64 pixels with sklearn's label counts") {
  const rt::data::Digits d = rt::data::load_digits(kDigits);
  REQUIRE(d.images.sizes() == rt::Shape{1797, 64});
  REQUIRE(d.labels.sizes() == rt::Shape{1797});
  CHECK(d.images.dtype() == rt::kFloat32);
  CHECK(d.labels.dtype() == rt::kInt64);
  std::vector<int64_t> counts(10, 0);
  for (int64_t l : d.labels.to_vector<int64_t>()) counts.at(size_t(l))++;
  CHECK(counts == std::vector<int64_t>{178, 182, 177, 183, 181, 182, 181, 179, 174, 180});
  const auto px = d.images.to_vector<float>();
  CHECK(*std::min_element(px.begin(), px.end()) == 0.f);
  CHECK(*std::max_element(px.begin(), px.end()) == 16.f);
  // sklearn's first image (a zero).
  const std::vector<float> first = {0, 0, 5, 13, 9, 1, 0, 0, 0, 0, 13, 15, 10, 15, 5, 0, 0, 3, 15, 2, 0, 11,
                                    8, 0, 0, 4, 12, 0, 0, 8, 8, 0, 0, 5, 8, 0, 0, 9, 8, 0, 0, 4, 11, 0,
                                    1, 12, 7, 0, 0, 2, 14, 5, 10, 12, 0, 0, 0, 0, 6, 13, 10, 0, 0, 0};
  CHECK(std::vector<float>(px.begin(), px.begin() + 64) == first);
  CHECK(d.labels.to_vector<int64_t>()[0] == 0);

  // Found without a path through RT_DATA_DIR.
  ::setenv("RT_DATA_DIR", kDigits.parent_path().c_str(), 1);
  CHECK(rt::data::load_digits().images.size(0) == 1797);
  ::setenv("RT_DATA_DIR", "/nonexistent-rt-data", 1);
  TempDir dir;
  const fs::path cwd = fs::current_path();
  fs::current_path(dir.path);
  check_throws<rt::Error>([] { rt::data::find_sample_data("no-such-file.csv"); },
                          {"'no-such-file.csv' not found", "/nonexistent-rt-data/no-such-file.csv", "RT_DATA_DIR"});
  fs::current_path(cwd);
  ::unsetenv("RT_DATA_DIR");

  write_bytes(dir / "bad.csv", "0,17,3\n");
  check_throws<rt::ValueError>([&] { rt::data::load_digits(dir / "bad.csv"); }, {"expected 65 columns"});
  std::string row(64 * 2, ',');
  for (size_t i = 0; i < row.size(); i += 2) row[i] = '1';
  write_bytes(dir / "bad_label.csv", row + "12\n");
  check_throws<rt::ValueError>([&] { rt::data::load_digits(dir / "bad_label.csv"); }, {"line 1 has label 12"});
  write_bytes(dir / "bad_pixel.csv", "17" + row.substr(1) + "3\n");
  check_throws<rt::ValueError>([&] { rt::data::load_digits(dir / "bad_pixel.csv"); }, {"line 1, pixel 0 is 17"});
}

TEST_CASE("TensorDataset and collate") {
  auto ds = rows_dataset(5);
  CHECK(ds->size() == 5);
  const auto e = ds->get(2);
  require_equal(e.data, rt::from_vector<float>({6, 7, 8}));
  CHECK(e.target.item<int64_t>() == 2);
  const std::vector<int64_t> idx = {4, 0, 4};
  const auto b = ds->get_batch(idx);
  require_equal(b.data, rt::from_vector<float>({12, 13, 14, 0, 1, 2, 12, 13, 14}, {3, 3}));
  require_equal(b.target, rt::from_vector<int64_t>({4, 0, 4}));
  // The fast path and the generic get() + collate() path agree.
  const auto slow = ds->Dataset::get_batch(idx);
  require_equal(slow.data, b.data);
  require_equal(slow.target, b.target);

  check_throws<rt::IndexError>([&] { ds->get(5); }, {"index 5 is out of range for a dataset of 5 examples"});
  check_throws<rt::IndexError>([&] { ds->get_batch(std::vector<int64_t>{0, -1}); }, {"index -1"});
  check_throws<rt::ShapeError>([] { (void)rt::data::TensorDataset(rt::zeros({4, 2}), rt::zeros({3})); },
                               {"[4, 2]", "[3]", "dimension 0"});
  check_throws<rt::ShapeError>([] { (void)rt::data::TensorDataset(rt::scalar_tensor(1.0)); }, {"at least 1 dimension"});

  // Non-contiguous data and no targets.
  rt::data::TensorDataset unlabelled(rt::arange(6, rt::kFloat64).view({2, 3}).t());
  const auto ub = unlabelled.get_batch(std::vector<int64_t>{2, 0});
  require_equal(ub.data, rt::from_vector<double>({2, 5, 0, 3}, {2, 2}));
  CHECK_FALSE(ub.target.defined());

  using rt::data::Example;
  check_throws<rt::ShapeError>([] { rt::data::collate({{rt::zeros({3}), {}}, {rt::zeros({4}), {}}}); },
                               {"example 1", "[4]", "[3]"});
  check_throws<rt::DTypeError>([] { rt::data::collate({{rt::zeros({3}), {}}, {rt::zeros({3}, rt::kFloat64), {}}}); },
                               {"example 1", "float64", "float32"});
  check_throws<rt::ValueError>([] { rt::data::collate({{rt::zeros({3}), rt::zeros({})}, {rt::zeros({3}), {}}}); },
                               {"example 1 has no target"});
  check_throws<rt::ValueError>([] { rt::data::collate({}); }, {"zero examples"});
}

TEST_CASE("DataLoader: batching and drop_last") {
  auto ds = rows_dataset(10);
  rt::data::DataLoader loader(ds, {.batch_size = 4});
  CHECK(loader.size() == 3);
  std::vector<int64_t> sizes;
  for (const auto& batch : loader) {
    sizes.push_back(batch.data.size(0));
    CHECK(batch.data.size(1) == 3);
    CHECK(batch.target.size(0) == batch.data.size(0));
  }
  CHECK(sizes == std::vector<int64_t>{4, 4, 2});
  CHECK(targets_of(loader) == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});

  rt::data::DataLoader dropping(ds, {.batch_size = 4, .drop_last = true});
  CHECK(dropping.size() == 2);
  CHECK(targets_of(dropping) == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
  rt::data::DataLoader exact(ds, {.batch_size = 5, .drop_last = true});
  CHECK(exact.size() == 2);
  rt::data::DataLoader big(ds, {.batch_size = 64, .drop_last = true});
  CHECK(big.size() == 0);
  CHECK(big.begin() == big.end());

  // Iterator details: dereferencing twice reuses the batch; std algorithms work.
  auto it = loader.begin();
  CHECK(&*it == &*it);
  CHECK(it->data.size(0) == 4);
  CHECK(std::distance(loader.begin(), loader.end()) == 3);

  // The generic Dataset path.
  rt::data::DataLoader squares(std::make_shared<Squares>(), {.batch_size = 3});
  std::vector<int64_t> sq;
  for (const auto& batch : squares) {
    CHECK(batch.data.dtype() == rt::kFloat64);
    for (int64_t v : batch.target.to_vector<int64_t>()) sq.push_back(v);
  }
  CHECK(sq == std::vector<int64_t>{0, 1, 4, 9, 16, 25, 36});

  check_throws<rt::ValueError>([&] { (void)rt::data::DataLoader(ds, {.batch_size = 0}); }, {"batch_size must be at least 1"});
}

TEST_CASE("DataLoader: shuffling is a reproducible permutation per epoch") {
  auto ds = rows_dataset(10);
  rt::data::DataLoader a(ds, {.batch_size = 3, .shuffle = true, .seed = 42});
  rt::data::DataLoader b(ds, {.batch_size = 3, .shuffle = true, .seed = 42});
  const auto a0 = targets_of(a), a1 = targets_of(a);
  CHECK(a.epoch() == 2);
  CHECK(targets_of(b) == a0);
  CHECK(targets_of(b) == a1);
  CHECK(a0 != a1);
  for (const auto& order : {a0, a1}) {
    CHECK(std::set<int64_t>(order.begin(), order.end()).size() == 10);
    CHECK(order.size() == 10);
  }
  CHECK(a0 != std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  // The order is pinned: it must not change between versions, platforms or standard libraries.
  CHECK(a.epoch_indices(0) == a0);
  CHECK(a.epoch_indices(0) == std::vector<int64_t>{9, 6, 2, 0, 1, 4, 3, 8, 5, 7});

  a.set_epoch(1);
  CHECK(targets_of(a) == a1);
  rt::data::DataLoader other(ds, {.batch_size = 3, .shuffle = true, .seed = 43});
  CHECK(targets_of(other) != a0);

  // drop_last drops the tail of the shuffled order.
  rt::data::DataLoader dropping(ds, {.batch_size = 3, .shuffle = true, .seed = 42, .drop_last = true});
  CHECK(targets_of(dropping) == std::vector<int64_t>(a0.begin(), a0.begin() + 9));

  // Without a seed, rt::manual_seed decides.
  rt::manual_seed(7);
  rt::data::DataLoader s1(ds, {.batch_size = 4, .shuffle = true});
  rt::manual_seed(7);
  rt::data::DataLoader s2(ds, {.batch_size = 4, .shuffle = true});
  CHECK(s1.seed() == s2.seed());
  CHECK(targets_of(s1) == targets_of(s2));
  rt::data::DataLoader s3(ds, {.batch_size = 4, .shuffle = true});
  CHECK(s3.seed() != s1.seed());
}
