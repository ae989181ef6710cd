// The emulator's kernel execution (kernels/cuda_emulator/block_runner.cpp, device.h) through CUDA
// source: this file's kernels launch and declare shared memory with kernels/cuda/kernel_macros.cuh,
// and compile with device.h as kernels/cuda/*.cu do. Indices, barriers,
// shuffles (PTX's lane rules), shared memory, atomics, launch errors, and the undefined behaviour
// the emulator reports instead of computing something.
#include <catch2/catch.hpp>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "cuda/kernel_macros.cuh"
#include "cuda_emulator/device.h"

namespace {

// Launches kernel(args...) and returns what cudaGetLastError reports afterwards.
template <typename... Params, typename... Args>
cudaError_t run(dim3 grid, dim3 block, void (*kernel)(Params...), Args... args) {
  cudaGetLastError();
  RT_LAUNCH(grid, block, nullptr, kernel)(args...);
  return cudaGetLastError();
}

template <typename... Params, typename... Args>
cudaError_t run_with_shared(dim3 grid, dim3 block, size_t shared_bytes, void (*kernel)(Params...), Args... args) {
  cudaGetLastError();
  RT_LAUNCH_WITH_SHARED(grid, block, shared_bytes, nullptr, kernel)(args...);
  return cudaGetLastError();
}

__global__ void write_global_index(int* out, int n) {
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = i;
}

__global__ void write_3d_position(int* out) {
  const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  out[b * (blockDim.x * blockDim.y * blockDim.z) + t] = int(b * 1000 + t);
}

// Each thread reads its neighbour's shared slot: right only with the barrier between.
__global__ void rotate_through_shared(int* out, bool with_barrier) {
  RT_SHARED(slots, int[64]);
  const int t = int(threadIdx.x);
  slots[t] = t + 100;
  if (with_barrier) __syncthreads();
  out[t] = slots[(t + 1) % int(blockDim.x)];
}

__global__ void read_shared_before_writing(int* out) {
  RT_SHARED(slot, int);
  RT_SHARED(value, float);
  if (threadIdx.x == 0) out[2 * blockIdx.x] = slot, out[2 * blockIdx.x + 1] = std::isnan(value) ? 1 : 0;
  __syncthreads();
  slot = 7, value = 1.f;  // what a later block must not see
}

__global__ void warp_sum(float* out) {
  float v = float(threadIdx.x % 32 + 1);
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  out[threadIdx.x] = v;
}

// Each lane's result of the four shuffles (index, up, down, xor) with source `b` and `width`.
__global__ void shuffle_modes(int* out, int b, int width) {
  const int lane = int(threadIdx.x % 32), v = lane * 10;
  out[4 * lane + 0] = __shfl_sync(0xffffffffu, v, b, width);
  out[4 * lane + 1] = __shfl_up_sync(0xffffffffu, v, unsigned(b), width);
  out[4 * lane + 2] = __shfl_down_sync(0xffffffffu, v, unsigned(b), width);
  out[4 * lane + 3] = __shfl_xor_sync(0xffffffffu, v, b, width);
}

__global__ void shuffle_after_half_the_warp_returned(int* out) {
  if (threadIdx.x >= 16) return;
  out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, int(threadIdx.x), 1);
}

__global__ void shuffle_with_the_half_warp_mask(int* out) {
  if (threadIdx.x >= 16) return;
  out[threadIdx.x] = __shfl_xor_sync(0x0000ffffu, int(threadIdx.x), 1);
}

__global__ void shuffle_reading_outside_the_mask(int* out) {
  if (threadIdx.x >= 16) return;
  out[threadIdx.x] = __shfl_xor_sync(0x0000ffffu, int(threadIdx.x), 16);  // lane 16 is not in the mask
}

