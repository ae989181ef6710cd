// app/cli/thread_settings.h — the global `--threads N` option.
//
//   app.add_option("--threads", opts.threads)->check(thread_count_validator());
//   if (opts.threads > 0) apply_thread_count(opts.threads);
//
// apply_thread_count sets the engine's CPU thread count (rt::set_num_threads, which also sets OpenMP's),
// OpenBLAS's, and OMP_NUM_THREADS / OPENBLAS_NUM_THREADS for child processes (bench runs rt_bench and
// PyTorch in subprocesses). Call it on the thread that runs Python and the engine (the main thread).
#pragma once
#include <CLI/CLI.hpp>

namespace rt::cli {

// Accepts integers 1..4096; otherwise says what is wrong and gives an example.
CLI::Validator thread_count_validator();

void apply_thread_count(int n);

}  // namespace rt::cli
