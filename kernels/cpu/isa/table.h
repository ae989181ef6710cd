// The functions of one level's IsaKernels table (kernels/cpu/isa_kernels.h), declared in the
// level's namespace; table.cpp collects them. For kernels/cpu/isa/ sources only.
#pragma once
#ifndef RT_CPU_ISA
#error "kernels/cpu/isa/ sources compile once per level with -DRT_CPU_ISA=isa_default|isa_avx2|isa_avx512"
#endif
#include "../isa_kernels.h"

namespace rt::cpu::RT_CPU_ISA {

void unary_f32(VecUnary op, float* out, const float* x, int64_t n);
void unary_backward_f32(VecUnaryBackward op, float* grad_in, const float* grad_out, const float* saved, int64_t n);
void binary_f32(VecBinary op, float* out, const float* a, int64_t a_step, const float* b, int64_t b_step, int64_t n,
                float alpha);
void binary_f64(VecBinary op, double* out, const double* a, int64_t a_step, const double* b, int64_t b_step,
                int64_t n, double alpha);
void adam_f32(const AdamStepArgs<float>& a, int64_t begin, int64_t end);
void adam_f64(const AdamStepArgs<double>& a, int64_t begin, int64_t end);
void sgd_f32(const SgdStepArgs<float>& a, int64_t begin, int64_t end);
void sgd_f64(const SgdStepArgs<double>& a, int64_t begin, int64_t end);
void softmax_rows_f32(float* y, const float* x, int64_t rows, int64_t n, bool log);
void softmax_backward_rows_f32(float* gx, const float* y, const float* g, int64_t rows, int64_t n, bool log);
void softmax_cols_f32(float* y, const float* x, int64_t n, int64_t stride, int64_t w, bool log);
void softmax_backward_cols_f32(float* gx, const float* y, const float* g, int64_t n, int64_t stride, int64_t w,
                               bool log);
void layer_norm_rows_f32(float* y, double* mean, double* rstd, const float* x, const float* w, const float* b,
                         int64_t rows, int64_t d, float eps);
void layer_norm_backward_rows_f32(float* dx, float* dw, float* db, const float* x, const float* w, const float* g,
                                  const double* mean, const double* rstd, int64_t rows, int64_t d);
void sum_cols_f32(double* acc, const float* x, int64_t rows, int64_t stride, int64_t cols);
void sum_cols_f64(double* acc, const double* x, int64_t rows, int64_t stride, int64_t cols);
void log_softmax_stats_f32(double* lse, double* wdot, const float* x, const float* w, int64_t rows, int64_t n);
void cross_entropy_backward_row_f32(float* gx, const float* x, const float* w, int64_t n, float shift, float scale,
                                    float wscale);
void philox_uniform_f32(float* out, int64_t n, uint64_t counter, uint64_t key);
void dropout_f32(float* out, uint8_t* mask, const float* x, const float* u, int64_t n, float keep, float scale);
void dropout_backward_f32(float* gx, const float* g, const uint8_t* mask, int64_t n, float scale);

// This level's table.
extern const IsaKernels kTable;

}  // namespace rt::cpu::RT_CPU_ISA
