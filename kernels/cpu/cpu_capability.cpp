#include "cpu_capability.h"

#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "rt/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace rt::cpu {

namespace {

#if defined(__x86_64__) || defined(__i386__)
// XCR0: which register states the OS saves on a context switch (xgetbv without -mxsave).
uint64_t read_xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}

bool os_saves(uint64_t mask) {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  if (!(ecx & bit_OSXSAVE)) return false;
  return (read_xcr0() & mask) == mask;
}

CpuCapability detect() {
  __builtin_cpu_init();
  constexpr uint64_t kAvxState = 0x6;     // SSE and AVX (ymm) state
  constexpr uint64_t kAvx512State = 0xe6;  // plus opmask, zmm0-15 upper halves, zmm16-31
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                    __builtin_cpu_supports("f16c") && os_saves(kAvxState);
  if (!avx2) return CpuCapability::Default;
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                      os_saves(kAvx512State);
  return avx512 ? CpuCapability::Avx512 : CpuCapability::Avx2;
}
#else
CpuCapability detect() { return CpuCapability::Default; }
#endif

std::string lower(const char* s) {
  std::string r(s);
  for (char& c : r) c = char(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

constexpr int kUnchosen = -1;
std::atomic<int> g_chosen{kUnchosen};
std::once_flag g_choose_once;

void choose_from_environment() {
  std::string warning;
  const CpuCapability c = choose_capability(std::getenv("RT_CPU_CAPABILITY"), highest_supported_capability(), warning);
  if (!warning.empty()) std::fprintf(stderr, "rustytorch: warning: %s\n", warning.c_str());
  int expected = kUnchosen;
  g_chosen.compare_exchange_strong(expected, int(c));  // a test's set_cpu_capability wins
}

}  // namespace

const char* capability_name(CpuCapability c) {
  switch (c) {
    case CpuCapability::Default: return "DEFAULT";
    case CpuCapability::Avx2: return "AVX2";
    case CpuCapability::Avx512: return "AVX512";
  }
  return "DEFAULT";
}

CpuCapability highest_supported_capability() {
  static const CpuCapability highest = detect();
  return highest;
}

CpuCapability choose_capability(const char* env_value, CpuCapability highest, std::string& warning) {
  warning.clear();
  if (env_value == nullptr || *env_value == '\0') return highest;
  const std::string v = lower(env_value);
  CpuCapability asked;
  if (v == "default") asked = CpuCapability::Default;
  else if (v == "avx2") asked = CpuCapability::Avx2;
  else if (v == "avx512") asked = CpuCapability::Avx512;
  else {
    warning = "ignoring RT_CPU_CAPABILITY=" + std::string(env_value) + ": use default, avx2 or avx512; running at " +
              capability_name(highest) + ", this CPU's highest level";
    return highest;
  }
  if (int(asked) > int(highest)) {
    warning = "RT_CPU_CAPABILITY=" + std::string(env_value) + " asks for " + capability_name(asked) +
              " kernels, but this CPU supports up to " + capability_name(highest) + "; running at " +
              capability_name(highest);
    return highest;
  }
  return asked;
}

CpuCapability cpu_capability() {
  const int c = g_chosen.load(std::memory_order_relaxed);
  if (c != kUnchosen) [[likely]] return CpuCapability(c);
  std::call_once(g_choose_once, choose_from_environment);
  return CpuCapability(g_chosen.load(std::memory_order_relaxed));
}

void set_cpu_capability(CpuCapability c) {
  const CpuCapability highest = highest_supported_capability();
  if (int(c) > int(highest))
    throw ValueError(std::string("set_cpu_capability: this CPU supports up to ") + capability_name(highest) +
                     ", it cannot run " + capability_name(c) + " kernels; choose " + capability_name(highest) +
                     " or lower");
  g_chosen.store(int(c), std::memory_order_relaxed);
}

}  // namespace rt::cpu
