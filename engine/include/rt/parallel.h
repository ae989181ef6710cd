// rt/parallel.h — how many CPU threads the engine's kernels use (PyTorch's torch.set_num_threads).
//
//   rt::set_num_threads(4);          // kernels split work of at least 32768 elements over 4 threads
//   int n = rt::get_num_threads();   // 4; before any call, OpenMP's default (OMP_NUM_THREADS or the cores)
//
// Results never depend on the thread count (kernels split work by element ranges). OpenBLAS keeps
// its own count (openblas_set_num_threads); `rtorch --threads N` sets both.
#pragma once
#include "rt/export.h"

RT_API_BEGIN

namespace rt {

// n > 0 sets the count (and OpenMP's); n <= 0 returns to OpenMP's default.
void set_num_threads(int n);
int get_num_threads();

}  // namespace rt

RT_API_END
