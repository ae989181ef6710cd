// rt/cpu_capability.h — the instruction-set level the CPU kernels run at (PyTorch's
// torch.backends.cpu.get_cpu_capability()).
//
//   std::string level = rt::cpu_capability();          // "AVX512", "AVX2" or "DEFAULT"
//   std::string best = rt::cpu_capability_supported();  // the highest this CPU (and OS) can run
//
// The level is chosen on first use: the CPU's highest, or RT_CPU_CAPABILITY=default|avx2|avx512
// (case-insensitive) to force a lower one. A value above the CPU's highest, or not a level name, is
// replaced by the CPU's highest with a warning on stderr. See kernels/cpu/cpu_capability.h.
#pragma once
#include <string>

#include "rt/export.h"

RT_API_BEGIN

namespace rt {

std::string cpu_capability();
std::string cpu_capability_supported();

}  // namespace rt

RT_API_END
