// kernels/cpu/isa_kernels.h — the CPU kernels compiled once per instruction-set level, as one
// table of function pointers per level; isa_kernels() is the table of the level chosen at start-up.
//
//   const rt::cpu::IsaKernels& k = rt::cpu::isa_kernels();          // cpu_capability()'s table
//   k.unary_f32(rt::cpu::VecUnary::Gelu, out, x, n);                // contiguous float32, n elements
//   k.adam_f32(args, begin, end);                                   // one pass over [begin, end)
//   k.softmax_rows_f32(y, x, rows, n, /*log=*/false);               // rows of n contiguous elements
//   rt::cpu::isa_kernels(rt::cpu::CpuCapability::Default);          // a given level (tests, benchmarks)
//
// Every function works on plain contiguous arrays and one range of them; the engine splits
// large work across threads and calls these per chunk (no OpenMP inside: see the Note).
// Elementwise arithmetic and the optimizer updates give the same bits at every level (no FMA
// contraction: the sources compile with -ffp-contract=off); the math functions (exp and log from
// SLEEF) may differ in the last bits between levels.
// See Note [CPU capability dispatch] in isa_kernels.cpp.
#pragma once
#include <cstdint>

#include "cpu_capability.h"
#include "rt/export.h"

RT_API_BEGIN

namespace rt::cpu {

// out = f(x) elementwise.
enum class VecUnary : uint8_t { Exp, Log, Tanh, Sigmoid, Relu, Gelu, GeluTanh, Silu };
inline constexpr int kVecUnaryCount = 8;
// grad_in = f'(saved) * grad_out; saved is the output (Threshold, Sigmoid, Tanh, Exp) or the input.
enum class VecUnaryBackward : uint8_t { Threshold, Sigmoid, Tanh, Exp, Log, Gelu, GeluTanh, Silu };
inline constexpr int kVecUnaryBackwardCount = 8;
// out = a + alpha * b, a - alpha * b, a * b, a / b.
enum class VecBinary : uint8_t { Add, Sub, Mul, Div };

// Adam/AdamW over one contiguous parameter, the arithmetic of kernels/cuda/optimizer_step.h.
// The constants are what the chain of tensor ops computes with: fill them with adam_constants.
template <typename T>
struct AdamStepArgs {
  T* param;
  T* exp_avg;
  T* exp_avg_sq;
  T* max_exp_avg_sq;  // amsgrad; null otherwise
  const T* grad;
  T decay;            // 1 - lr * weight_decay (AdamW)
  T wd;               // weight_decay (Adam: g + wd * p)
  T w1;               // 1 - beta1
  T beta2;
  T w2;               // 1 - beta2
  T bc2_sqrt;         // sqrt(1 - beta2^step)
  T eps;
  T neg_step;         // -lr / (1 - beta1^step)
  bool weight_decay;  // weight_decay != 0
  bool decoupled;     // AdamW
  bool maximize;      // the gradient is negated first
};

// SGD over one contiguous parameter, likewise.
template <typename T>
struct SgdStepArgs {
  T* param;
  T* momentum_buffer;  // null without momentum
  const T* grad;
  T wd;                // weight_decay
  T momentum;
  T w_damp;            // 1 - dampening
  T neg_lr;            // -lr
  bool weight_decay;
  bool nesterov;
  bool first_step;     // the buffer receives g
  bool maximize;
};

struct IsaKernels {
  CpuCapability level;
  void (*unary_f32)(VecUnary op, float* out, const float* x, int64_t n);
  void (*unary_backward_f32)(VecUnaryBackward op, float* grad_in, const float* grad_out, const float* saved, int64_t n);
  // a_step, b_step: 1 for an array, 0 for a scalar read from a[0] / b[0].
  void (*binary_f32)(VecBinary op, float* out, const float* a, int64_t a_step, const float* b, int64_t b_step,
                     int64_t n, float alpha);
  void (*binary_f64)(VecBinary op, double* out, const double* a, int64_t a_step, const double* b, int64_t b_step,
                     int64_t n, double alpha);
  void (*adam_f32)(const AdamStepArgs<float>& a, int64_t begin, int64_t end);
  void (*adam_f64)(const AdamStepArgs<double>& a, int64_t begin, int64_t end);
  void (*sgd_f32)(const SgdStepArgs<float>& a, int64_t begin, int64_t end);
  void (*sgd_f64)(const SgdStepArgs<double>& a, int64_t begin, int64_t end);

