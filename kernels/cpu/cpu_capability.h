// kernels/cpu/cpu_capability.h — which instruction-set level the CPU kernels run at.
//
//   rt::cpu::CpuCapability c = rt::cpu::cpu_capability();       // Avx512 on a Sapphire Rapids
//   std::puts(rt::cpu::capability_name(c));                       // "AVX512"
//   rt::cpu::highest_supported_capability();                      // what this CPU and OS can run
//   // RT_CPU_CAPABILITY=avx2 in the environment (case-insensitive: default|avx2|avx512) forces a level.
//
// The kernels of kernels/cpu/isa/ are compiled once per level (default: the build's x86-64-v2;
// AVX2: -mavx2 -mfma -mf16c; AVX512: AVX2's plus -mavx512f/bw/vl/dq) and isa_kernels.h's table
// picks the chosen level's. The level is chosen once, on first use: the highest the CPU supports
// (cpuid, and xgetbv for the OS saving the AVX/AVX-512 registers), or RT_CPU_CAPABILITY's. As
// PyTorch's ATEN_CPU_CAPABILITY, a value that is not a level name is ignored with a warning; a
// level above the CPU's (which PyTorch would run into SIGILL) is lowered to the CPU's highest,
// also with a warning naming both. Warnings go to stderr once.
// See Note [CPU capability dispatch] in kernels/cpu/isa_kernels.cpp.
#pragma once
#include <string>

#include "rt/export.h"

RT_API_BEGIN

namespace rt::cpu {

enum class CpuCapability : int { Default = 0, Avx2 = 1, Avx512 = 2 };
inline constexpr int kCpuCapabilityCount = 3;

// PyTorch's names: "DEFAULT", "AVX2", "AVX512".
const char* capability_name(CpuCapability c);

// The highest level this CPU (and the OS's register saving) can run.
CpuCapability highest_supported_capability();

// The level a value of RT_CPU_CAPABILITY selects on a CPU whose highest level is `highest`
// (value null or empty: `highest`); `warning` receives the message for a value that was ignored
// or lowered, and is left empty otherwise.
CpuCapability choose_capability(const char* env_value, CpuCapability highest, std::string& warning);

// The level the kernels run at: chosen on the first call (see above), then fixed unless a test
// forces another with set_cpu_capability.
CpuCapability cpu_capability();

// Tests and benchmarks: run the kernels at level `c` from now on (every thread). Throws
// rt::ValueError when this CPU cannot run `c`. Not for use while other threads run kernels.
void set_cpu_capability(CpuCapability c);

}  // namespace rt::cpu

RT_API_END
