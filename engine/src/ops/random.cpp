// Random factories and in-place fills over the default Philox generator.
//
// Note [Random streams]
// Every call reserves ceil(n / k) Philox counters from the generator and element i takes its
// random bits from counter offset + i / k: k = 4 values per counter from 32-bit words (k = 2
// where a value takes 64 bits: float64 outputs, randint, and randperm's swaps). The values
// therefore depend only on the seed and the sequence of calls, never on the thread count.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "dispatch_stubs.h"
#include "device_copy.h"
#include "cpu/loops.h"
#include "../philox.h"
#include "inplace.h"
#include "isa_loops.h"
#include "rt/autograd/node.h"
#include "rt/generator.h"
#include "rt/op_observer.h"
#include "rt/ops/creation.h"

namespace rt {
namespace {

using detail::PhiloxBlock;

// Calls f(block_index, block) for the ceil(n / per) counters a call of n values reserves.
template <typename F>
void for_each_block(int64_t n, int per, const F& f) {
  if (n <= 0) return;
  Generator& gen = default_generator();
  const uint64_t key = gen.seed();
  const int64_t blocks = (n + per - 1) / per;
  const uint64_t offset = gen.reserve(uint64_t(blocks));
  auto body = [&](int64_t b) { f(b, detail::philox_block(offset + uint64_t(b), key)); };
  if (n >= cpu::kParallelGrain && cpu::num_threads() > 1) {
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < blocks; ++b) body(b);
  } else {
    for (int64_t b = 0; b < blocks; ++b) body(b);
  }
}

template <typename T>
constexpr int mantissa_digits() {
  if constexpr (std::is_same_v<T, Half>) return 11;
  else if constexpr (std::is_same_v<T, BFloat16>) return 8;
  else if constexpr (std::is_same_v<T, float>) return 24;
  else return 53;
}

template <typename T>
constexpr int per_counter() { return std::is_same_v<T, double> ? 2 : 4; }

uint64_t word64(const PhiloxBlock& w, int k) { return (uint64_t(w[size_t(2 * k)]) << 32) | w[size_t(2 * k + 1)]; }

// The k-th uniform in [0, 1) of a block, with exactly T's mantissa bits (so it never rounds to 1).
template <typename T>
double uniform_at(const PhiloxBlock& w, int k) {
  constexpr int d = mantissa_digits<T>();
  constexpr double scale = 1.0 / double(uint64_t(1) << d);
  if constexpr (d > 32) return double(word64(w, k) >> (64 - d)) * scale;
  else return double(w[size_t(k)] >> (32 - d)) * scale;
}

// A uniform in (0, 1] for the logarithm in Box-Muller.
template <typename T>
double open_uniform_at(const PhiloxBlock& w, int k) {
  if constexpr (std::is_same_v<T, double>) return double((word64(w, k) >> 11) + 1) * 0x1p-53;
  else return (double(w[size_t(k)]) + 1.0) * 0x1p-32;
}

// A uniform in [0, 1) from 32 bits (53 for float64), for comparisons and angles.
template <typename T>
double wide_uniform_at(const PhiloxBlock& w, int k) {
  if constexpr (std::is_same_v<T, double>) return double(word64(w, k) >> 11) * 0x1p-53;
  else return double(w[size_t(k)]) * 0x1p-32;
}

void require_floating_dtype(ScalarType dt, const char* op, const char* hint) {
  if (!is_floating(dt))
    throw DTypeError(std::string(op) + ": expected a floating point dtype, got " + std::string(dtype_name(dt)) +
                     module_context() + ". Hint: " + hint);
}

// float32 uniforms at the CPU's instruction-set level (kernels/cpu/isa/dropout.cpp): the values of
// the loop below, kWidth Philox counters at a time.
void fill_uniform_f32(float* p, int64_t n, double low, double high) {
  if (n <= 0) return;
  Generator& gen = default_generator();
  const uint64_t key = gen.seed();
  const int64_t blocks = (n + 3) / 4;
  const uint64_t offset = gen.reserve(uint64_t(blocks));
  const cpu::IsaKernels& k = cpu::isa_kernels();
  detail::parallel_row_ranges(blocks, 4, [&](int64_t b0, int64_t b1) {
    const int64_t end = std::min(n, 4 * b1);
    k.philox_uniform_f32(p + 4 * b0, end - 4 * b0, offset + uint64_t(b0), key);
    if (low != 0.0 || high != 1.0)  // the uniform is exact in float, so this rounds as the loop below does
      for (int64_t i = 4 * b0; i < end; ++i) p[i] = float(low + (high - low) * double(p[i]));
  });
}

// Fills contiguous t with low + (high - low) * U[0, 1).
void fill_uniform_cpu(const Tensor& t, double low, double high) {
  if (t.dtype() == kFloat32) return fill_uniform_f32(static_cast<float*>(t.raw_data()), t.numel(), low, high);
  visit_dtype(t.dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      T* p = static_cast<T*>(t.raw_data());
      const int64_t n = t.numel();
      constexpr int per = per_counter<T>();
      for_each_block(n, per, [&](int64_t b, const PhiloxBlock& w) {
        for (int k = 0; k < per && b * per + k < n; ++k)
          p[b * per + k] = T(compute_t<T>(low + (high - low) * uniform_at<T>(w, k)));
      });
    }
  });
}

