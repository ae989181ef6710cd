// kernels/cpu/loops.h — the elementwise iteration every pointwise CPU kernel uses.
//
//   rt::cpu::ElementwiseLoop loop(out, {a, b});      // TensorViews; a, b broadcast to out's shape
//   rt::cpu::binary_kernel<float>(loop, [](float x, float y) { return x + y; });
//
// (The engine builds the loop from tensors with rt::cpu_loop(out, {a, b}), engine/src/ops/cpu_view.h.)
//
// ElementwiseLoop computes byte strides of every operand (output first) over the output's
// shape (0 where an input is broadcast), merges dims that are contiguous for all operands,
// and calls a row function fn(char** ptrs, const int64_t* strides, int64_t n) over the
// innermost dim. Work of at least kParallelGrain elements is split across OpenMP threads by
// element ranges, so results never depend on the thread count.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "tensor_view.h"
#include "rt/export.h"

RT_API_BEGIN

namespace rt::cpu {

inline constexpr int64_t kParallelGrain = 32768;
inline constexpr int kMaxOperands = 5;

class ElementwiseLoop {
 public:
  // `inputs` must each broadcast to out's shape; dtypes may differ (kernels read them as given).
  ElementwiseLoop(const TensorView& out, std::initializer_list<TensorView> inputs)
      : ElementwiseLoop(out, inputs.begin(), inputs.size()) {}
  ElementwiseLoop(const TensorView& out, const TensorView* inputs, size_t n);

  int64_t numel() const { return numel_; }
  int num_operands() const { return nops_; }
  // True when every operand is contiguous (or a broadcast scalar) over one flat range.
  bool is_flat() const { return shape_.size() <= 1; }

  // Runs fn(ptrs, strides, n) over all rows; strides are the innermost byte strides.
  template <typename F>
  void run(F&& fn, int64_t grain = kParallelGrain) const;

  // Runs fn over the element range [begin, end) (row-major order of the output).
  template <typename F>
  void run_range(int64_t begin, int64_t end, F&& fn) const;

 private:
  int nops_ = 0;
  int64_t numel_ = 0;
  std::array<char*, kMaxOperands> base_{};
  Shape shape_;                                        // coalesced, outermost first
  std::vector<std::array<int64_t, kMaxOperands>> strides_;  // per dim, bytes per operand
};

// out[i] = op(a[i]); T is the input type, Out the output type; op takes compute_t<T>.
template <typename T, typename Out = T, typename Op>
void unary_kernel(const ElementwiseLoop& loop, Op op) {
  loop.run([&](char** p, const int64_t* s, int64_t n) {
    Out* o = reinterpret_cast<Out*>(p[0]);
    const T* a = reinterpret_cast<const T*>(p[1]);
    if (s[0] == sizeof(Out) && s[1] == sizeof(T)) {
      for (int64_t i = 0; i < n; ++i) o[i] = Out(op(compute_t<T>(a[i])));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out*>(p[0] + i * s[0]) = Out(op(compute_t<T>(*reinterpret_cast<const T*>(p[1] + i * s[1]))));
    }
  });
}

// out[i] = op(a[i], b[i]); both inputs have type T.
template <typename T, typename Out = T, typename Op>
void binary_kernel(const ElementwiseLoop& loop, Op op) {
  loop.run([&](char** p, const int64_t* s, int64_t n) {
    Out* o = reinterpret_cast<Out*>(p[0]);
    const T* a = reinterpret_cast<const T*>(p[1]);
    const T* b = reinterpret_cast<const T*>(p[2]);
    if (s[0] == sizeof(Out) && s[1] == sizeof(T) && s[2] == sizeof(T)) {
      for (int64_t i = 0; i < n; ++i) o[i] = Out(op(compute_t<T>(a[i]), compute_t<T>(b[i])));
    } else if (s[0] == sizeof(Out) && s[1] == sizeof(T) && s[2] == 0) {
      const compute_t<T> bv = compute_t<T>(b[0]);
      for (int64_t i = 0; i < n; ++i) o[i] = Out(op(compute_t<T>(a[i]), bv));
    } else if (s[0] == sizeof(Out) && s[1] == 0 && s[2] == sizeof(T)) {
      const compute_t<T> av = compute_t<T>(a[0]);
      for (int64_t i = 0; i < n; ++i) o[i] = Out(op(av, compute_t<T>(b[i])));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out*>(p[0] + i * s[0]) =
            Out(op(compute_t<T>(*reinterpret_cast<const T*>(p[1] + i * s[1])),
                   compute_t<T>(*reinterpret_cast<const T*>(p[2] + i * s[2]))));
    }
  });
}

// out[i] = op(a[i], b[i], c[i]) with input types A, B, C.
template <typename A, typename B, typename C, typename Out, typename Op>
void ternary_kernel(const ElementwiseLoop& loop, Op op) {
  loop.run([&](char** p, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
      *reinterpret_cast<Out*>(p[0] + i * s[0]) =
          Out(op(compute_t<A>(*reinterpret_cast<const A*>(p[1] + i * s[1])),
                 compute_t<B>(*reinterpret_cast<const B*>(p[2] + i * s[2])),
                 compute_t<C>(*reinterpret_cast<const C*>(p[3] + i * s[3]))));
  });
}

// Copies src into dst (same shape after broadcasting src), converting dtypes.
void copy_kernel(const TensorView& dst, const TensorView& src);

// Number of OpenMP threads kernels use.
int num_threads();
void set_num_threads(int n);

// ---- template definitions ----------------------------------------------------------------
template <typename F>
void ElementwiseLoop::run_range(int64_t begin, int64_t end, F&& fn) const {
  if (begin >= end) return;
  const int nd = int(shape_.size());
  if (nd == 0) {
    char* ptrs[kMaxOperands];
    int64_t st[kMaxOperands] = {};
    for (int k = 0; k < nops_; ++k) ptrs[k] = base_[size_t(k)];
    fn(ptrs, st, int64_t(1));
    return;
  }
  int64_t idx[16];
  int64_t rem = begin;
  for (int d = nd - 1; d >= 0; --d) {
    idx[d] = rem % shape_[size_t(d)];
    rem /= shape_[size_t(d)];
  }
  const int64_t inner = shape_[size_t(nd - 1)];
  int64_t inner_strides[kMaxOperands];
  for (int k = 0; k < nops_; ++k) inner_strides[k] = strides_[size_t(nd - 1)][size_t(k)];
  int64_t left = end - begin;
  while (left > 0) {
    char* ptrs[kMaxOperands];
    for (int k = 0; k < nops_; ++k) {
      int64_t off = 0;
      for (int d = 0; d < nd; ++d) off += idx[d] * strides_[size_t(d)][size_t(k)];
      ptrs[k] = base_[size_t(k)] + off;
    }
    const int64_t n = std::min(inner - idx[nd - 1], left);
    fn(ptrs, inner_strides, n);
    left -= n;
    idx[nd - 1] += n;
    for (int d = nd - 1; d > 0 && idx[d] >= shape_[size_t(d)]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}

template <typename F>
void ElementwiseLoop::run(F&& fn, int64_t grain) const {
  const int nt = num_threads();
  if (numel_ < grain || nt <= 1) {
    run_range(0, numel_, fn);
    return;
  }
  const int64_t chunks = std::min<int64_t>(nt, (numel_ + grain - 1) / grain);
#pragma omp parallel for num_threads(int(chunks)) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t b = numel_ * c / chunks, e = numel_ * (c + 1) / chunks;
    run_range(b, e, fn);
  }
}

}  // namespace rt::cpu

RT_API_END
