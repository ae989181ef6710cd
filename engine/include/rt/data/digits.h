// rt/data/digits.h — the 8x8 handwritten digits set (UCI, as shipped with scikit-learn).
//
//   rt::data::Digits d = rt::data::load_digits();   // finds samples/data/digits.csv.gz
//   d.images;                                        // float32 [1797, 64], values 0..16
//   d.labels;                                        // int64 [1797], values 0..9
//   auto x = d.images / 16.0;                        // scaled to [0, 1]
//   auto img = d.images.view({-1, 1, 8, 8});         // for a conv net
//   auto ds = std::make_shared<rt::data::TensorDataset>(x, d.labels);
//
// Data: samples/data/digits.csv.gz, 1797 rows of 64 pixel counts (row-major 8x8) and a label;
// origin and license in samples/data/README.md. Same rows and order as sklearn's load_digits().
//
// Contracts
// - The file is read with rt::data::read_csv (gzip decompressed with zlib) and checked: 65 columns,
//   pixels integers in 0..16, labels integers in 0..9; anything else is an rt::ValueError naming
//   the file and the line.
// - load_digits() without a path looks the file up with find_sample_data("digits.csv.gz").
// - find_sample_data(name) returns the first existing file among $RT_DATA_DIR/name, then
//   samples/data/name under the current directory and each of its parents; throws rt::Error
//   listing the places it looked when none exists.
#pragma once
#include <filesystem>
#include <string>

#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt::data {

struct Digits {
  Tensor images;  // float32 [N, 64]
  Tensor labels;  // int64 [N]
};

Digits load_digits();
Digits load_digits(const std::filesystem::path& csv_path);

std::filesystem::path find_sample_data(const std::string& name);

}  // namespace rt::data

RT_API_END