  // ---- rows (float32; a row is n contiguous elements, rows one after another) ----
  // softmax (log: log_softmax) of each row: max-shifted, the exp-sum in float lanes per 1024
  // elements added in double.
  void (*softmax_rows_f32)(float* y, const float* x, int64_t rows, int64_t n, bool log);
  // softmax: gx = y * (g - sum(g * y)); log_softmax: gx = g - exp(y) * sum(g); y the forward's output.
  void (*softmax_backward_rows_f32)(float* gx, const float* y, const float* g, int64_t rows, int64_t n, bool log);
  // The same along a strided dim: columns [0, w) of a block whose element (d, j) is at d * stride + j,
  // d in [0, n); each column reduced in float.
  void (*softmax_cols_f32)(float* y, const float* x, int64_t n, int64_t stride, int64_t w, bool log);
  void (*softmax_backward_cols_f32)(float* gx, const float* y, const float* g, int64_t n, int64_t stride, int64_t w,
                                    bool log);
  // layer_norm over rows of d: y = (x - mean) * rstd [* w] [+ b] (w, b may be null), mean and rstd
  // per row (two-pass variance in float lanes, rstd = 1 / sqrt(var + eps)).
  void (*layer_norm_rows_f32)(float* y, double* mean, double* rstd, const float* x, const float* w, const float* b,
                              int64_t rows, int64_t d, float eps);
  // Its backward: dx (may be null) per row; dw += g * xhat and db += g (each may be null) over the rows.
  void (*layer_norm_backward_rows_f32)(float* dx, float* dw, float* db, const float* x, const float* w, const float* g,
                                       const double* mean, const double* rstd, int64_t rows, int64_t d);
  // acc[c] += x[r * stride + c] for r in [0, rows) in that order, c in [0, cols), in double: the same
  // bits at every level.
  void (*sum_cols_f32)(double* acc, const float* x, int64_t rows, int64_t stride, int64_t cols);
  void (*sum_cols_f64)(double* acc, const double* x, int64_t rows, int64_t stride, int64_t cols);
  // Cross entropy's forward per row: lse = log(sum(exp(x))) (max-shifted, as softmax_rows_f32 sums),
  // and, where wdot is not null, wdot = sum(w * x) (w null: sum(x)).
  void (*log_softmax_stats_f32)(double* lse, double* wdot, const float* x, const float* w, int64_t rows, int64_t n);
  // Its backward for one row: gx = exp(x - shift) * scale - wscale * w (w null: - wscale).
  void (*cross_entropy_backward_row_f32)(float* gx, const float* x, const float* w, int64_t n, float shift, float scale,
                                         float wscale);

  // ---- random numbers and dropout (float32, contiguous) ----
  // out[i] = the (i % 4)-th 24-bit uniform in [0, 1) of Philox4x32-10 block (counter + i / 4, key):
  // engine/src/philox.h's generator and random.cpp's float conversion, bit for bit.
  void (*philox_uniform_f32)(float* out, int64_t n, uint64_t counter, uint64_t key);
  // mask[i] = u[i] < keep; out[i] = x[i] * (mask[i] ? scale : 0).
  void (*dropout_f32)(float* out, uint8_t* mask, const float* x, const float* u, int64_t n, float keep, float scale);
  // gx[i] = g[i] * (mask[i] ? scale : 0).
  void (*dropout_backward_f32)(float* gx, const float* g, const uint8_t* mask, int64_t n, float scale);
};

// The table of level `c` (compiled in every build; call its functions only at a level the CPU
// supports, highest_supported_capability()).
const IsaKernels& isa_kernels(CpuCapability c);
// The table of cpu_capability().
inline const IsaKernels& isa_kernels() { return isa_kernels(cpu_capability()); }

// Adam's constants as the chain of ops rounds them to T (the tensor dtype): see optimizer_step.h.
template <typename T>
AdamStepArgs<T> adam_constants(double lr, double beta1, double beta2, double eps, double weight_decay,
                               bool decoupled, bool maximize, double step);
template <typename T>
SgdStepArgs<T> sgd_constants(double lr, double momentum, double dampening, double weight_decay, bool nesterov,
                             bool first_step, bool maximize);

}  // namespace rt::cpu

RT_API_END
