// The emulator's kernel execution (kernels/cuda_emulator/block_runner.cpp, device.h): indices,
// barriers, shuffles, shared memory, atomics, launch configuration errors, and the undefined
// behaviour it reports instead of computing something.
#include "cuda_emulator/device.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <vector>

namespace emu = rt::cuda_emulator;

namespace {

// Launches kernel(args...) with `config`; returns what cudaGetLastError reports afterwards.
template <typename Kernel, typename... Args>
cudaError_t run(const emu::LaunchConfig& config, Kernel kernel, Args... args) {
  cudaGetLastError();
  emu::launch("test kernel", config, nullptr, [&](auto&... a) { kernel(a...); }, args...);
  return cudaGetLastError();
}

void write_global_index(int* out, int n) {
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = i;
}

void write_3d_position(int* out) {
  const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  out[b * (blockDim.x * blockDim.y * blockDim.z) + t] = int(b * 1000 + t);
}

// Each thread reads its neighbour's shared slot: right only with the barrier between.
void rotate_through_shared(int* out, bool with_barrier, int salt) {
  __shared__ int slots[64];
  const int t = int(threadIdx.x);
  slots[t] = t + salt;
  if (with_barrier) __syncthreads();
  out[t] = slots[(t + 1) % int(blockDim.x)];
  if (!with_barrier) __syncthreads();  // so the next block's writes cannot reach this one's reads either
}

void warp_sum(float* out) {
  float v = float(threadIdx.x % 32 + 1);
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  out[threadIdx.x] = v;
}

void shuffle_down_and_up(int* out) {
  const int lane = int(threadIdx.x % 32);
  out[2 * threadIdx.x] = __shfl_down_sync(0xffffffffu, lane * 10, 3);
  out[2 * threadIdx.x + 1] = __shfl_up_sync(0xffffffffu, lane * 10, 3, 8);
}

void shuffle_after_half_the_warp_returned(int* out) {
  if (threadIdx.x >= 16) return;
  out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, int(threadIdx.x), 1);
}

void shuffle_with_the_half_warp_mask(int* out) {
  if (threadIdx.x >= 16) return;
  out[threadIdx.x] = __shfl_xor_sync(0x0000ffffu, int(threadIdx.x), 1);
}

void shuffle_reading_outside_the_mask(int* out) {
  if (threadIdx.x >= 16) return;
  out[threadIdx.x] = __shfl_xor_sync(0x0000ffffu, int(threadIdx.x), 16);  // lane 16 is not in the mask
}

// Half of each warp waits at __syncthreads, the other half at a shuffle that names all 32 lanes.
void barrier_in_one_branch(int* out) {
  if (threadIdx.x % 32 < 16) {
    __syncthreads();
  } else {
    out[0] += __shfl_xor_sync(0xffffffffu, 1, 1);
    __syncthreads();
  }
}

void barrier_after_some_returned(int* out) {
  __shared__ int total;
  if (threadIdx.x == 0) total = 0;
  __syncthreads();
  if (threadIdx.x % 2) return;  // returned threads count as arrived at later barriers
  atomicAdd(&total, 1);
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = total;
}

void sum_dynamic_shared(float* out, const float* in) {
  float* tile = static_cast<float*>(emu::dynamic_shared_memory());
  tile[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (unsigned i = 0; i < blockDim.x; ++i) s += tile[i];
    out[blockIdx.x] = s;
  }
}

void count_into(unsigned long long* counter, double* total) {
  atomicAdd(counter, 1ull);
  atomicAdd(total, 0.5);
}

}  // namespace

TEST_CASE("every thread of every block runs once, with its indices") {
  std::vector<int> out(1000, -1);
  REQUIRE(run(emu::config(4, 256), write_global_index, out.data(), 1000) == cudaSuccess);
  std::vector<int> expected(1000);
  std::iota(expected.begin(), expected.end(), 0);
  CHECK(out == expected);

  std::vector<int> positions(2 * 3 * 4 * 8, -1);
  REQUIRE(run(emu::config(dim3(2, 3), dim3(2, 2, 2)), write_3d_position, positions.data()) == cudaSuccess);
  for (int b = 0; b < 6; ++b)
    for (int t = 0; t < 8; ++t) CHECK(positions[size_t(b * 8 + t)] == b * 1000 + t);
}

TEST_CASE("shared memory written by other threads is seen only after __syncthreads") {
  std::vector<int> out(64, -1);
  REQUIRE(run(emu::config(1, 64), rotate_through_shared, out.data(), true, 1) == cudaSuccess);
  for (int t = 0; t < 64; ++t) CHECK(out[size_t(t)] == (t + 1) % 64 + 1);

  // Without the barrier thread t reads before thread t + 1 has written: it sees what the previous
  // launch left there, not this launch's value (t + 1 + 100).
  std::vector<int> racy(64, -1);
  REQUIRE(run(emu::config(1, 64), rotate_through_shared, racy.data(), false, 100) == cudaSuccess);
  CHECK(racy[0] == 2);
  CHECK(racy[62] == 64);
  CHECK(racy[63] == 100);  // thread 0 wrote slot 0 before thread 63 ran
}

