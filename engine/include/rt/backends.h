// rt/backends.h — switches that choose how ops compute (PyTorch's torch.backends.*).
//
//   rt::backends::mkldnn::set_enabled(false);   // CPU conv2d/conv1d back on im2col + GEMM, avg_pool2d on loops
//   bool on = rt::backends::mkldnn::enabled();  // at start-up: RT_ONEDNN=0 off, unset or 1 on
//   std::string v = rt::backends::mkldnn::version();   // "2.6.3 (OpenMP, avx512_core_amx)"
//   rt::backends::cpu::set_fuse_linear_activation(false);  // nn::Sequential runs Linear, then ReLU
//
// mkldnn is oneDNN, PyTorch's name for it. While enabled, float32 CPU convolutions (forward, input,
// weight and bias gradients; bfloat16 ones in bfloat16 where the CPU has fast kernels for it, else in
// float32, as float16 ones) and float32 avg_pool2d
// (forward, backward) run through oneDNN; any geometry oneDNN has only reference code for, and float64,
// runs the engine's own code (im2col + GEMM, loops) as before. Which one ran shows in a profile as a
// nested op: under conv2d "mkldnn_convolution" or "_slow_conv2d_forward", under convolution_backward
// "mkldnn_convolution_backward" or "_slow_conv2d_backward" (PyTorch's names), under avg_pool2d(_backward)
// "mkldnn_avg_pool2d(_backward)" when oneDNN ran (docs/cpu-convolutions.md). The switch is process-wide
// and may be flipped at any time; an op already running finishes on the path it chose.
#pragma once
#include <string>

#include "rt/export.h"

RT_API_BEGIN

namespace rt::backends::mkldnn {

bool is_available();        // oneDNN is compiled in (always, in this build)
bool enabled();
void set_enabled(bool enabled);
std::string version();      // oneDNN's version, threading runtime and instruction set in use

}  // namespace rt::backends::mkldnn

// Whether nn::Sequential (C++ and Python) runs a Linear and the activation after it as one
// rt::linear_pointwise (rt/ops/linear_pointwise.h). On by default; RT_FUSE_LINEAR_ACTIVATION=0 in the
// environment starts a process with it off. Process-wide, read at each Sequential forward.
namespace rt::backends::cpu {

bool fuse_linear_activation();
void set_fuse_linear_activation(bool on);

}  // namespace rt::backends::cpu

RT_API_END