// Fills contiguous t with mean + stddev * N(0, 1), Box-Muller on pairs of uniforms (in float
// for the 16- and 32-bit types, in double for float64).
void fill_normal_cpu(const Tensor& t, double mean, double stddev) {
  visit_dtype(t.dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
      T* p = static_cast<T*>(t.raw_data());
      const int64_t n = t.numel();
      const C m = C(mean), s = C(stddev), two_pi = C(2 * std::numbers::pi);
      constexpr int per = per_counter<T>();
      for_each_block(n, per, [&](int64_t b, const PhiloxBlock& w) {
        for (int k = 0; k < per; k += 2) {
          const C r = std::sqrt(C(-2) * std::log(C(open_uniform_at<T>(w, k))));
          const C theta = two_pi * C(wide_uniform_at<T>(w, k + 1));
          const int64_t i = b * per + k;
          if (i < n) p[i] = T(compute_t<T>(m + s * r * std::cos(theta)));
          if (i + 1 < n) p[i + 1] = T(compute_t<T>(m + s * r * std::sin(theta)));
        }
      });
    }
  });
}

// The CPU kernel of dispatch::random_fill: normal ? N(a, b) : U[a, b), from the default generator's stream.
void random_fill_cpu(const Tensor& t, bool normal, double a, double b) {
  if (normal) fill_normal_cpu(t, a, b);
  else fill_uniform_cpu(t, a, b);
}
RT_REGISTER_KERNEL(dispatch::random_fill, DeviceType::CPU, random_fill_cpu);

void fill_uniform(const Tensor& t, double low, double high) { dispatch::random_fill(t.device(), t, false, low, high); }
void fill_normal(const Tensor& t, double mean, double stddev) { dispatch::random_fill(t.device(), t, true, mean, stddev); }

Tensor finish(Tensor t, const TensorOptions& opts) {
  if (opts.requires_grad) t.requires_grad_();
  return t;
}

// For integer draws computed on the host: copies the result to opts.device (one transfer; the
// same values as on the CPU), then applies requires_grad.
Tensor finish_on(Tensor t, const TensorOptions& opts) {
  if (!opts.device.is_cpu()) t = t.to(opts.device);
  return finish(t, opts);
}

TensorOptions like(const Tensor& t, const std::optional<TensorOptions>& opts) {
  if (opts) return *opts;
  TensorOptions o(t.dtype());
  o.device = t.device();
  return o;
}

// Runs fill on a contiguous buffer of t's shape and dtype, then writes it into t.
template <typename Fill>
Tensor& fill_in_place(Tensor& t, const char* op, const Fill& fill) {
  detail::check_inplace(t, op, autograd::any_requires_grad(t));
  if (t.is_contiguous()) {
    fill(t);
  } else {
    Tensor tmp = make_tensor(t.sizes(), t.dtype(), t.device());
    fill(tmp);
    detail::copy_into(t, tmp);
  }
  t.bump_version();
  return t;
}