// Half of each warp waits at __syncthreads, the other half at a shuffle that names all 32 lanes.
__global__ void barrier_in_one_branch(int* out) {
  if (threadIdx.x % 32 < 16) {
    __syncthreads();
  } else {
    out[0] += __shfl_xor_sync(0xffffffffu, 1, 1);
    __syncthreads();
  }
}

__global__ void barrier_after_some_returned(int* out) {
  RT_SHARED(total, int);
  if (threadIdx.x == 0) total = 0;
  __syncthreads();
  if (threadIdx.x % 2) return;  // returned threads count as arrived at later barriers
  atomicAdd(&total, 1);
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = total;
}

// Lanes exchange through shared memory within their warp: needs __syncwarp between.
__global__ void exchange_in_warp(int* out, bool with_syncwarp) {
  RT_SHARED(slots, int[32]);
  const int lane = int(threadIdx.x);
  slots[lane] = lane + 1;
  if (with_syncwarp) __syncwarp();
  out[lane] = slots[31 - lane];
}

__global__ void sum_dynamic_shared(float* out, const float* in) {
  RT_DYNAMIC_SHARED(tile, float);
  tile[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (unsigned i = 0; i < blockDim.x; ++i) s += tile[i];
    out[blockIdx.x] = s;
  }
}

__global__ void read_dynamic_shared_unwritten(int* out) {
  RT_DYNAMIC_SHARED(tile, float);
  const int* words = reinterpret_cast<const int*>(tile);
  out[threadIdx.x] = words[threadIdx.x];
}

__global__ void count_into(unsigned long long* counter, double* total) {
  atomicAdd(counter, 1ull);
  atomicAdd(total, 0.5);
}

__global__ void RT_LAUNCH_BOUNDS(64) bounded_to_64(int* out) {
  RT_CHECK_LAUNCH_BOUNDS(64);
  out[threadIdx.x] = 1;
}

// Two block-wide sums through one shared array, as block_all_reduce does; `barrier_before_write`
// is the __syncthreads that keeps the second sum's writes from overtaking the first sum's reads.
__global__ void sum_twice(float* out, bool barrier_before_write) {
  RT_SHARED(partial, float[8]);
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

__global__ void launch_from_a_kernel(int* out) {
  if (threadIdx.x == 0) {
    RT_LAUNCH(1, 32, nullptr, write_global_index)(out, 32);
    out[0] = int(cudaGetLastError());
  }
}

// Thread 3 of block 1 writes through a wild pointer (not null, which UBSan would report first).
__global__ void write_through_wild_pointer(int* out) {
  int* target = blockIdx.x == 1 && threadIdx.x == 3 ? reinterpret_cast<int*>(uintptr_t{64}) : out;
  *static_cast<int volatile*>(target) = 1;
}

#if !defined(__SANITIZE_ADDRESS__)  // UBSan reports the division itself, before it traps
// Thread 2 divides by zero (a trap on the CPU; an unspecified value on a GPU).
__global__ void divide_by_zero(int* out) {
  volatile int divisor = threadIdx.x == 2 ? 0 : 1;
  out[threadIdx.x] = 10 / divisor;
}
#endif

// Recurses until the thread's stack overflows (each frame keeps 1 KiB live across the call).
__device__ int recurse(int depth) {
  volatile char frame[1024];
  frame[0] = char(depth);
  if (depth > (1 << 20)) return 0;  // 1 GiB of frames: never reached on a 512 KiB stack
  const int deeper = recurse(depth + 1);
  return deeper + frame[0];
}
__global__ void overflow_the_stack(int* out) {
  if (threadIdx.x == 5) out[0] = recurse(0);
}

// What a child process wrote to stderr, and how it ended.
struct ChildResult {
  std::string stderr_text;
  int status = 0;
  bool crashed() const { return WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0); }
  int exit_code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
};