TEST_CASE("warp shuffles exchange values between lanes") {
  std::vector<float> sums(64);
  REQUIRE(run(emu::config(1, 64), warp_sum, sums.data()) == cudaSuccess);
  for (float s : sums) CHECK(s == 528.f);  // 1 + ... + 32 in every lane of both warps

  std::vector<int> out(64);
  REQUIRE(run(emu::config(1, 32), shuffle_down_and_up, out.data()) == cudaSuccess);
  for (int lane = 0; lane < 32; ++lane) {
    CHECK(out[size_t(2 * lane)] == (lane + 3 < 32 ? lane + 3 : lane) * 10);         // past the end: own value
    CHECK(out[size_t(2 * lane + 1)] == (lane % 8 >= 3 ? lane - 3 : lane) * 10);     // width 8 segments
  }

  std::vector<int> half(16, -1);
  REQUIRE(run(emu::config(1, 32), shuffle_with_the_half_warp_mask, half.data()) == cudaSuccess);
  for (int lane = 0; lane < 16; ++lane) CHECK(half[size_t(lane)] == (lane ^ 1));
}

TEST_CASE("what a GPU leaves undefined fails the launch") {
  std::vector<int> out(64, 0);
  CHECK(run(emu::config(1, 32), shuffle_after_half_the_warp_returned, out.data()) == cudaErrorLaunchFailure);
  CHECK(run(emu::config(1, 32), shuffle_reading_outside_the_mask, out.data()) == cudaErrorLaunchFailure);
  CHECK(run(emu::config(1, 64), barrier_in_one_branch, out.data()) == cudaErrorLaunchFailure);
  CHECK(run(emu::config(1, 16), warp_sum, reinterpret_cast<float*>(out.data())) == cudaErrorLaunchFailure);  // lanes 16-31 don't exist
  // The runner recovers: the next launch on the same thread works.
  std::vector<float> sums(32);
  CHECK(run(emu::config(1, 32), warp_sum, sums.data()) == cudaSuccess);
  CHECK(sums[0] == 528.f);
}

TEST_CASE("threads that returned count as arrived at __syncthreads") {
  std::vector<int> out(3, -1);
  REQUIRE(run(emu::config(3, 96), barrier_after_some_returned, out.data()) == cudaSuccess);
  CHECK(out == std::vector<int>{48, 48, 48});
}

TEST_CASE("dynamic shared memory: the launch's bytes, up to the kernel's limit") {
  std::vector<float> in(512), out(4);
  std::iota(in.begin(), in.end(), 0.f);
  REQUIRE(run(emu::config(4, 128, 128 * sizeof(float)), sum_dynamic_shared, out.data(), in.data()) == cudaSuccess);
  for (int b = 0; b < 4; ++b) CHECK(out[size_t(b)] == float(128 * 128 * b + 127 * 128 / 2));
  // More than 48 KiB needs cudaFuncSetAttribute for this kernel (looked up by its address).
  cudaGetLastError();
  emu::launch("big", emu::config(1, 32, 64 * 1024), reinterpret_cast<const void*>(&sum_dynamic_shared),
              [&](auto&... a) { sum_dynamic_shared(a...); }, out.data(), in.data());
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);
}

TEST_CASE("atomics add across all threads of the grid") {
  unsigned long long counter = 0;
  double total = 0;
  REQUIRE(run(emu::config(10, 100), count_into, &counter, &total) == cudaSuccess);
  CHECK(counter == 1000);
  CHECK(total == 500.0);
}

TEST_CASE("bad launch configurations are refused as CUDA refuses them") {
  std::vector<int> out(4096);
  CHECK(run(emu::config(1, 1025), write_global_index, out.data(), 0) == cudaErrorInvalidConfiguration);
  CHECK(run(emu::config(1, dim3(32, 32, 2)), write_global_index, out.data(), 0) == cudaErrorInvalidConfiguration);
  CHECK(run(emu::config(0, 32), write_global_index, out.data(), 0) == cudaErrorInvalidConfiguration);
  CHECK(run(emu::config(dim3(1, 65536), 32), write_global_index, out.data(), 0) == cudaErrorInvalidConfiguration);
  CHECK(out[0] == 0);  // nothing ran
}

TEST_CASE("CUDA's min and max of mixed types, and round-to-nearest intrinsics") {
  CHECK(min(int64_t(-3), 2) == -3);
  CHECK(max(2u, 7ull) == 7ull);
  CHECK(__umulhi(0x80000000u, 6u) == 3u);
  CHECK(__fmul_rn(0.1f, 3.f) == 0.1f * 3.f);
}

namespace {

// Two block-wide sums through one shared array, as block_all_reduce does; `barrier_before_write`
// is the __syncthreads that keeps the second sum's writes from overtaking the first sum's reads.
void sum_twice(float* out, bool barrier_before_write) {
  __shared__ float partial[8];
  const int lane = int(threadIdx.x % 32), warp = int(threadIdx.x / 32), warps = int(blockDim.x / 32);
  float total = 0;
  for (int call = 0; call < 2; ++call) {
    float v = float(call + 1);
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    if (barrier_before_write) __syncthreads();
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    float s = lane < warps ? partial[lane] : 0.f;
    for (int offset = 16; offset > 0; offset /= 2) s += __shfl_xor_sync(0xffffffffu, s, offset);
    total += s;
  }
  out[threadIdx.x] = total;
}

}  // namespace

TEST_CASE("a warp runs ahead of the others between barriers, so a missing __syncthreads shows") {
  // 4 warps: the sums are 4 * 32 * 1 and 4 * 32 * 2, so every thread should hold 384.
  std::vector<float> out(128);
  REQUIRE(run(emu::config(1, 128), sum_twice, out.data(), true) == cudaSuccess);
  for (float v : out) CHECK(v == 384.f);
  // Without the barrier the first warp writes its second partial before the others read the first.
  REQUIRE(run(emu::config(1, 128), sum_twice, out.data(), false) == cudaSuccess);
  CHECK(std::count(out.begin(), out.end(), 384.f) < 128);
}
