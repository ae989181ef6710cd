// cumsum, cumprod and logcumsumexp along a dim, and their backward kernels. See the contract in
// rt/ops/scan.h.
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "dim_rows.h"
#include "op_device.h"
#include "pointwise.h"
#include "rt/autograd/node.h"
#include "rt/op_observer.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/scan.h"
#include "rt/ops/view.h"

namespace rt {
using detail::DimRows;
using detail::for_each_row;
using autograd::record;
using autograd::SavedTensor;

namespace {

enum class Scan { Sum, Prod, LogSumExp };

// log(exp(a) + exp(b)) without overflow; two equal infinities stay themselves.
double log_add_exp(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  const double lo = std::min(a, b), hi = std::max(a, b);
  if (lo == hi && std::isinf(lo)) return lo;
  return hi + std::log1p(std::exp(lo - hi));
}

// Integers accumulate in 64 bits and wrap on overflow (unsigned arithmetic), floating types in double.
template <typename T>
using scan_acc_t = std::conditional_t<std::is_floating_point_v<compute_t<T>>, double, uint64_t>;

template <typename T>
T from_acc(scan_acc_t<T> v) {
  if constexpr (std::is_floating_point_v<compute_t<T>>) return T(compute_t<T>(v));
  else if constexpr (std::is_same_v<T, bool>) return v != 0;
  else return T(int64_t(v));
}

// out = the running `kind` of x along each row (from the row's end when `reverse`); x and out
// contiguous on the CPU, same shape and dtype.
void scan_rows(Scan kind, const Tensor& x, const Tensor& out, const DimRows& L, bool reverse) {
  visit_dtype(x.dtype(), [&]<typename T>() {
    using Acc = scan_acc_t<T>;
    const T* in = static_cast<const T*>(x.raw_data());
    T* o = static_cast<T*>(out.raw_data());
    const int64_t n = L.n, s = L.stride();
    for_each_row(L, [&](int64_t r) {
      const int64_t b = L.start(r);
      Acc acc = kind == Scan::Prod ? Acc(1) : Acc(0);
      if constexpr (std::is_floating_point_v<Acc>)
        if (kind == Scan::LogSumExp) acc = -std::numeric_limits<double>::infinity();
      for (int64_t step = 0; step < n; ++step) {
        const int64_t k = b + (reverse ? n - 1 - step : step) * s;
        Acc v;
        if constexpr (std::is_floating_point_v<Acc>) v = Acc(compute_t<T>(in[k]));
        else v = Acc(int64_t(in[k]));
        switch (kind) {
          case Scan::Sum: acc = acc + v; break;
          case Scan::Prod: acc = acc * v; break;
          case Scan::LogSumExp:
            if constexpr (std::is_floating_point_v<Acc>) acc = log_add_exp(acc, v);
            break;
        }
        o[k] = from_acc<T>(acc);
      }
    });
  });
}

// The scan of t along dim (wrapped) in dtype `dt`, on the CPU; no autograd.
Tensor scan(Scan kind, const Tensor& t, int64_t dim, ScalarType dt, bool reverse) {
  const Tensor x = detail::dense_cpu(t, dt);
  Tensor out = make_tensor(x.sizes(), dt);
  if (out.numel() > 0) scan_rows(kind, x, out, DimRows(x.sizes(), dim), reverse);
  return out;
}

// Gradient of cumprod for one row set, exact with zeros: with z the first zero of a row,
// gx[k] = sum_{j >= k} g[j] out[j] / x[k] for k < z; gx[z] = sum_{j >= z} g[j] prod_{i <= j, i != z} x[i];
// gx[k] = 0 after z.
Tensor cumprod_backward(const Tensor& x_in, const Tensor& out_in, const Tensor& g_in, int64_t dim) {
  const ScalarType dt = x_in.dtype();
  const Tensor x = detail::dense_cpu(x_in, dt), out = detail::dense_cpu(out_in, dt), g = detail::dense_cpu(g_in, dt);
  Tensor gx = make_tensor(x.sizes(), dt);
  if (gx.numel() == 0) return gx;
  const DimRows L(x.sizes(), dim);
  detail::visit_float(dt, [&]<typename T>() {
    using C = compute_t<T>;
    const T *px = static_cast<const T*>(x.raw_data()), *po = static_cast<const T*>(out.raw_data()),
            *pg = static_cast<const T*>(g.raw_data());
    T* pgx = static_cast<T*>(gx.raw_data());
    const int64_t n = L.n, s = L.stride();
    for_each_row(L, [&](int64_t r) {
      const int64_t b = L.start(r);
      auto at = [&](int64_t j) { return b + j * s; };
      int64_t z = 0;
      while (z < n && C(px[at(z)]) != C(0)) ++z;
      double tail = 0;  // sum over j >= k (and j < z) of g[j] out[j]
      for (int64_t k = n - 1; k >= 0; --k) {
        if (k > z) {
          pgx[at(k)] = T(C(0));
          continue;
        }
        if (k == z) {
          double running = z == 0 ? 1.0 : double(C(po[at(z - 1)])), sum = 0;
          for (int64_t j = z; j < n; ++j) {
            if (j > z) running *= double(C(px[at(j)]));
            sum += double(C(pg[at(j)])) * running;
          }
          pgx[at(k)] = T(C(sum));
          continue;
        }
        tail += double(C(pg[at(k)])) * double(C(po[at(k)]));
        pgx[at(k)] = T(C(tail / double(C(px[at(k)]))));
      }
    });
  });
  return gx;
}

// cumsum/cumprod: bool and integer inputs count in int64 unless dtype says otherwise.
ScalarType accumulate_dtype(const Tensor& t, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return is_floating(t.dtype()) ? t.dtype() : kInt64;
}

// The input as the op computes it: converted to an explicit dtype (differentiably) first.
Tensor in_dtype(const Tensor& t, std::optional<ScalarType> dtype) {
  return dtype && *dtype != t.dtype() ? to_dtype(t, *dtype) : t;
}

Tensor reversed_cumsum(const Tensor& g, int64_t dim) { return scan(Scan::Sum, g, dim, g.dtype(), true); }

}  // namespace

Tensor cumsum(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype) {
  OpGuard guard("cumsum", t);
  dim = wrap_dim(dim, t.dim(), "cumsum");
  detail::require_cpu("cumsum", t);
  const Tensor x = in_dtype(t, dtype);
  Tensor out = scan(Scan::Sum, x, dim, accumulate_dtype(t, dtype), false);
  if (autograd::any_requires_grad(x) && is_floating(out.dtype()))
    record("CumsumBackward0", {x}, {out}, [dim](const TensorList& g) { return TensorList{reversed_cumsum(g[0], dim)}; });
  return out;
}

Tensor cumprod(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype) {
  OpGuard guard("cumprod", t);
  dim = wrap_dim(dim, t.dim(), "cumprod");
  detail::require_cpu("cumprod", t);
  const Tensor x = in_dtype(t, dtype);
  Tensor out = scan(Scan::Prod, x, dim, accumulate_dtype(t, dtype), false);
  if (autograd::any_requires_grad(x) && is_floating(out.dtype()))
    record("CumprodBackward0", {x}, {out}, [sx = SavedTensor(x), so = SavedTensor(out), dim](const TensorList& g) {
      return TensorList{cumprod_backward(sx.unpack(), so.unpack(), g[0], dim)};
    });
  return out;
}

Tensor logcumsumexp(const Tensor& t, int64_t dim) {
  OpGuard guard("logcumsumexp", t);
  dim = wrap_dim(dim, t.dim(), "logcumsumexp");
  if (!is_floating(t.dtype()))
    throw DTypeError("logcumsumexp: expected a floating point input, got " + std::string(dtype_name(t.dtype())) +
                     " " + format_shape(t.sizes()) + module_context() + ". Hint: convert it first, e.g. .to(rt::kFloat32)");
  detail::require_cpu("logcumsumexp", t);
  Tensor out = scan(Scan::LogSumExp, t, dim, t.dtype(), false);
  if (autograd::any_requires_grad(t))
    record("LogcumsumexpBackward0", {t}, {out}, [sx = SavedTensor(t), so = SavedTensor(out), dim](const TensorList& g) {
      // Positive and negative parts of g in log space, each summed in reverse with logcumsumexp:
      // grad = exp(x + revlcse(log g+ - out)) - exp(x + revlcse(log g- - out)).
      const Tensor x = sx.unpack(), out = so.unpack(), grad = g[0];
      const double lowest_value = detail::visit_float(grad.dtype(), []<typename T>() {
        return double(std::numeric_limits<compute_t<T>>::lowest());
      });
      const Tensor lowest = full_like(grad, lowest_value);
      const Tensor zero = zeros_like(grad);
      auto part = [&](const Tensor& log_part) {
        return exp(add(x, scan(Scan::LogSumExp, sub(log_part, out), dim, x.dtype(), true)));
      };
      const Tensor pos = where(gt(grad, zero), log(grad), lowest);
      const Tensor negv = where(lt(grad, zero), log(neg(grad)), lowest);
      return TensorList{sub(part(pos), part(negv))};
    });
  return out;
}

}  // namespace rt