// Runs body() in a child process whose fault handlers are the default ones (not Catch2's report
// of a crash), without a core dump, and killed by SIGALRM after 30 s should a handler loop.
template <typename F>
ChildResult run_in_child(F body) {
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  std::fflush(stdout);  // or the child writes what Catch2 buffered so far a second time
  const pid_t child = fork();
  if (child == 0) {
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[0]);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE}) signal(sig, SIG_DFL);
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    alarm(30);
    if (!std::freopen("/dev/null", "w", stdout)) _exit(3);
    body();
    _exit(0);
  }
  REQUIRE(child > 0);
  close(pipe_fds[1]);
  ChildResult result;
  char buffer[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof buffer)) > 0;) result.stderr_text.append(buffer, size_t(n));
  close(pipe_fds[0]);
  waitpid(child, &result.status, 0);
  return result;
}

// A SIGSEGV handler of the host program's, there before the emulator's: says so and exits with 42.
void host_segv_handler(int, siginfo_t*, void*) {
  const char text[] = "host handler\n";
  const ssize_t ignored = write(STDERR_FILENO, text, sizeof text - 1);
  (void)ignored;
  _exit(42);
}
void install_host_segv_handler() {
  struct sigaction action{};
  action.sa_sigaction = host_segv_handler;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, nullptr);
}

}  // namespace

TEST_CASE("every thread of every block runs once, with its indices") {
  std::vector<int> out(1000, -1);
  REQUIRE(run(dim3(4), dim3(256), write_global_index, out.data(), 1000) == cudaSuccess);
  std::vector<int> expected(1000);
  std::iota(expected.begin(), expected.end(), 0);
  CHECK(out == expected);

  std::vector<int> positions(2 * 3 * 4 * 8, -1);
  REQUIRE(run(dim3(2, 3), dim3(2, 2, 2), write_3d_position, positions.data()) == cudaSuccess);
  for (int b = 0; b < 6; ++b)
    for (int t = 0; t < 8; ++t) CHECK(positions[size_t(b * 8 + t)] == b * 1000 + t);
}

TEST_CASE("shared memory another thread writes is seen only after __syncthreads") {
  std::vector<int> out(64, -1);
  REQUIRE(run(dim3(1), dim3(64), rotate_through_shared, out.data(), true) == cudaSuccess);
  for (int t = 0; t < 64; ++t) CHECK(out[size_t(t)] == (t + 1) % 64 + 100);
  // Without the barrier the thread that runs first reads a slot its neighbour has not written yet
  // (0xff bytes: -1), whichever warp order the emulator runs.
  REQUIRE(run(dim3(1), dim3(64), rotate_through_shared, out.data(), false) == cudaSuccess);
  CHECK(std::count(out.begin(), out.end(), -1) > 0);
}

TEST_CASE("__shared__ variables start as 0xff bytes in every block") {
  std::vector<int> out(6, 0);
  REQUIRE(run(dim3(3), dim3(32), read_shared_before_writing, out.data()) == cudaSuccess);
  CHECK(out == std::vector<int>{-1, 1, -1, 1, -1, 1});  // not 7 from the block before; NaN floats
}