uint64_t mulhi(uint64_t x, uint64_t range) { return uint64_t((unsigned __int128)x * range >> 64); }

// Throws ValueError unless every value in [lo, hi] is exactly representable in dt.
void require_representable(ScalarType dt, double lo, double hi, const char* op, const std::string& what) {
  double min = 0, max = 0;
  switch (dt) {
    case kBool: max = 1; break;
    case kUInt8: max = 255; break;
    case kInt32: min = -2147483648.0, max = 2147483647.0; break;
    case kInt64: return;
    case kFloat16: min = -2048, max = 2048; break;
    case kBFloat16: min = -256, max = 256; break;
    case kFloat32: min = -16777216.0, max = 16777216.0; break;
    case kFloat64: min = -9007199254740992.0, max = 9007199254740992.0; break;
  }
  if (lo < min || hi > max)
    throw ValueError(std::string(op) + ": " + what + " does not fit dtype " + std::string(dtype_name(dt)) +
                     " (exact integers in [" + std::to_string(int64_t(min)) + ", " + std::to_string(int64_t(max)) +
                     "])" + module_context() + ". Hint: choose a wider dtype, e.g. rt::kInt64");
}

}  // namespace

Tensor rand(const Shape& shape, TensorOptions opts) {
  OpGuard guard("rand");
  require_floating_dtype(opts.dtype, "rand", "use rt::randint for integers");
  Tensor t = make_tensor(shape, opts.dtype, opts.device);
  fill_uniform(t, 0.0, 1.0);
  return finish(t, opts);
}

Tensor randn(const Shape& shape, TensorOptions opts) {
  OpGuard guard("randn");
  require_floating_dtype(opts.dtype, "randn", "use rt::randint for integers");
  Tensor t = make_tensor(shape, opts.dtype, opts.device);
  fill_normal(t, 0.0, 1.0);
  return finish(t, opts);
}

Tensor rand_like(const Tensor& t, std::optional<TensorOptions> opts) {
  OpGuard guard("rand_like", t);
  const TensorOptions o = like(t, opts);
  require_floating_dtype(o.dtype, "rand_like", "pass a floating dtype, e.g. rand_like(x, rt::kFloat32)");
  Tensor out = make_tensor(t.sizes(), o.dtype, o.device);
  fill_uniform(out, 0.0, 1.0);
  return finish(out, o);
}

Tensor randn_like(const Tensor& t, std::optional<TensorOptions> opts) {
  OpGuard guard("randn_like", t);
  const TensorOptions o = like(t, opts);
  require_floating_dtype(o.dtype, "randn_like", "pass a floating dtype, e.g. randn_like(x, rt::kFloat32)");
  Tensor out = make_tensor(t.sizes(), o.dtype, o.device);
  fill_normal(out, 0.0, 1.0);
  return finish(out, o);
}

Tensor& uniform_(Tensor& t, double low, double high) {
  OpGuard guard("uniform_", t);
  require_floating_dtype(t.dtype(), "uniform_", "fill integer tensors with rt::randint and copy_");
  if (!(low <= high) || !std::isfinite(high - low))
    throw ValueError("uniform_: expected a finite range with low <= high, got low=" + std::to_string(low) +
                     " high=" + std::to_string(high) + module_context());
  return fill_in_place(t, "uniform_", [&](const Tensor& dst) { fill_uniform(dst, low, high); });
}

