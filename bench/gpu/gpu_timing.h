// gpu_timing.h — CUDA-event timing and result checks for bench/gpu/gpu_bench.cpp.
//
//   gpu_timing::Timing t = gpu_timing::time_cuda([&] { c = a + b; }, {.warmup = 5, .runs = 30});
//   std::printf("median %.3f ms (min %.3f, max %.3f)\n", t.median_ms, t.min_ms, t.max_ms);
//   double err = gpu_timing::rel_err(c.narrow(0, 0, 4096), reference);  // ||c - ref|| / ||ref||, in float64
//
// Method (.library METHOD.md): warm-up runs first (cuBLAS handles, allocator blocks, module load),
// then each run between its own pair of events on the current stream, all runs queued back to back,
// one wait at the end; the median is the figure, min and max show the spread. A run includes every
// launch gap the host leaves, so a launch-bound workload (a small MLP step) reads as the host's pace.
#pragma once
#include <functional>

#include "rt/cuda.h"
#include "rt/rt.h"

namespace gpu_timing {

struct Options {
  int warmup = 5;
  int runs = 30;
};

struct Timing {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int runs = 0;
};

Timing time_cuda(const std::function<void()>& fn, const Options& options);

// ||out - ref|| / ||ref|| with both converted to float64 on the CPU; NaN anywhere gives NaN.
double rel_err(const rt::Tensor& out, const rt::Tensor& ref);

}  // namespace gpu_timing
