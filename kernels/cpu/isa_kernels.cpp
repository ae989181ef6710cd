#include "isa_kernels.h"

#include <cmath>

// Note [CPU capability dispatch]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The build targets x86-64-v2 so that it runs on any x86-64 machine of the last decade; the hot
// CPU loops are worth AVX2 or AVX-512 where the CPU has them. As ATen does, the sources of
// kernels/cpu/isa/ are compiled three times (engine/CMakeLists.txt: object libraries
// rt_cpu_isa_default, _avx2, _avx512, each with its -m flags and -DRT_CPU_ISA=isa_<level>), and
// every copy fills one IsaKernels table in its own namespace (rt::cpu::isa_avx2::kTable, ...).
// isa_kernels() indexes the three tables with cpu_capability(), chosen once from cpuid/xgetbv
// and RT_CPU_CAPABILITY (cpu_capability.h): one relaxed load per call.
//
// Where it sits: a second level under the CPU slot of the engine's kernel table. An op (or the
// CPU kernel its DispatchStub runs) calls isa_kernels().fn(...) on contiguous memory, split into
// chunks across OpenMP threads on the engine's side (engine/src/ops/isa_loops.h), so the level
// sources contain no OpenMP and no engine code. Ops pass the enum they already hand to their
// CUDA kernel (dispatch::UnaryOp) and the engine maps it to VecUnary; everything else (strided
// views, float16, integer dtypes) runs the generic loops of kernels/cpu/loops.h as before.
//
// The one-definition trap: an inline function or template instantiated in an AVX-512 object is
// emitted as a weak (COMDAT) symbol, and the linker keeps one copy of each weak symbol for the
// whole library, so a default-level caller of std::min<float> or of a header's inline helper
// could end up running the AVX-512 copy and die of SIGILL on an older CPU. So the level sources
// include only kernels/cpu/isa/vec.h (which puts every helper into the level's namespace),
// table.h, this header (declarations and plain structs) and SLEEF's C header, and they use
// compiler builtins instead of <cmath>. tests/architecture/check_isa_symbols.py enforces it:
// every symbol a level's object defines must lie in that level's namespace, and every function
// of librt_engine.so that touches a ymm/zmm register must belong to the AVX2/AVX-512 namespaces.
//
// Results: the sources compile with -ffp-contract=off (no FMA contraction), so elementwise
// arithmetic and the optimizer updates give the same bits at every level, equal to the generic
// loops' and to the chain of ops they replace. exp and log come from SLEEF (u10: 1.0 ulp at every
// width); tanh and erf are pointwise.h's polynomials on vectors over SLEEF's exp (SLEEF's own were
// as accurate and 2-6x slower here). Levels may differ in the last bit (FMA inside SLEEF's AVX2
// and AVX-512 code); tests/engine/test_isa_kernels.cpp checks each level against float64.

namespace rt::cpu {

namespace isa_default { extern const IsaKernels kTable; }
namespace isa_avx2 { extern const IsaKernels kTable; }
namespace isa_avx512 { extern const IsaKernels kTable; }

namespace {
constinit const IsaKernels* const kTables[kCpuCapabilityCount] = {&isa_default::kTable, &isa_avx2::kTable,
                                                                   &isa_avx512::kTable};
}  // namespace

const IsaKernels& isa_kernels(CpuCapability c) { return *kTables[int(c)]; }

template <typename T>
AdamStepArgs<T> adam_constants(double lr, double beta1, double beta2, double eps, double weight_decay,
                               bool decoupled, bool maximize, double step) {
  // Bias corrections in double on the host, as engine/src/optim/functional.cpp computes them.
  const double step_size = lr / (1.0 - std::pow(beta1, step));
  const double bias_correction2_sqrt = std::sqrt(1.0 - std::pow(beta2, step));
  AdamStepArgs<T> a{};
  a.decay = T(1.0 - lr * weight_decay);
  a.wd = T(weight_decay);
  a.w1 = T(1.0 - beta1);
  a.beta2 = T(beta2);
  a.w2 = T(1.0 - beta2);
  a.bc2_sqrt = T(bias_correction2_sqrt);
  a.eps = T(eps);
  a.neg_step = T(-step_size);
  a.weight_decay = weight_decay != 0.0;
  a.decoupled = decoupled;
  a.maximize = maximize;
  return a;
}

template <typename T>
SgdStepArgs<T> sgd_constants(double lr, double momentum, double dampening, double weight_decay, bool nesterov,
                             bool first_step, bool maximize) {
  SgdStepArgs<T> a{};
  a.wd = T(weight_decay);
  a.momentum = T(momentum);
  a.w_damp = T(1.0 - dampening);
  a.neg_lr = T(-lr);
  a.weight_decay = weight_decay != 0.0;
  a.nesterov = nesterov;
  a.first_step = first_step;
  a.maximize = maximize;
  return a;
}

template AdamStepArgs<float> adam_constants<float>(double, double, double, double, double, bool, bool, double);
template AdamStepArgs<double> adam_constants<double>(double, double, double, double, double, bool, bool, double);
template SgdStepArgs<float> sgd_constants<float>(double, double, double, double, bool, bool, bool);
template SgdStepArgs<double> sgd_constants<double>(double, double, double, double, bool, bool, bool);

}  // namespace rt::cpu
