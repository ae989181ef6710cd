#include "loops.h"

#include <omp.h>

#include <cstring>

namespace rt::cpu {

ElementwiseLoop::ElementwiseLoop(const TensorView& out, const TensorView* inputs, size_t n) {
  nops_ = int(n) + 1;
  if (nops_ > kMaxOperands) throw Error("ElementwiseLoop: too many operands");
  const int64_t* shape = out.sizes;
  const int nd = out.ndim;
  numel_ = out.numel();
  // Per dim, per operand byte strides, with broadcast dims (size 1 or missing) as 0.
  std::vector<std::array<int64_t, kMaxOperands>> st(static_cast<size_t>(nd));
  auto fill = [&](int k, const TensorView& t) {
    const int td = t.ndim;
    const int64_t es = int64_t(t.element_size());
    for (int d = 0; d < nd; ++d) {
      const int tdim = d - (nd - td);
      int64_t s = 0;
      if (tdim >= 0 && t.sizes[tdim] != 1) s = t.strides[tdim] * es;
      st[size_t(d)][size_t(k)] = s;
    }
    base_[size_t(k)] = t.data;
  };
  fill(0, out);
  for (size_t i = 0; i < n; ++i) fill(int(i) + 1, inputs[i]);
  // Drop size-1 dims, then merge neighbours that are contiguous for every operand.
  shape_.clear();
  strides_.clear();
  for (int d = 0; d < nd; ++d) {
    if (shape[d] == 1) continue;
    if (!shape_.empty()) {
      bool merge = true;
      const auto& prev = strides_.back();
      for (int k = 0; k < nops_; ++k)
        if (prev[size_t(k)] != st[size_t(d)][size_t(k)] * shape[d]) merge = false;
      if (merge) {
        shape_.back() *= shape[d];
        strides_.back() = st[size_t(d)];
        continue;
      }
    }
    shape_.push_back(shape[d]);
    strides_.push_back(st[size_t(d)]);
  }
  if (shape_.empty() && numel_ == 1) {
    shape_.push_back(1);
    strides_.push_back({});
  }
  if (numel_ == 0) {
    shape_.assign(1, 0);
    strides_.assign(1, {});
  }
}

void copy_kernel(const TensorView& dst, const TensorView& src) {
  ElementwiseLoop loop(dst, {src});
  if (dst.dtype == src.dtype) {
    const size_t es = dst.element_size();
    loop.run([es](char** p, const int64_t* s, int64_t n) {
      if (s[0] == int64_t(es) && s[1] == int64_t(es)) {
        std::memcpy(p[0], p[1], size_t(n) * es);
      } else {
        for (int64_t i = 0; i < n; ++i) std::memcpy(p[0] + i * s[0], p[1] + i * s[1], es);
      }
    });
    return;
  }
  visit_dtype(dst.dtype, [&]<typename D>() {
    visit_dtype(src.dtype, [&]<typename S>() {
      unary_kernel<S, D>(loop, [](compute_t<S> v) {
        if constexpr (std::is_same_v<D, bool>) return v != compute_t<S>(0);
        else if constexpr (std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>) return float(v);
        else return static_cast<D>(v);
      });
    });
  });
}

namespace {
int g_threads = 0;  // 0: OpenMP's default
}

int num_threads() { return g_threads > 0 ? g_threads : omp_get_max_threads(); }

void set_num_threads(int n) {
  g_threads = n;
  if (n > 0) omp_set_num_threads(n);
}

}  // namespace rt::cpu