Tensor& normal_(Tensor& t, double mean, double stddev) {
  OpGuard guard("normal_", t);
  require_floating_dtype(t.dtype(), "normal_", "fill integer tensors with rt::randint and copy_");
  if (!(stddev >= 0.0) || !std::isfinite(stddev) || !std::isfinite(mean))
    throw ValueError("normal_: expected a finite mean and std >= 0, got mean=" + std::to_string(mean) +
                     " std=" + std::to_string(stddev) + module_context());
  return fill_in_place(t, "normal_", [&](const Tensor& dst) { fill_normal(dst, mean, stddev); });
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, TensorOptions opts) {
  OpGuard guard("randint");
  if (low >= high)
    throw ValueError("randint: expected low < high, got low=" + std::to_string(low) + " high=" + std::to_string(high) +
                     module_context() + ". Hint: the range is [low, high), so high must exceed low");
  require_representable(opts.dtype, double(low), double(high - 1), "randint", "the range [low, high)");
  Tensor t = make_tensor(shape, opts.dtype);  // drawn on the host, then placed (finish_on)
  const uint64_t range = uint64_t(high) - uint64_t(low);
  visit_dtype(opts.dtype, [&]<typename T>() {
    T* p = static_cast<T*>(t.raw_data());
    const int64_t n = t.numel();
    for_each_block(n, 2, [&](int64_t b, const PhiloxBlock& w) {
      for (int k = 0; k < 2 && b * 2 + k < n; ++k) {
        const int64_t v = int64_t(uint64_t(low) + mulhi(word64(w, k), range));
        if constexpr (std::is_floating_point_v<compute_t<T>>) p[b * 2 + k] = T(compute_t<T>(v));
        else p[b * 2 + k] = T(v);
      }
    });
  });
  return finish_on(t, opts);
}

Tensor randperm(int64_t n, TensorOptions opts) {
  OpGuard guard("randperm");
  if (n < 0) throw ValueError("randperm: n must be non-negative, got " + std::to_string(n) + module_context());
  if (opts.dtype == kBool)
    throw DTypeError("randperm: dtype bool cannot hold a permutation" + module_context() + ". Hint: use rt::kInt64");
  require_representable(opts.dtype, 0.0, double(n > 0 ? n - 1 : 0), "randperm", "n = " + std::to_string(n));
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm[size_t(i)] = i;
  // Fisher-Yates from the back; swap k uses 64-bit value k % 2 of counter offset + k / 2.
  const int64_t swaps = std::max<int64_t>(n - 1, 0);
  Generator& gen = default_generator();
  const uint64_t key = gen.seed(), offset = gen.reserve(uint64_t((swaps + 1) / 2));
  PhiloxBlock w{};
  for (int64_t k = 0; k < swaps; ++k) {
    if (k % 2 == 0) w = detail::philox_block(offset + uint64_t(k / 2), key);
    const int64_t i = n - 1 - k;
    std::swap(perm[size_t(i)], perm[size_t(mulhi(word64(w, int(k % 2)), uint64_t(i) + 1))]);
  }
  Tensor t = make_tensor({n}, opts.dtype);
  detail::copy_into(t, from_vector(perm, {n}));
  return finish_on(t, opts);
}

Tensor bernoulli(const Tensor& probs) {
  OpGuard guard("bernoulli", probs);
  require_floating_dtype(probs.dtype(), "bernoulli", "convert the probabilities first, e.g. p.to(rt::kFloat32)");
  Tensor p = probs.detach().to(kFloat64).contiguous();
  const double* pv = p.data_ptr<double>();
  const int64_t n = p.numel();
  for (int64_t i = 0; i < n; ++i)
    if (!(pv[i] >= 0.0 && pv[i] <= 1.0))
      throw ValueError("bernoulli: expected all probabilities in [0, 1], got " + std::to_string(pv[i]) +
                       " at flat index " + std::to_string(i) + " of an input of shape " +
                       format_shape(probs.sizes()) + module_context());
  Tensor out = make_tensor(probs.sizes(), probs.dtype());
  visit_dtype(probs.dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      T* o = static_cast<T*>(out.raw_data());
      constexpr int per = per_counter<T>();
      for_each_block(n, per, [&](int64_t b, const PhiloxBlock& w) {
        for (int k = 0; k < per && b * per + k < n; ++k)
          o[b * per + k] = T(compute_t<T>(wide_uniform_at<T>(w, k) < pv[b * per + k] ? 1 : 0));
      });
    }
  });
  return out;
}

}  // namespace rt
