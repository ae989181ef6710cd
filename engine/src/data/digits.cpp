#include "rt/data/digits.h"

#include <cstdlib>

#include "rt/data/csv.h"

namespace rt::data {

std::filesystem::path find_sample_data(const std::string& name) {
  std::vector<std::filesystem::path> tried;
  if (const char* dir = std::getenv("RT_DATA_DIR"); dir && *dir) tried.push_back(std::filesystem::path(dir) / name);
  std::error_code ec;
  std::filesystem::path at = std::filesystem::current_path(ec);
  for (; !ec && !at.empty(); at = at.parent_path()) {
    tried.push_back(at / "samples" / "data" / name);
    if (at == at.root_path()) break;
  }
  for (const auto& p : tried)
    if (std::filesystem::is_regular_file(p, ec)) return p;
  std::string where;
  for (const auto& p : tried) where += "\n  " + p.string();
  throw Error("find_sample_data: '" + name + "' not found; set RT_DATA_DIR to the folder holding it. Looked at:" + where);
}

Digits load_digits() { return load_digits(find_sample_data("digits.csv.gz")); }

Digits load_digits(const std::filesystem::path& csv_path) {
  CsvOptions opts;
  opts.label_column = -1;
  CsvTable t = read_csv(csv_path, opts);
  const std::string source = "load_digits: '" + csv_path.string() + "': ";
  if (t.features.size(1) != 64)
    throw ValueError(source + "expected 65 columns (64 pixels and a label), got " + std::to_string(t.features.size(1) + 1));
  const float* px = t.features.data_ptr<float>();
  const int64_t* lab = t.labels.data_ptr<int64_t>();
  for (int64_t r = 0; r < t.features.size(0); ++r) {
    for (int64_t c = 0; c < 64; ++c) {
      const float v = px[r * 64 + c];
      if (!(v >= 0 && v <= 16) || v != float(int(v)))
        throw ValueError(source + "line " + std::to_string(r + 1) + ", pixel " + std::to_string(c) + " is " +
                         std::to_string(v) + "; pixels are integer counts 0..16");
    }
    if (lab[r] < 0 || lab[r] > 9)
      throw ValueError(source + "line " + std::to_string(r + 1) + " has label " + std::to_string(lab[r]) +
                       "; labels are digits 0..9");
  }
  return {t.features, t.labels};
}

}  // namespace rt::data
