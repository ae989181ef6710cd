// kernels/cuda/row_plan.h — how a row-wise kernel (softmax, layer_norm) holds a whole row in registers:
// one read of the row from memory and one write, however many passes the arithmetic makes. Rows up to
// 1024 elements get a warp each (plan_row_per_warp), longer ones a block (plan_row_in_registers below).
//
//   const RowPlan p = plan_row_in_registers(/*n=*/4096, /*elem_bytes=*/4, /*max_vecs=*/8);
//   // p.vecs == 4, p.threads == 256: a block of 256 threads per row, 4 16-byte packs each
//   switch (p.vecs) { case 4: RT_LAUNCH(rows, p.threads, stream, kernel<float, 4>)(x, y, p.packs); ... }
//
// A row of n elements of elem_bytes each is packs = n * elem_bytes / 16 16-byte packs; thread t of the
// row's block holds packs t, t + threads, ..., t + (vecs - 1) * threads (neighbouring threads read
// neighbouring packs). The plan takes the fewest packs per thread (1, 2, 4, 8, ... up to max_vecs) that
// keeps the block at kRowTargetThreads threads or fewer, so that several rows share a multiprocessor and
// hide each other's reductions; failing that, max_vecs packs and up to 1024 threads. vecs == 0 when the
// row is not a whole number of packs or needs more than 1024 * max_vecs packs: the caller then uses a
// kernel that streams the row instead. Plain C++ (no CUDA headers): tests/kernels/test_row_plan.cpp checks it
// without a GPU.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>

#include "rt/error.h"

namespace rt::cuda_kernels {

inline constexpr int kRowTargetThreads = 256;
inline constexpr int kRowMaxThreads = 1024;
inline constexpr int kRowSharedThreads = 512;  // blocks of a plan with shared_vecs: two share a multiprocessor

// The most packs per thread the row kernels are instantiated for, by element size and the number of rows
// a thread holds (1: softmax/layer_norm forward; 2: a backward holding the row and its gradient): 8 for
// one float32 row (rows up to 32768 elements), 4 for the other types, halved for two rows. That keeps
// 1024-thread blocks within their 64 registers per thread without spills (checked with -Xptxas -v).
constexpr int max_row_vecs(int elem_bytes, int rows_held) { return (elem_bytes == 4 ? 8 : 4) / rows_held; }

struct RowPlan {
  int vecs = 0;     // 16-byte packs per thread: a power of two up to max_vecs; 0: the row does not fit
  int threads = 0;  // block size: a multiple of 32, at most 1024
  int64_t packs = 0;  // 16-byte packs per row
  // Packs per thread kept in shared memory after the `vecs` in registers (with_shared_half); 0: none.
  // Thread t's shared packs are row packs vecs * threads + t + k * threads, k < shared_vecs.
  int shared_vecs = 0;

  int64_t shared_bytes() const { return int64_t(shared_vecs) * threads * 16; }
};

// max_vecs: a power of two >= 1, the most packs a kernel instantiation keeps per thread.
constexpr RowPlan plan_row_in_registers(int64_t n, int elem_bytes, int max_vecs) {
  if (n <= 0 || elem_bytes <= 0 || (n * elem_bytes) % 16 != 0) return {};
  const int64_t packs = n * elem_bytes / 16;
  auto round32 = [](int64_t t) { return int((t + 31) / 32 * 32); };
  for (int vecs = 1; vecs <= max_vecs; vecs *= 2) {
    const int64_t threads = (packs + vecs - 1) / vecs;
    if (threads <= kRowTargetThreads) return {vecs, round32(threads), packs};
  }
  int top = 1;
  while (top * 2 <= max_vecs) top *= 2;
  const int64_t threads = (packs + top - 1) / top;
  if (threads > kRowMaxThreads) return {};
  return {top, round32(threads), packs};
}

// A plan whose block needs more than kRowSharedThreads threads (one block then fills a multiprocessor's
// registers, and its loads, arithmetic and stores cannot overlap another row's), redone with each thread
// holding as many packs again in shared memory: at most 512 threads and 64 registers each, so two blocks
// (two rows) share a multiprocessor. Other plans are returned as they are.
constexpr RowPlan with_shared_half(const RowPlan& p) {
  if (p.vecs == 0 || p.threads <= kRowSharedThreads) return p;
  const int64_t threads = (p.packs + 2 * p.vecs - 1) / (2 * p.vecs);
  return {p.vecs, int((threads + 31) / 32 * 32), p.packs, p.vecs};
}

// Packs per lane the warp-row kernels are instantiated for, every element type and direction: their
// 128-thread blocks may use up to 255 registers a thread, so a float32 row of 1024 elements (8 packs
// a lane) fits even when a backward holds it twice.
inline constexpr int kWarpRowMaxVecs = 8;

// Short rows, a warp each (32 lanes; several rows per block): the fewest packs per lane, a power of two
// up to max_vecs, that hold the row; vecs == 0 when the row is not a whole number of packs or longer
// than 32 * max_vecs packs. threads is 32, the warp.
constexpr RowPlan plan_row_per_warp(int64_t n, int elem_bytes, int max_vecs) {
  if (n <= 0 || elem_bytes <= 0 || (n * elem_bytes) % 16 != 0) return {};
  const int64_t packs = n * elem_bytes / 16;
  for (int vecs = 1; vecs <= max_vecs; vecs *= 2)
    if (packs <= int64_t(32) * vecs) return {vecs, 32, packs};
  return {};
}

// True when every base pointer is 16-byte aligned (nullptr counts as aligned: an absent tensor). Each
// row then starts aligned too when the row length is a whole number of packs.
inline bool aligned16(std::initializer_list<const void*> bases) {
  for (const void* p : bases)
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0) return false;
  return true;
}

// The plans for rows of tensors whose bases are 16-byte aligned: a block per row, or a warp per row.
inline RowPlan aligned_row_plan(int64_t n, int elem_bytes, int max_vecs, std::initializer_list<const void*> bases) {
  return aligned16(bases) ? plan_row_in_registers(n, elem_bytes, max_vecs) : RowPlan{};
}
inline RowPlan aligned_warp_plan(int64_t n, int elem_bytes, int max_vecs, std::initializer_list<const void*> bases) {
  return aligned16(bases) ? plan_row_per_warp(n, elem_bytes, max_vecs) : RowPlan{};
}

// Calls f.template operator()<kVecs>() with the plan's packs per thread as a constant (1, 2, 4 and,
// when kMaxVecs allows, 8): the kernels are instantiated for these.
template <int kMaxVecs, typename F>
void visit_row_vecs(int vecs, F&& f) {
  if (vecs == 1) return f.template operator()<1>();
  if (vecs == 2) return f.template operator()<2>();
  if constexpr (kMaxVecs >= 4)
    if (vecs == 4) return f.template operator()<4>();
  if constexpr (kMaxVecs >= 8)
    if (vecs == 8) return f.template operator()<8>();
  throw Error("row kernel: no instantiation keeps " + std::to_string(vecs) + " packs per thread (at most " +
              std::to_string(kMaxVecs) + ")");
}

}  // namespace rt::cuda_kernels
