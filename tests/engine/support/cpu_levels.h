// Helpers for tests that run a kernel at every CPU capability level this machine supports:
//
//   for (CpuCapability c : supported_levels()) {
//     LevelGuard restore;                    // the process's own level comes back at scope exit
//     rt::cpu::set_cpu_capability(c);
//     ...
//   }
#pragma once
#include <vector>

#include "cpu/cpu_capability.h"

namespace rt::testing {

inline std::vector<rt::cpu::CpuCapability> supported_levels() {
  std::vector<rt::cpu::CpuCapability> r;
  for (int c = 0; c <= int(rt::cpu::highest_supported_capability()); ++c) r.push_back(rt::cpu::CpuCapability(c));
  return r;
}

// Restores the level the process chose when a test that forces one ends.
struct LevelGuard {
  rt::cpu::CpuCapability saved = rt::cpu::cpu_capability();
  ~LevelGuard() { rt::cpu::set_cpu_capability(saved); }
};

}  // namespace rt::testing
