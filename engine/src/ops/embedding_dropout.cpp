// embedding (row gather with a dense, padding-aware backward) and dropout (inverted, engine RNG).
#include <cstring>

#include "dispatch_stubs.h"
#include "op_device.h"
#include "ops/cpu_view.h"
#include "inplace.h"
#include "isa_loops.h"
#include "nn_rows.h"
#include "rt/autograd/node.h"
#include "rt/op_observer.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/nn_functional.h"

namespace rt {
using autograd::SavedTensor;
using namespace nnops;

namespace {

// grad_weight[idx[i]] += grad[i] for every i whose index is not padding_idx; columns are split
// across threads so each row sums its contributions in index order.
template <typename T>
void embedding_backward(const T* g, const int64_t* idx, int64_t n, int64_t D, int64_t padding_idx, T* gw) {
  using C = compute_t<T>;
  constexpr int64_t kCols = 256;
  const int64_t blocks = (D + kCols - 1) / kCols;
  parallel_for(blocks, n * D, [&](int64_t b) {
    const int64_t j0 = b * kCols, j1 = std::min(D, j0 + kCols);
    for (int64_t i = 0; i < n; ++i) {
      if (idx[i] == padding_idx) continue;
      T* row = gw + idx[i] * D;
      const T* gr = g + i * D;
      for (int64_t j = j0; j < j1; ++j) row[j] = T(C(row[j]) + C(gr[j]));
    }
  });
}

}  // namespace

namespace {
// embedding on a GPU: gather and scatter-add kernels (kernels/cuda/embedding.h).
Tensor embedding_cuda(const Tensor& weight, const Tensor& idx, const Shape& index_shape, int64_t padding_idx) {
  const int64_t V = weight.size(0), D = weight.size(1);
  Shape shape = index_shape;
  shape.push_back(D);
  Tensor out = make_tensor(shape, weight.dtype(), weight.device());
  dispatch::embedding(out.device(), out, dense(weight, weight.dtype()), idx);
  if (autograd::any_requires_grad(weight))
    autograd::record("EmbeddingBackward0", {weight}, {out},
                     [V, D, padding_idx, dt = weight.dtype(), si = SavedTensor(idx)](const TensorList& g) {
                       Tensor gw = make_tensor({V, D}, dt, g[0].device());
                       dispatch::embedding_backward(g[0].device(), gw, dense(g[0], dt), si.unpack(), padding_idx);
                       return TensorList{gw};
                     });
  return out;
}
}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx) {
  OpGuard guard("embedding", weight, indices);
  if (weight.dim() != 2)
    throw_shape_error("embedding", "weight must be 2-D [num_embeddings, embedding_dim], got " +
                                       format_shape(weight.sizes()) + " (indices " + format_shape(indices.sizes()) + ")");
  if (!is_integral(indices.dtype()))
    throw DTypeError("embedding: indices must be an integer tensor (int64 or int32), got " +
                     std::string(dtype_name(indices.dtype())) + module_context() + ". Hint: use indices.to(rt::kInt64)");
  const int64_t V = weight.size(0), D = weight.size(1);
  if (padding_idx >= V)
    throw ValueError("embedding: padding_idx " + std::to_string(padding_idx) + " must be within num_embeddings " +
                     std::to_string(V) + module_context());
  Tensor idx = dense(indices, kInt64);
  if (!detail::op_device("embedding", weight, indices).is_cpu()) return embedding_cuda(weight, idx, indices.sizes(), padding_idx);
  const int64_t* ip = idx.data_ptr<int64_t>();
  const int64_t n = idx.numel();
  for (int64_t i = 0; i < n; ++i)
    if (ip[i] < 0 || ip[i] >= V)
      throw IndexError("embedding: index " + std::to_string(ip[i]) + " is out of range for num_embeddings " +
                       std::to_string(V) + " (valid: 0.." + std::to_string(V - 1) + ")" + module_context());
  Tensor w = dense(weight, weight.dtype());
  Shape shape = indices.sizes();
  shape.push_back(D);
  Tensor out = make_tensor(shape, weight.dtype());
  const size_t row_bytes = size_t(D) * weight.element_size();
  const char* src = static_cast<const char*>(w.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  parallel_for(n, n * D, [&](int64_t i) { std::memcpy(dst + size_t(i) * row_bytes, src + size_t(ip[i]) * row_bytes, row_bytes); });
  if (autograd::any_requires_grad(weight))
    autograd::record("EmbeddingBackward0", {weight}, {out},
                     [V, D, padding_idx, dt = weight.dtype(), si = SavedTensor(idx)](const TensorList& g) {
                       Tensor iv = si.unpack();
                       Tensor gc = dense(g[0], dt);
                       Tensor gw = zeros({V, D}, dt);
                       visit_dtype(dt, [&]<typename T>() {
                         if constexpr (std::is_floating_point_v<compute_t<T>>)
                           embedding_backward<T>(gc.data_ptr<T>(), iv.data_ptr<int64_t>(), iv.numel(), D, padding_idx,
                                                 gw.data_ptr<T>());
                       });
                       return TensorList{gw};
                     });
  return out;
}

namespace {
// dropout on a GPU: the same Philox mask as the CPU's (kernels/cuda/dropout.h).
Tensor dropout_cuda(const Tensor& x, double p) {
  Tensor xc = x.contiguous();
  Tensor mask = make_tensor(x.sizes(), kBool, x.device());
  Tensor out = make_tensor(x.sizes(), x.dtype(), x.device());
  dispatch::dropout(out.device(), out, mask, xc, p);
  const double scale = 1.0 / (1.0 - p);
  if (autograd::any_requires_grad(x))
    autograd::record("NativeDropoutBackward0", {x}, {out}, [scale, sm = SavedTensor(mask)](const TensorList& g) {
      Tensor m = sm.unpack();
      Tensor gx = make_tensor(m.sizes(), g[0].dtype(), m.device());
      dispatch::dropout_backward(g[0].device(), gx, g[0].contiguous(), m, scale);
      return TensorList{gx};
    });
  return out;
}
// out = x * (mask = u < keep) * scale on the CPU: the per-level kernel (kernels/cpu/isa/dropout.cpp)
// for contiguous float32, this loop for the other dtypes and layouts.
void dropout_apply_cpu(const Tensor& out, const Tensor& mask, const Tensor& x, const Tensor& u, double keep,
                       double scale) {
  if (x.dtype() == kFloat32 && x.is_contiguous()) {
    const cpu::IsaKernels& k = cpu::isa_kernels();
    const float* xp = x.data_ptr<float>();
    const float* up = u.data_ptr<float>();
    float* op = out.data_ptr<float>();
    uint8_t* mp = static_cast<uint8_t*>(mask.raw_data());
    detail::parallel_ranges(x.numel(), [&](int64_t b, int64_t e) {
      k.dropout_f32(op + b, mp + b, xp + b, up + b, e - b, float(keep), float(scale));
    });
    return;
  }
  cpu::ElementwiseLoop loop = cpu_loop(out, {x, u, mask});
  visit_dtype(x.dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    if constexpr (std::is_floating_point_v<C>) {
      visit_dtype(u.dtype(), [&]<typename U>() {
        if constexpr (std::is_floating_point_v<U>) {
          const U thr = U(keep);
          const C sc = C(scale);
          loop.run([&](char** ptr, const int64_t* s, int64_t n) {
            for (int64_t i = 0; i < n; ++i) {
              const bool k = *reinterpret_cast<const U*>(ptr[2] + i * s[2]) < thr;
              *reinterpret_cast<bool*>(ptr[3] + i * s[3]) = k;
              *reinterpret_cast<T*>(ptr[0] + i * s[0]) =
                  T(C(*reinterpret_cast<const T*>(ptr[1] + i * s[1])) * (k ? sc : C(0)));
            }
          });
        }
      });
    }
  });
}

// gx = g * mask * scale, likewise.
void dropout_backward_cpu(const Tensor& gx, const Tensor& g, const Tensor& m, double scale) {
  if (gx.dtype() == kFloat32 && g.dtype() == kFloat32 && g.is_contiguous()) {
    const cpu::IsaKernels& k = cpu::isa_kernels();
    const float* gp = g.data_ptr<float>();
    const uint8_t* mp = static_cast<const uint8_t*>(m.raw_data());
    float* o = gx.data_ptr<float>();
    detail::parallel_ranges(gx.numel(), [&](int64_t b, int64_t e) {
      k.dropout_backward_f32(o + b, gp + b, mp + b, e - b, float(scale));
    });
    return;
  }
  cpu::ElementwiseLoop loop = cpu_loop(gx, {g, m});
  visit_dtype(gx.dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    if constexpr (std::is_floating_point_v<C>) {
      const C sc = C(scale);
      loop.run([&](char** ptr, const int64_t* s, int64_t n) {
        for (int64_t i = 0; i < n; ++i)
          *reinterpret_cast<T*>(ptr[0] + i * s[0]) =
              T(C(*reinterpret_cast<const T*>(ptr[1] + i * s[1])) *
                (*reinterpret_cast<const bool*>(ptr[2] + i * s[2]) ? sc : C(0)));
      });
    }
  });
}
}  // namespace

