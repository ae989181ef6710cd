// rt/data/csv.h — numeric CSV files to tensors.
//
//   rt::data::CsvOptions opts;
//   opts.header = true;          // first line: column names
//   opts.label_column = -1;      // the last column holds integer class labels
//   rt::data::CsvTable t = rt::data::read_csv("wine.csv", opts);
//   t.features;                  // float32 [rows, columns - 1]
//   t.labels;                    // int64 [rows]
//   t.column_names;              // the features' names, from the header
//
// Contracts
// - Fields are separated by options.delimiter; lines end in "\n" or "\r\n"; blank lines and a
//   UTF-8 byte order mark are skipped; spaces and tabs around a field are ignored; a header name
//   may be wrapped in double quotes. Quoted fields with embedded delimiters are not supported
//   (this reads numbers).
// - Every field must be a number (from_chars syntax plus an optional leading '+'; "nan" and "inf"
//   are accepted) and every row must have as many fields as the first. Anything else is an
//   rt::ValueError naming the file, the 1-based line and column, and the offending text.
// - label_column (negative counts from the end) is removed from the features. With label_dtype
//   kInt64 its values must be integers; a floating label_dtype keeps them as they are (regression).
// - features has dtype options.dtype (a floating type; DTypeError otherwise) and shape
//   [rows, feature columns]; labels is undefined without a label column. A file with no data rows
//   is a ValueError.
// - gzip-compressed files are decompressed transparently (recognised by their magic bytes).
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt::data {

struct CsvOptions {
  char delimiter = ',';
  bool header = false;
  std::optional<int64_t> label_column;
  ScalarType dtype = kFloat32;
  ScalarType label_dtype = kInt64;
};

struct CsvTable {
  Tensor features;
  Tensor labels;                          // undefined without options.label_column
  std::vector<std::string> column_names;  // features' names (header only)
  std::string label_name;                 // label column's name (header only)
};

CsvTable read_csv(const std::filesystem::path& path, const CsvOptions& options = {});
// Parses CSV text in memory; `source` names it in errors.
CsvTable parse_csv(std::string_view text, const CsvOptions& options = {}, const std::string& source = "<memory>");

}  // namespace rt::data

RT_API_END