TEST_CASE("warp shuffles follow PTX's lane rules") {
  std::vector<float> sums(64);
  REQUIRE(run(dim3(1), dim3(64), warp_sum, sums.data()) == cudaSuccess);
  for (float s : sums) CHECK(s == 528.f);  // 1 + ... + 32 in every lane of both warps

  std::vector<int> out(128);
  REQUIRE(run(dim3(1), dim3(32), shuffle_modes, out.data(), 3, 8) == cudaSuccess);
  for (int lane = 0; lane < 32; ++lane) {
    const int segment = lane / 8 * 8;
    CHECK(out[size_t(4 * lane + 0)] == (segment + 3) * 10);                             // index within the segment
    CHECK(out[size_t(4 * lane + 1)] == (lane - 3 >= segment ? lane - 3 : lane) * 10);   // up: own below the start
    CHECK(out[size_t(4 * lane + 2)] == (lane + 3 < segment + 8 ? lane + 3 : lane) * 10);  // down: own past the end
    CHECK(out[size_t(4 * lane + 3)] == (lane ^ 3) * 10);
  }
  // xor across segments: a lane may read an earlier segment (lane 20 reads lane 4 at width 16), not a later one.
  REQUIRE(run(dim3(1), dim3(32), shuffle_modes, out.data(), 16, 16) == cudaSuccess);
  CHECK(out[4 * 20 + 3] == 40);
  CHECK(out[4 * 4 + 3] == 40);
  // An index wraps within the segment (-1 is the last lane); deltas count modulo 32.
  REQUIRE(run(dim3(1), dim3(32), shuffle_modes, out.data(), -1, 32) == cudaSuccess);
  for (int lane = 0; lane < 32; ++lane) CHECK(out[size_t(4 * lane)] == 310);
  REQUIRE(run(dim3(1), dim3(32), shuffle_modes, out.data(), 33, 32) == cudaSuccess);
  CHECK(out[4 * 5 + 2] == 60);  // down by 33 is down by 1

  std::vector<int> half(16, -1);
  REQUIRE(run(dim3(1), dim3(32), shuffle_with_the_half_warp_mask, half.data()) == cudaSuccess);
  for (int lane = 0; lane < 16; ++lane) CHECK(half[size_t(lane)] == (lane ^ 1));
}

TEST_CASE("what a GPU leaves undefined fails the launch") {
  std::vector<int> out(128, 0);
  CHECK(run(dim3(1), dim3(32), shuffle_after_half_the_warp_returned, out.data()) == cudaErrorLaunchFailure);
  CHECK(run(dim3(1), dim3(32), shuffle_reading_outside_the_mask, out.data()) == cudaErrorLaunchFailure);
  CHECK(run(dim3(1), dim3(64), barrier_in_one_branch, out.data()) == cudaErrorLaunchFailure);
  CHECK(run(dim3(1), dim3(16), warp_sum, reinterpret_cast<float*>(out.data())) == cudaErrorLaunchFailure);  // lanes 16-31 don't exist
  CHECK(run(dim3(1), dim3(32), shuffle_modes, out.data(), 1, 12) == cudaErrorLaunchFailure);  // width not a power of two
  std::fill(out.begin(), out.end(), 0);
  CHECK(run(dim3(1), dim3(128), bounded_to_64, out.data()) == cudaErrorLaunchFailure);       // over __launch_bounds__
  CHECK(std::count(out.begin(), out.end(), 0) == long(out.size()));  // and no thread ran, as on a GPU
  CHECK(run(dim3(1), dim3(64), bounded_to_64, out.data()) == cudaSuccess);
  CHECK(run(dim3(1), dim3(1), launch_from_a_kernel, out.data()) == cudaSuccess);
  CHECK(out[0] == int(cudaErrorNotSupported));  // the inner launch is refused, the outer one completes
  // The runner recovers: the next launch on the same thread works.
  std::vector<float> sums(32);
  CHECK(run(dim3(1), dim3(32), warp_sum, sums.data()) == cudaSuccess);
  CHECK(sums[0] == 528.f);
}

TEST_CASE("threads that returned count as arrived at __syncthreads") {
  std::vector<int> out(3, -1);
  REQUIRE(run(dim3(3), dim3(96), barrier_after_some_returned, out.data()) == cudaSuccess);
  CHECK(out == std::vector<int>{48, 48, 48});
}

TEST_CASE("lanes exchanging through shared memory need __syncwarp") {
  std::vector<int> out(32, 0);
  REQUIRE(run(dim3(1), dim3(32), exchange_in_warp, out.data(), true) == cudaSuccess);
  for (int lane = 0; lane < 32; ++lane) CHECK(out[size_t(lane)] == 32 - lane);
  REQUIRE(run(dim3(1), dim3(32), exchange_in_warp, out.data(), false) == cudaSuccess);
  CHECK(std::count(out.begin(), out.end(), -1) > 0);  // a lane read a slot before its lane wrote it
}

