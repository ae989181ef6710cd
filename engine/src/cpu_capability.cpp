#include "rt/cpu_capability.h"

#include "cpu/cpu_capability.h"

namespace rt {

std::string cpu_capability() { return cpu::capability_name(cpu::cpu_capability()); }

std::string cpu_capability_supported() { return cpu::capability_name(cpu::highest_supported_capability()); }

}  // namespace rt
