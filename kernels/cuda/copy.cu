// Copy, fill, arange and linspace launchers: see copy.h.
#include <cstring>

#include "cuda/copy.h"
#include "cuda/elementwise_loop.cuh"
#include "cuda/kernel_macros.cuh"

namespace rt::cuda_kernels {
namespace {

template <typename C>
struct IdentityF {
  __device__ C operator()(C v) const { return v; }
};

template <typename C>
struct NonzeroF {
  __device__ bool operator()(C v) const { return v != C(0); }
};

// Writes the element bits `value` (W is an unsigned type of the element's width) everywhere.
template <typename W>
__global__ void fill_kernel(char* out, ew::OffsetCalc<1> calc, int64_t n, W value) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t off[1];
    calc.get(i, off);
    *reinterpret_cast<W*>(out + off[0]) = value;
  }
}

// The bits of `value` converted to dtype t, as Scalar::to<T>() does on the CPU.
uint64_t element_bits(const Scalar& value, ScalarType t) {
  uint64_t bits = 0;
  auto put = [&bits](auto v) { std::memcpy(&bits, &v, sizeof(v)); };
  switch (t) {
    case kBool: put(uint8_t(value.to<bool>())); break;
    case kUInt8: put(value.to<uint8_t>()); break;
    case kInt32: put(value.to<int32_t>()); break;
    case kInt64: put(value.to<int64_t>()); break;
    case kFloat16: put(__half_as_ushort(__float2half_rn(float(value.to_double())))); break;
    case kBFloat16: put(__bfloat16_as_ushort(__float2bfloat16_rn(float(value.to_double())))); break;
    case kFloat32: put(float(value.to_double())); break;
    case kFloat64: put(value.to_double()); break;
  }
  return bits;
}

// out[i] for i in [0, n) of a 1-D out: f(i) (an int64_t or a double) converted to out's dtype.
template <typename F>
__global__ void indexed_kernel(char* out, ScalarType dtype, int64_t stride_bytes, int64_t n, F f) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    ew::store_as(out + i * stride_bytes, dtype, f(i));
}

struct IntRange {
  int64_t start, step;
  __device__ int64_t operator()(int64_t i) const { return start + i * step; }
};

struct FloatRange {
  double start, step;
  __device__ double operator()(int64_t i) const { return start + double(i) * step; }
};

struct Linspace {
  double start, end, step;
  int64_t steps;
  __device__ double operator()(int64_t i) const {
    if (steps == 1) return start;
    return i < steps / 2 ? start + step * double(i) : end - step * double(steps - 1 - i);
  }
};

void check_1d(const TensorArg& out, const char* op) {
  if (out.ndim != 1)
    throw ShapeError(std::string(op) + " on CUDA: expected a 1-D output, got " + std::to_string(out.ndim) + " dims");
}

template <typename F>
void launch_indexed(const TensorArg& out, const F& f, const char* op, cudaStream_t stream) {
  check_1d(out, op);
  const int64_t n = out.sizes[0];
  if (n == 0) return;
  RT_LAUNCH(grid_for(n), kBlock, stream, indexed_kernel)(static_cast<char*>(out.data), out.dtype,
                                                     out.strides[0] * int64_t(element_size(out.dtype)), n, f);
  check_launch(op);
}

}  // namespace

void copy(const TensorArg& dst, const TensorArg& src, cudaStream_t stream) {
  const int64_t n = dst.numel();
  if (n == 0) return;
  if (dst.dtype == src.dtype && dst.is_contiguous() && src.is_contiguous()) {
    ew::check_same_shape("copy_", dst, src, 0);
    check_cuda(cudaMemcpyAsync(dst.data, src.data, size_t(n) * element_size(dst.dtype), cudaMemcpyDeviceToDevice, stream),
               "copy_");
    return;
  }
  if (dst.dtype == kBool) {
    ew::visit_compute(src.dtype, [&]<typename C>() { ew::launch<C, 1>("copy_", dst, {&src}, src.dtype, NonzeroF<C>{}, stream); });
  } else {
    ew::visit_compute(dst.dtype, [&]<typename C>() { ew::launch<C, 1>("copy_", dst, {&src}, dst.dtype, IdentityF<C>{}, stream); });
  }
}

void fill(const TensorArg& out, const Scalar& value, cudaStream_t stream) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const TensorArg* ops[1] = {&out};
  const ew::OffsetCalc<1> calc = ew::make_offset_calc<1>(out, ops);
  const uint64_t bits = element_bits(value, out.dtype);
  char* p = static_cast<char*>(out.data);
  switch (element_size(out.dtype)) {
    case 1: RT_LAUNCH(grid_for(n), kBlock, stream, fill_kernel)(p, calc, n, uint8_t(bits)); break;
    case 2: RT_LAUNCH(grid_for(n), kBlock, stream, fill_kernel)(p, calc, n, uint16_t(bits)); break;
    case 4: RT_LAUNCH(grid_for(n), kBlock, stream, fill_kernel)(p, calc, n, uint32_t(bits)); break;
    default: RT_LAUNCH(grid_for(n), kBlock, stream, fill_kernel)(p, calc, n, bits); break;
  }
  check_launch("fill_");
}

void arange(const TensorArg& out, const Scalar& start, const Scalar& step, cudaStream_t stream) {
  const bool integral = !start.is_floating() && !step.is_floating() && is_integral(out.dtype, true);
  if (integral) launch_indexed(out, IntRange{start.to_int(), step.to_int()}, "arange", stream);
  else launch_indexed(out, FloatRange{start.to_double(), step.to_double()}, "arange", stream);
}

void linspace(const TensorArg& out, double start, double end, cudaStream_t stream) {
  check_1d(out, "linspace");
  const int64_t steps = out.sizes[0];
  const double step = steps > 1 ? (end - start) / double(steps - 1) : 0.0;
  launch_indexed(out, Linspace{start, end, step, steps}, "linspace", stream);
}

}  // namespace rt::cuda_kernels
