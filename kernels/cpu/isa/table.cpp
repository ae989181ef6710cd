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
};

}  // namespace rt::cpu::RT_CPU_ISA
