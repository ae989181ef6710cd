#include "rt/data/idx.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "data/file_contents.h"
#include "rt/ops/view.h"

namespace rt::data {
namespace {

struct IdxType {
  uint8_t code;
  size_t file_bytes;
  ScalarType dtype;
  const char* name;
};
constexpr IdxType kTypes[] = {{0x08, 1, kUInt8, "unsigned byte"}, {0x09, 1, kInt32, "signed byte"},
                              {0x0B, 2, kInt32, "int16"},         {0x0C, 4, kInt32, "int32"},
                              {0x0D, 4, kFloat32, "float32"},     {0x0E, 8, kFloat64, "float64"}};

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw ValueError("read_idx: '" + source + "': " + what);
}

uint64_t read_be(const unsigned char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

void write_be(unsigned char* p, uint64_t v, size_t n) {
  for (size_t i = n; i-- > 0; v >>= 8) p[i] = static_cast<unsigned char>(v & 0xff);
}

template <typename Dst>
void decode(const unsigned char* src, Dst* dst, int64_t n, size_t width, bool is_signed) {
  for (int64_t i = 0; i < n; ++i, src += width) {
    const uint64_t bits = read_be(src, width);
    if constexpr (std::is_floating_point_v<Dst>) {
      if (width == 4) {
        const uint32_t b = uint32_t(bits);
        float f;
        std::memcpy(&f, &b, 4);
        dst[i] = Dst(f);
      } else {
        std::memcpy(&dst[i], &bits, 8);
      }
    } else if (is_signed) {
      const int shift = int(64 - 8 * width);
      dst[i] = Dst(int64_t(bits << shift) >> shift);  // sign-extend
    } else {
      dst[i] = Dst(bits);
    }
  }
}

}  // namespace

Tensor parse_idx(std::string_view bytes, const std::string& source) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.size() < 4)
    fail(source, "file is " + std::to_string(bytes.size()) + " bytes, shorter than the 4-byte IDX magic number");
  if (p[0] != 0 || p[1] != 0)
    fail(source, "bad magic number: the first two bytes must be zero (not an IDX file, or still compressed?)");
  const IdxType* type = nullptr;
  for (const auto& t : kTypes)
    if (t.code == p[2]) type = &t;
  if (!type) {
    char code[8];
    std::snprintf(code, sizeof code, "0x%02X", p[2]);
    fail(source, std::string("unknown element type code ") + code + " (IDX defines 0x08, 0x09, 0x0B, 0x0C, 0x0D, 0x0E)");
  }
  const size_t ndim = p[3];
  const size_t data_start = 4 + 4 * ndim;
  if (bytes.size() < data_start)
    fail(source, "the header declares " + std::to_string(ndim) + " dimensions, whose sizes need " +
                     std::to_string(data_start) + " bytes, but the file has " + std::to_string(bytes.size()));
  Shape shape;
  uint64_t numel = 1;
  for (size_t d = 0; d < ndim; ++d) {
    const uint64_t n = read_be(p + 4 + 4 * d, 4);
    if (__builtin_mul_overflow(numel, n, &numel) || numel > uint64_t(INT64_MAX) / 8)
      fail(source, "the sizes overflow a 64-bit element count");
    shape.push_back(int64_t(n));
  }
  const uint64_t available = bytes.size() - data_start;
  const uint64_t needed = numel * type->file_bytes;
  if (needed != available)
    fail(source, "sizes " + format_shape(shape) + " of " + type->name + " need " + std::to_string(needed) +
                     " data bytes but the file has " + std::to_string(available) +
                     (needed > available ? " (truncated file?)" : " (trailing bytes)"));
  Tensor t = make_tensor(shape, type->dtype);
  const unsigned char* src = p + data_start;
  const bool is_signed = type->code == 0x09 || type->code == 0x0B || type->code == 0x0C;
  switch (type->dtype) {
    case kUInt8: std::memcpy(t.raw_data(), src, size_t(numel)); break;
    case kInt32: decode(src, t.data_ptr<int32_t>(), int64_t(numel), type->file_bytes, is_signed); break;
    case kFloat32: decode(src, t.data_ptr<float>(), int64_t(numel), 4, false); break;
    default: decode(src, t.data_ptr<double>(), int64_t(numel), 8, false); break;
  }
  return t;
}

Tensor read_idx(const std::filesystem::path& path) {
  return parse_idx(detail::read_file_contents(path, "read_idx"), path.string());
}

void write_idx(const std::filesystem::path& path, const Tensor& t) {
  const std::string target = "write_idx: '" + path.string() + "': ";
  uint8_t code = 0;
  switch (t.dtype()) {
    case kUInt8: code = 0x08; break;
    case kInt32: code = 0x0C; break;
    case kFloat32: code = 0x0D; break;
    case kFloat64: code = 0x0E; break;
    default:
      throw DTypeError(target + "IDX has no " + std::string(dtype_name(t.dtype())) +
                       " type; convert to uint8, int32, float32 or float64 first");
  }
  if (t.dim() > 255) throw ValueError(target + "IDX allows at most 255 dimensions, got " + std::to_string(t.dim()));
  if (!t.device().is_cpu()) throw DeviceError(target + "the tensor is on " + t.device().str() + "; move it to the CPU");
  std::string out(4 + 4 * size_t(t.dim()), '\0');
  auto* hp = reinterpret_cast<unsigned char*>(out.data());
  hp[2] = code;
  hp[3] = uint8_t(t.dim());
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (uint64_t(t.size(d)) > 0xffffffffull)
      throw ValueError(target + "size " + std::to_string(t.size(d)) + " of dimension " + std::to_string(d) +
                       " does not fit IDX's 32-bit sizes");
    write_be(hp + 4 + 4 * d, uint64_t(t.size(d)), 4);
  }
  const Tensor c = rt::contiguous(detach(t));
  const size_t width = c.element_size();
  const size_t at = out.size();
  out.resize(at + c.nbytes());
  auto* dst = reinterpret_cast<unsigned char*>(out.data() + at);
  const auto* src = static_cast<const unsigned char*>(c.raw_data());
  for (size_t i = 0; i < size_t(c.numel()); ++i) {
    uint64_t v = src[i * width];
    if (width == 4) {
      uint32_t x;
      std::memcpy(&x, src + i * width, 4);
      v = x;
    } else if (width == 8) {
      std::memcpy(&v, src + i * width, 8);
    }
    write_be(dst + i * width, v, width);
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "wb"), std::fclose);
  if (!f) throw Error(target + "cannot create: " + std::strerror(errno));
  if (std::fwrite(out.data(), 1, out.size(), f.get()) != out.size() || std::fflush(f.get()) != 0)
    throw Error(target + "write failed: " + std::strerror(errno));
}

}  // namespace rt::data