TEST_CASE("dynamic shared memory: the launch's bytes, 0xff at first, up to the kernel's limit") {
  std::vector<float> in(512), out(4);
  std::iota(in.begin(), in.end(), 0.f);
  REQUIRE(run_with_shared(dim3(4), dim3(128), 128 * sizeof(float), sum_dynamic_shared, out.data(), in.data()) ==
          cudaSuccess);
  for (int b = 0; b < 4; ++b) CHECK(out[size_t(b)] == float(128 * 128 * b + 127 * 128 / 2));
  std::vector<int> words(32, 0);
  REQUIRE(run_with_shared(dim3(1), dim3(32), 32 * sizeof(int), read_dynamic_shared_unwritten, words.data()) ==
          cudaSuccess);
  CHECK(std::count(words.begin(), words.end(), -1) == 32);
  // More than 48 KiB needs cudaFuncSetAttribute for this kernel, found through a pointer variable too.
  CHECK(run_with_shared(dim3(1), dim3(32), 64 * 1024, sum_dynamic_shared, out.data(), in.data()) ==
        cudaErrorInvalidValue);
  REQUIRE(cudaFuncSetAttribute(sum_dynamic_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024) ==
          cudaSuccess);
  CHECK(run_with_shared(dim3(1), dim3(32), 64 * 1024, sum_dynamic_shared, out.data(), in.data()) == cudaSuccess);
}

TEST_CASE("atomics add across all threads of the grid") {
  unsigned long long counter = 0;
  double total = 0;
  REQUIRE(run(dim3(10), dim3(100), count_into, &counter, &total) == cudaSuccess);
  CHECK(counter == 1000);
  CHECK(total == 500.0);
}

TEST_CASE("bad launch configurations and streams are refused as CUDA refuses them") {
  std::vector<int> out(4096, 0);
  CHECK(run(dim3(1), dim3(1025), write_global_index, out.data(), 4096) == cudaErrorInvalidConfiguration);
  CHECK(run(dim3(1), dim3(32, 32, 2), write_global_index, out.data(), 4096) == cudaErrorInvalidConfiguration);
  CHECK(run(dim3(0), dim3(32), write_global_index, out.data(), 4096) == cudaErrorInvalidConfiguration);
  CHECK(run(dim3(1, 65536), dim3(32), write_global_index, out.data(), 4096) == cudaErrorInvalidConfiguration);
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, 0) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
  cudaGetLastError();
  RT_LAUNCH(1, 32, stream, write_global_index)(out.data(), 4096);
  CHECK(cudaGetLastError() == cudaErrorInvalidResourceHandle);
  CHECK(std::count(out.begin(), out.end(), 0) == 4096);  // none of them ran
}

TEST_CASE("a warp runs ahead of the others between barriers, so a missing __syncthreads shows") {
  // 4 warps: the sums are 4 * 32 * 1 and 4 * 32 * 2, so every thread should hold 384.
  std::vector<float> out(128);
  REQUIRE(run(dim3(1), dim3(128), sum_twice, out.data(), true) == cudaSuccess);
  for (float v : out) CHECK(v == 384.f);
  // Without the barrier one warp writes its second partial before the others read the first.
  REQUIRE(run(dim3(1), dim3(128), sum_twice, out.data(), false) == cudaSuccess);
  CHECK(std::count(out.begin(), out.end(), 384.f) < 128);
}

TEST_CASE("host threads launch at once, each with its own shared memory") {
  std::vector<std::vector<float>> sums(4, std::vector<float>(128));
  std::vector<cudaError_t> errors(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] { errors[size_t(i)] = run(dim3(1), dim3(128), sum_twice, sums[size_t(i)].data(), true); });
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < 4; ++i) {
    CHECK(errors[size_t(i)] == cudaSuccess);
    CHECK(std::count(sums[size_t(i)].begin(), sums[size_t(i)].end(), 384.f) == 128);
  }
}