Tensor dropout(const Tensor& x, double p, bool training) {
  OpGuard guard("dropout", x);
  if (!(p >= 0.0 && p <= 1.0))
    throw ValueError("dropout: probability has to be between 0 and 1, but got " + std::to_string(p) + module_context());
  if (!is_floating(x.dtype()))
    throw DTypeError("dropout: expected a floating point input, got " + std::string(dtype_name(x.dtype())) +
                     module_context());
  if (!training || p == 0.0 || x.numel() == 0) return x;
  if (p == 1.0) return x * zeros({}, x.dtype());
  if (!x.is_cpu()) return dropout_cuda(x, p);
  const ScalarType udt = x.dtype() == kFloat64 ? kFloat64 : kFloat32;
  Tensor u = rand(x.sizes(), udt);
  Tensor mask = make_tensor(x.sizes(), kBool);
  Tensor out = make_tensor(x.sizes(), x.dtype());
  const double keep = 1.0 - p, scale = 1.0 / keep;
  dropout_apply_cpu(out, mask, x, u, keep, scale);
  if (autograd::any_requires_grad(x))
    autograd::record("NativeDropoutBackward0", {x}, {out}, [scale, sm = SavedTensor(mask)](const TensorList& g) {
      Tensor m = sm.unpack();
      Tensor gx = make_tensor(m.sizes(), g[0].dtype());
      dropout_backward_cpu(gx, g[0], m, scale);
      return TensorList{gx};
    });
  return out;
}

}  // namespace rt
