// rt/io/safetensors.h — named tensors to and from safetensors files (checkpoints, weights).
//
//   rt::io::TensorMap sd = {{"fc.weight", w}, {"fc.bias", b}, {"step", rt::scalar_tensor(100, rt::kInt64)}};
//   rt::io::save_state_dict("ckpt.safetensors", sd, {{"epoch", "3"}});
//   rt::io::Metadata meta;
//   rt::io::TensorMap back = rt::io::load_state_dict("ckpt.safetensors", &meta);  // meta["epoch"] == "3"
//
//   rt::io::NamedTensorList list = {{"b", b}, {"a", a}};       // keeps your order where it can
//   rt::io::save_safetensors("t.safetensors", list);
//   rt::nn::StateDict msd = model.state_dict();                  // insertion-ordered pairs
//   rt::io::save_safetensors("m.safetensors", {msd.begin(), msd.end()});
//   rt::io::SafetensorsContents c = rt::io::load_safetensors("t.safetensors");  // file order
//   rt::io::SafetensorsHeader h = rt::io::read_safetensors_header("t.safetensors");  // no data read
//
// The format (https://github.com/huggingface/safetensors), byte for byte as its reference writer
// lays it out:
//   [8 bytes]  N, the header length, unsigned 64-bit little-endian
//   [N bytes]  JSON object: {"__metadata__": {"k": "v", ...},          (only when metadata is given)
//                            "name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}, ...}
//              padded with spaces so that N is a multiple of 8
//   [rest]     the byte buffer: every tensor row-major, little-endian; data_offsets are [begin, end)
//              into this buffer, which the tensors cover exactly (no gap, no overlap, nothing after).
// dtypes: F64 F32 F16 BF16 I64 I32 U8 BOOL (kFloat64 ... kBool; BOOL is one byte, 0 or 1). Other
// safetensors dtypes (I8, I16, U16, U32, U64, F8_*) have no rt equivalent and are refused on load.
//
// Contracts
// - Saving accepts any defined CPU tensor: non-contiguous views are written in logical order and the
//   dtype is kept. Tensors are laid out by decreasing element size, ties in the given order (a
//   TensorMap's name order), so that with the 8-byte-aligned header every tensor is aligned to its
//   element size, as the reference writer guarantees (it breaks ties between dtypes of one size
//   and then by name, which no reader depends on). The header lists "__metadata__" first, then the
//   tensors in data order. A duplicate name, the reserved name "__metadata__", an undefined tensor
//   or a name that is not UTF-8 is refused with ValueError. Files are written to
//   "<path>.tmp-<pid>", flushed to disk and renamed over `path`, so an interrupted save never leaves
//   a truncated checkpoint behind.
// - Loading validates the whole header before allocating anything: a file shorter than 8 bytes, a
//   header length past the end of the file or over 100 MB (the reference limit), invalid JSON or a
//   header not starting with '{', a duplicate key, an unknown dtype, a malformed shape or offset,
//   a shape whose byte size does not match its data_offsets, offsets past the buffer, overlapping
//   tensors, gaps, or unused bytes after the last tensor. Each throws rt::ValueError naming the file,
//   the tensor and the problem. Tensor memory is allocated only for byte ranges checked against the
//   actual file size. Keys other than dtype/shape/data_offsets in a tensor entry are ignored, as
//   the reference reader does. BOOL bytes other than 0 are read as true.
// - Loaded tensors are new contiguous CPU tensors that do not require grad; copying them into an
//   existing module's parameters is rt::nn's job.
// - I/O failures (cannot open, read or write, rename fails) throw rt::Error with the OS reason.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt::io {

using TensorMap = std::map<std::string, Tensor>;
using NamedTensorList = std::vector<std::pair<std::string, Tensor>>;
using Metadata = std::map<std::string, std::string>;

// One tensor's entry in a safetensors header.
struct SafetensorsEntry {
  std::string name;
  ScalarType dtype = kFloat32;
  Shape shape;
  uint64_t begin = 0;  // data_offsets, relative to the byte buffer after the header
  uint64_t end = 0;
};

struct SafetensorsHeader {
  std::vector<SafetensorsEntry> tensors;  // by increasing begin offset (file order)
  Metadata metadata;
  uint64_t header_size = 0;  // N: the JSON header length, padding included
  uint64_t data_size = 0;    // bytes in the buffer after the header
};

struct SafetensorsContents {
  NamedTensorList tensors;  // file order
  Metadata metadata;
};

// ---- writing ----------------------------------------------------------------------------
void save_safetensors(const std::filesystem::path& path, const NamedTensorList& tensors,
                      const Metadata& metadata = {});
void save_state_dict(const std::filesystem::path& path, const TensorMap& state, const Metadata& metadata = {});
// The file's bytes, in memory (what save_safetensors writes).
std::string serialize_safetensors(const NamedTensorList& tensors, const Metadata& metadata = {});

// ---- reading ----------------------------------------------------------------------------
SafetensorsContents load_safetensors(const std::filesystem::path& path);
// Name -> tensor; fills *metadata when given.
TensorMap load_state_dict(const std::filesystem::path& path, Metadata* metadata = nullptr);
// Reads and validates only the header (cheap: for listing a checkpoint's contents).
SafetensorsHeader read_safetensors_header(const std::filesystem::path& path);
// Parses bytes in memory; `source` names them in error messages.
SafetensorsContents deserialize_safetensors(std::string_view bytes, const std::string& source = "<memory>");

// "F32", "BF16", ... and back; the latter throws ValueError for names rt has no dtype for.
std::string_view safetensors_dtype_name(ScalarType t);
ScalarType dtype_from_safetensors_name(std::string_view name);

}  // namespace rt::io

RT_API_END