TEST_CASE("CUDA's min and max, and round-to-nearest intrinsics") {
  CHECK(min(int64_t(-3), 2) == -3);
  CHECK(max(2u, 7ull) == 7ull);
  CHECK(max(NAN, 1.f) == 1.f);  // fmaxf: the other operand of a NaN, in either position
  CHECK(max(1.f, NAN) == 1.f);
  CHECK(min(2.0, NAN) == 2.0);
  CHECK(__umulhi(0x80000000u, 6u) == 3u);
  CHECK(__fmul_rn(0.1f, 3.f) == float(double(0.1f) * 3.0));  // the exact product, rounded once
  CHECK(__fdiv_rn(1.f, 3.f) == float(1.0 / 3.0));
}

TEST_CASE("a kernel that crashes the process is named, with its block and thread") {
  SECTION("an access outside any allocation") {
    const ChildResult child = run_in_child([] {
      std::vector<int> out(64);
      RT_LAUNCH(2, 32, nullptr, write_through_wild_pointer)(out.data());
    });
    INFO(child.stderr_text);
    CHECK(child.crashed());
    CHECK_THAT(child.stderr_text,
               Catch::Contains("cuda emulator: kernel write_through_wild_pointer, block (1, 0, 0), thread (3, 0, 0): "
                               "segmentation fault"));
    CHECK_THAT(child.stderr_text, Catch::Contains("cudaErrorIllegalAddress"));
  }
  SECTION("a thread's stack overflowing") {
    const ChildResult child = run_in_child([] {
      int out = 0;
      RT_LAUNCH(1, 8, nullptr, overflow_the_stack)(&out);
    });
    INFO(child.stderr_text);
    CHECK(child.crashed());
    CHECK_THAT(child.stderr_text,
               Catch::Contains("kernel overflow_the_stack, block (0, 0, 0), thread (5, 0, 0): stack overflow"));
  }
#if !defined(__SANITIZE_ADDRESS__)  // UBSan reports the division itself, before it traps
  SECTION("an integer division by zero") {
    const ChildResult child = run_in_child([] {
      std::vector<int> out(32);
      RT_LAUNCH(1, 32, nullptr, divide_by_zero)(out.data());
    });
    INFO(child.stderr_text);
    CHECK(child.crashed());
    CHECK_THAT(child.stderr_text,
               Catch::Contains("kernel divide_by_zero, block (0, 0, 0), thread (2, 0, 0): arithmetic trap"));
  }
#endif
}

TEST_CASE("the handler that was there before still takes the fault, and signals sent by kill()") {
  SECTION("a kernel's fault: named, then the host's handler runs") {
    const ChildResult child = run_in_child([] {
      install_host_segv_handler();
      std::vector<int> out(64);
      RT_LAUNCH(2, 32, nullptr, write_through_wild_pointer)(out.data());
    });
    INFO(child.stderr_text);
    CHECK(child.exit_code() == 42);
    CHECK_THAT(child.stderr_text, Catch::Contains("kernel write_through_wild_pointer"));
    CHECK_THAT(child.stderr_text, Catch::EndsWith("host handler\n"));
  }
  SECTION("a SIGSEGV raised outside any kernel goes to the host's handler unreported") {
    const ChildResult child = run_in_child([] {
      install_host_segv_handler();
      std::vector<int> out(32);
      RT_LAUNCH(1, 32, nullptr, write_global_index)(out.data(), 32);  // the emulator's handler is in place from here
      raise(SIGSEGV);
    });
    INFO(child.stderr_text);
    CHECK(child.exit_code() == 42);
    CHECK_THAT(child.stderr_text, Catch::EndsWith("host handler\n"));
    CHECK(child.stderr_text.find("cuda emulator") == std::string::npos);
  }
}
