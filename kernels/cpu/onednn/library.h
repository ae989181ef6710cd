// kernels/cpu/onednn/library.h — which oneDNN this build runs on (rtorch info prints it).
//
//   std::string v = rt::cpu::onednn::version();   // "2.6.3 (OpenMP, avx512_core_amx)"
#pragma once
#include <string>

#include "rt/export.h"

RT_API_BEGIN

namespace rt::cpu::onednn {

// The loaded library's version, its CPU threading runtime and the instruction set its kernels use here.
std::string version();

}  // namespace rt::cpu::onednn

RT_API_END
