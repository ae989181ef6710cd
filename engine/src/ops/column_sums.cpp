#include "ops/column_sums.h"

#include <algorithm>
#include <cstring>

#include "cpu/isa_kernels.h"
#include "cpu/loops.h"

namespace rt::detail {

std::optional<ColumnLayout> column_layout(const Tensor& t, const cpu::ReducePlan& plan) {
  if (!t.is_cpu() || (t.dtype() != kFloat32 && t.dtype() != kFloat64) || t.dim() == 0) return std::nullopt;
  ColumnLayout L{plan.inner, plan.outer};
  if (L.rows < 2 || L.cols < 2) return std::nullopt;
  // Reduced dims first, then kept ones: dense exactly when each stride is the product of the sizes after it.
  Shape order = plan.dims;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (!std::binary_search(plan.dims.begin(), plan.dims.end(), d)) order.push_back(d);
  int64_t expected = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int64_t size = t.size(*it);
    if (size != 1 && t.stride(*it) != expected) return std::nullopt;
    expected *= size;
  }
  return L;
}

namespace {

// Rows per chunk: at least 256, at most 64 chunks. A function of the row count alone.
int64_t chunk_rows(int64_t rows) { return std::max<int64_t>(256, (rows + 63) / 64); }
constexpr int64_t kColBlock = 16384;  // columns per task: whole rows stream best (isa/column_sums.cpp)

// The column sums of x, left in the first row of the returned [chunks, cols] float64 buffer (from the
// engine's allocator: it is reused across calls, where a std::vector this large would be mmap'd each time).
template <typename T>
Tensor sums(const T* x, const ColumnLayout& L) {
  const cpu::IsaKernels& k = cpu::isa_kernels();
  const int64_t per = chunk_rows(L.rows), chunks = (L.rows + per - 1) / per;
  const int64_t blocks = (L.cols + kColBlock - 1) / kColBlock, tasks = chunks * blocks;
  Tensor part = make_tensor({chunks, L.cols}, kFloat64);
  double* pp = part.data_ptr<double>();
  std::memset(pp, 0, sizeof(double) * size_t(chunks * L.cols));
  auto task = [&](int64_t t) {
    const int64_t c = t / blocks, j0 = (t % blocks) * kColBlock, j1 = std::min(L.cols, j0 + kColBlock);
    const int64_t r0 = c * per, r1 = std::min(L.rows, r0 + per);
    const T* p = x + r0 * L.cols + j0;
    double* acc = pp + c * L.cols + j0;
    if constexpr (std::is_same_v<T, float>) k.sum_cols_f32(acc, p, r1 - r0, L.cols, j1 - j0);
    else k.sum_cols_f64(acc, p, r1 - r0, L.cols, j1 - j0);
  };
  if (L.rows * L.cols >= cpu::kParallelGrain && tasks > 1 && cpu::num_threads() > 1) {
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < tasks; ++t) task(t);
  } else {
    for (int64_t t = 0; t < tasks; ++t) task(t);
  }
  for (int64_t c = 1; c < chunks; ++c) {
    const double* p = pp + c * L.cols;
    for (int64_t j = 0; j < L.cols; ++j) pp[j] += p[j];
  }
  return part;
}

}  // namespace

void column_sums(const Tensor& t, const ColumnLayout& L, const Tensor& out, double divisor) {
  if (t.dtype() == kFloat32) {
    const Tensor part = sums(static_cast<const float*>(t.raw_data()), L);
    const double* s = part.data_ptr<double>();
    float* o = static_cast<float*>(out.raw_data());
    for (int64_t j = 0; j < L.cols; ++j) o[j] = float(s[j] / divisor);
  } else {
    const Tensor part = sums(static_cast<const double*>(t.raw_data()), L);
    const double* s = part.data_ptr<double>();
    double* o = static_cast<double*>(out.raw_data());
    for (int64_t j = 0; j < L.cols; ++j) o[j] = s[j] / divisor;
  }
}

}  // namespace rt::detail
