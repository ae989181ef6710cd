// This level's IsaKernels table (kernels/cpu/isa_kernels.h).
#include "table.h"

namespace rt::cpu::RT_CPU_ISA {

#if defined(__AVX512F__)
constexpr CpuCapability kLevel = CpuCapability::Avx512;
#elif defined(__AVX2__)
constexpr CpuCapability kLevel = CpuCapability::Avx2;
#else
constexpr CpuCapability kLevel = CpuCapability::Default;
#endif

constinit const IsaKernels kTable{
    .level = kLevel,
    .unary_f32 = unary_f32,
    .unary_backward_f32 = unary_backward_f32,
    .binary_f32 = binary_f32,
    .binary_f64 = binary_f64,
    .adam_f32 = adam_f32,
    .adam_f64 = adam_f64,
    .sgd_f32 = sgd_f32,
    .sgd_f64 = sgd_f64,
    .softmax_rows_f32 = softmax_rows_f32,
    .softmax_backward_rows_f32 = softmax_backward_rows_f32,
    .softmax_cols_f32 = softmax_cols_f32,
    .softmax_backward_cols_f32 = softmax_backward_cols_f32,
    .layer_norm_rows_f32 = layer_norm_rows_f32,
    .layer_norm_backward_rows_f32 = layer_norm_backward_rows_f32,
    .sum_cols_f32 = sum_cols_f32,
    .sum_cols_f64 = sum_cols_f64,
    .log_softmax_stats_f32 = log_softmax_stats_f32,
    .cross_entropy_backward_row_f32 = cross_entropy_backward_row_f32,
    .philox_uniform_f32 = philox_uniform_f32,
    .dropout_f32 = dropout_f32,
    .dropout_backward_f32 = dropout_backward_f32,
};

}  // namespace rt::cpu::RT_CPU_ISA
