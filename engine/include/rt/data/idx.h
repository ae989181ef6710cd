// rt/data/idx.h — the IDX files MNIST and Fashion-MNIST come in.
//
//   rt::Tensor images = rt::data::read_idx("train-images-idx3-ubyte.gz");  // uint8 [60000, 28, 28]
//   rt::Tensor labels = rt::data::read_idx("train-labels-idx1-ubyte");     // uint8 [60000]
//   rt::Tensor x = images.to(rt::kFloat32).flatten(1) / 255.0;             // float32 [60000, 784]
//   rt::data::write_idx("small-idx3-ubyte", images.narrow(0, 0, 100));
//
// Format (http://yann.lecun.com/exdb/mnist/): bytes 0-1 are zero, byte 2 the element type, byte 3
// the number of dimensions D; then D sizes, each an unsigned 32-bit big-endian integer; then the
// elements, row-major, big-endian.
//   type 0x08 unsigned byte -> kUInt8      0x0C int32   -> kInt32
//        0x09 signed byte   -> kInt32      0x0D float32 -> kFloat32
//        0x0B int16         -> kInt32      0x0E float64 -> kFloat64
// (rt has no int8/int16, so those are widened to int32, values unchanged.)
//
// Contracts
// - gzip-compressed files are recognised by their magic bytes and decompressed in memory.
// - Reading checks everything against the (decompressed) size before allocating: fewer than 4
//   bytes, nonzero first bytes, an unknown type code, sizes that do not fit in the file, an
//   element count that overflows, a data section shorter or longer than the sizes say. Each is an
//   rt::ValueError naming the file and the problem. D = 0 is a single element.
// - write_idx writes kUInt8, kInt32, kFloat32 and kFloat64 tensors of any layout (DTypeError for
//   other dtypes, ValueError for a size over 2^32 - 1 or more than 255 dimensions).
// - Open/read/write failures throw rt::Error with the OS reason.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt::data {

Tensor read_idx(const std::filesystem::path& path);
// Parses IDX bytes in memory (not gzip); `source` names them in errors.
Tensor parse_idx(std::string_view bytes, const std::string& source = "<memory>");
void write_idx(const std::filesystem::path& path, const Tensor& t);

}  // namespace rt::data

RT_API_END
