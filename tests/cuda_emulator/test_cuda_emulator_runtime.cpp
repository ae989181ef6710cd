// The CUDA emulator's host runtime (kernels/cuda_emulator/runtime.cpp) and cuBLAS
// (kernels/cuda_emulator/cublas.cpp), through the real CUDA headers: devices and their ordinals,
// the per-thread last error, device and pinned memory bookkeeping, copies, streams, events,
// function attributes, and gemm against a naive column-major reference.
//
// The binary asks for two emulated devices (RT_CUDA_EMULATED_DEVICES, read at the first CUDA call)
// unless the environment already chose; every expectation is derived from the environment.
#include <catch2/catch.hpp>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "cuda_emulator/emulator.h"

namespace {

constexpr size_t MiB = size_t(1) << 20;

// Before any CUDA call: static initialisation runs ahead of every test.
const bool g_two_devices_unless_set = [] { return setenv("RT_CUDA_EMULATED_DEVICES", "2", /*overwrite=*/0) == 0; }();

int expected_devices() { return std::atoi(std::getenv("RT_CUDA_EMULATED_DEVICES")); }

size_t expected_capacity() {
  const char* mb = std::getenv("RT_CUDA_EMULATED_MEMORY_MB");
  return mb ? size_t(std::atoll(mb)) * MiB : size_t(8) << 30;
}

// Sets RT_CUDA_EMULATED_MEMORY_MB for its lifetime (the runtime reads it at every allocation).
class ScopedCapacity {
 public:
  explicit ScopedCapacity(const char* mib) {
    if (const char* old = std::getenv("RT_CUDA_EMULATED_MEMORY_MB")) previous_ = old;
    setenv("RT_CUDA_EMULATED_MEMORY_MB", mib, 1);
  }
  ~ScopedCapacity() {
    if (previous_)
      setenv("RT_CUDA_EMULATED_MEMORY_MB", previous_->c_str(), 1);
    else
      unsetenv("RT_CUDA_EMULATED_MEMORY_MB");
  }
  ScopedCapacity(const ScopedCapacity&) = delete;
  ScopedCapacity& operator=(const ScopedCapacity&) = delete;

 private:
  std::optional<std::string> previous_;
};

size_t free_bytes() {
  size_t free = 0, total = 0;
  REQUIRE(cudaMemGetInfo(&free, &total) == cudaSuccess);
  return free;
}

void* device_alloc(size_t bytes) {
  void* p = nullptr;
  REQUIRE(cudaMalloc(&p, bytes) == cudaSuccess);
  return p;
}

void kernel_a(int* p) { *p = 1; }
void kernel_b(int* p) { *p = 2; }

}  // namespace

// ---- Devices and errors -------------------------------------------------------------------------

TEST_CASE("the device count follows RT_CUDA_EMULATED_DEVICES, and bad ordinals are refused") {
  REQUIRE(g_two_devices_unless_set);
  cudaGetLastError();
  int count = 0;
  REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
  CHECK(count == expected_devices());
  CHECK(cudaSetDevice(count) == cudaErrorInvalidDevice);
  CHECK(cudaGetLastError() == cudaErrorInvalidDevice);
  CHECK(cudaSetDevice(-1) == cudaErrorInvalidDevice);
  cudaGetLastError();
  int device = -1;
  REQUIRE(cudaGetDevice(&device) == cudaSuccess);
  CHECK(device == 0);
  CHECK(cudaGetDevice(nullptr) == cudaErrorInvalidValue);
  CHECK(cudaGetDeviceCount(nullptr) == cudaErrorInvalidValue);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
  cudaGetLastError();
}

TEST_CASE("the current device belongs to the calling thread") {
  int count = 0;
  REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
  if (count < 2) {
    WARN("skipped: RT_CUDA_EMULATED_DEVICES=" << count);
    return;
  }
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  int here = -1, there = -1;
  REQUIRE(cudaGetDevice(&here) == cudaSuccess);
  std::thread([&] { cudaGetDevice(&there); }).join();
  CHECK(here == 1);
  CHECK(there == 0);
  CHECK(rt::cuda_emulator::current_device() == 1);
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  CHECK(rt::cuda_emulator::current_device() == 0);
}

TEST_CASE("device properties and attributes describe an sm_90 device") {
  cudaDeviceProp p;
  std::memset(&p, 0x7f, sizeof p);  // every field the runtime leaves alone must come back zero
  REQUIRE(cudaGetDeviceProperties(&p, 0) == cudaSuccess);
  CHECK(std::string(p.name) == "CUDA emulator on the CPU (RustyTorch++)");
  CHECK(p.major == 9);
  CHECK(p.minor == 0);
  CHECK(p.totalGlobalMem == expected_capacity());
  CHECK(p.multiProcessorCount == rt::cuda_emulator::kMultiprocessors);
  CHECK(p.maxThreadsPerBlock == 1024);
  CHECK((p.maxThreadsDim[0] == 1024 && p.maxThreadsDim[1] == 1024 && p.maxThreadsDim[2] == 64));
  CHECK((p.maxGridSize[0] == 2147483647 && p.maxGridSize[1] == 65535 && p.maxGridSize[2] == 65535));
  CHECK(p.warpSize == 32);
  CHECK(p.sharedMemPerBlock == 48 * 1024);
  CHECK(p.sharedMemPerBlockOptin == rt::cuda_emulator::kMaxSharedBytesOptin);
  CHECK(p.sharedMemPerMultiprocessor == 228 * 1024);
  CHECK(p.regsPerBlock == 65536);
  CHECK(p.l2CacheSize == 50 * 1024 * 1024);
  CHECK(p.memoryBusWidth == 5120);
  CHECK(p.totalConstMem == 64 * 1024);
  CHECK(p.integrated == 0);
  CHECK(p.pciBusID == 0);
  CHECK(p.reserved[0] == 0);

  int count = 0;
  REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
  CHECK(cudaGetDeviceProperties(&p, count) == cudaErrorInvalidDevice);
  CHECK(cudaGetDeviceProperties(nullptr, 0) == cudaErrorInvalidValue);

  const auto attribute = [](cudaDeviceAttr a, int device = 0) {
    int v = -1;
    REQUIRE(cudaDeviceGetAttribute(&v, a, device) == cudaSuccess);
    return v;
  };
  CHECK(attribute(cudaDevAttrComputeCapabilityMajor) == 9);
  CHECK(attribute(cudaDevAttrComputeCapabilityMinor) == 0);
  CHECK(attribute(cudaDevAttrMultiProcessorCount) == rt::cuda_emulator::kMultiprocessors);
  CHECK(attribute(cudaDevAttrMaxThreadsPerBlock) == 1024);
  CHECK(attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin) == int(rt::cuda_emulator::kMaxSharedBytesOptin));
  CHECK(attribute(cudaDevAttrWarpSize) == 32);
  CHECK(attribute(cudaDevAttrClockRate) > 0);
  CHECK(attribute(cudaDevAttrComputeCapabilityMajor, count - 1) == 9);
  int v = 0;
  CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, count) == cudaErrorInvalidDevice);
  CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrKernelExecTimeout, 0) == cudaErrorInvalidValue);
  CHECK(cudaDeviceGetAttribute(nullptr, cudaDevAttrWarpSize, 0) == cudaErrorInvalidValue);

  int runtime = 0, driver = 0;
  CHECK(cudaRuntimeGetVersion(&runtime) == cudaSuccess);
  CHECK(cudaDriverGetVersion(&driver) == cudaSuccess);
  CHECK(runtime == CUDART_VERSION);
  CHECK(driver == CUDART_VERSION);
  cudaGetLastError();
}

TEST_CASE("the last error is kept per thread until cudaGetLastError reads it") {
  cudaGetLastError();
  int dummy = 0;
  CHECK(cudaFree(&dummy) == cudaErrorInvalidValue);  // not from cudaMalloc
  CHECK(cudaPeekAtLastError() == cudaErrorInvalidValue);
  CHECK(cudaPeekAtLastError() == cudaErrorInvalidValue);  // peeking does not clear
  int device = 0;
  CHECK(cudaGetDevice(&device) == cudaSuccess);
  CHECK(cudaPeekAtLastError() == cudaErrorInvalidValue);  // nor does a call that succeeds

  cudaError_t seen_elsewhere = cudaErrorUnknown;
  std::thread([&] { seen_elsewhere = cudaGetLastError(); }).join();
  CHECK(seen_elsewhere == cudaSuccess);

  CHECK(cudaSetDevice(99) == cudaErrorInvalidDevice);  // the latest error wins
  CHECK(cudaGetLastError() == cudaErrorInvalidDevice);
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK(cudaPeekAtLastError() == cudaSuccess);

  rt::cuda_emulator::set_last_error(cudaErrorInvalidConfiguration);
  rt::cuda_emulator::set_last_error(cudaSuccess);  // ignored
  CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
}

TEST_CASE("error names and descriptions are CUDA's") {
  const struct {
    cudaError_t code;
    const char* name;
    const char* description;
  } expected[] = {
      {cudaSuccess, "cudaSuccess", "no error"},
      {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
      {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
      {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
      {cudaErrorCudartUnloading, "cudaErrorCudartUnloading", "driver shutting down"},
      {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
      {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
      {cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
      {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
      {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
      {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
      {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
      {cudaErrorIllegalAddress, "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
      {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
  };
  for (const auto& e : expected) {
    CHECK(std::string(cudaGetErrorName(e.code)) == e.name);
    CHECK(std::string(cudaGetErrorString(e.code)) == e.description);
  }
  CHECK(std::string(cudaGetErrorName(cudaError_t(12345))) == "unrecognized error code");
  CHECK(std::string(cudaGetErrorString(cudaError_t(12345))) == "unrecognized error code");
}

// ---- Memory -------------------------------------------------------------------------------------

TEST_CASE("the capacity is 8 GiB (or RT_CUDA_EMULATED_MEMORY_MB), and a request past it fails with a null pointer") {
  cudaGetLastError();
  size_t free = 0, total = 0;
  REQUIRE(cudaMemGetInfo(&free, &total) == cudaSuccess);
  CHECK(total == expected_capacity());
  CHECK(free <= total);
  void* p = &free;
  CHECK(cudaMalloc(&p, total + 1) == cudaErrorMemoryAllocation);
  CHECK(p == nullptr);
  CHECK(cudaGetLastError() == cudaErrorMemoryAllocation);
  CHECK(free_bytes() == free);
}

TEST_CASE("cudaMalloc counts 256-byte blocks against the capacity; cudaFree gives them back") {
  cudaGetLastError();
  const ScopedCapacity capacity("64");
  size_t free0 = 0, total = 0;
  REQUIRE(cudaMemGetInfo(&free0, &total) == cudaSuccess);
  CHECK(total == 64 * MiB);

  void* a = device_alloc(1000);
  CHECK(reinterpret_cast<uintptr_t>(a) % 256 == 0);
  CHECK(free_bytes() == free0 - 1024);
  std::memset(a, 0xab, 1000);  // host memory underneath: usable as such

  void* zero = &free0;
  CHECK(cudaMalloc(&zero, 0) == cudaSuccess);
  CHECK(zero == nullptr);
  CHECK(cudaMalloc(nullptr, 16) == cudaErrorInvalidValue);
  cudaGetLastError();

  SECTION("past the capacity: refused, and nothing is counted") {
    void* big = device_alloc(40 * MiB);
    const size_t free1 = free_bytes();
    void* p = &free0;
    CHECK(cudaMalloc(&p, free1 + 1) == cudaErrorMemoryAllocation);
    CHECK(p == nullptr);
    CHECK(cudaGetLastError() == cudaErrorMemoryAllocation);
    CHECK(free_bytes() == free1);
    void* rest = device_alloc(free1);  // exactly what is left
    CHECK(free_bytes() == 0);
    CHECK(cudaFree(rest) == cudaSuccess);
    CHECK(cudaFree(big) == cudaSuccess);
  }

  SECTION("freeing: nullptr is fine; twice, inside a block, or pinned memory is not") {
    CHECK(cudaFree(nullptr) == cudaSuccess);
    CHECK(cudaFree(static_cast<char*>(a) + 256) == cudaErrorInvalidValue);
    void* pinned = nullptr;
    REQUIRE(cudaHostAlloc(&pinned, 64, cudaHostAllocDefault) == cudaSuccess);
    CHECK(cudaFree(pinned) == cudaErrorInvalidValue);
    CHECK(cudaFreeHost(pinned) == cudaSuccess);
    void* b = device_alloc(10);
    CHECK(cudaFree(b) == cudaSuccess);
    CHECK(cudaFree(b) == cudaErrorInvalidValue);
    cudaGetLastError();
  }

  SECTION("each device has its own capacity, and cudaFree takes a block of any device") {
    int count = 0;
    REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
    if (count < 2) {
      WARN("skipped: RT_CUDA_EMULATED_DEVICES=" << count);
    } else {
      REQUIRE(cudaSetDevice(1) == cudaSuccess);
      const size_t free_on_1 = free_bytes();
      void* on_1 = device_alloc(60 * MiB);
      CHECK(free_bytes() == free_on_1 - 60 * MiB);
      REQUIRE(cudaSetDevice(0) == cudaSuccess);
      CHECK(free_bytes() == free0 - 1024);
      CHECK(cudaFree(on_1) == cudaSuccess);
      REQUIRE(cudaSetDevice(1) == cudaSuccess);
      CHECK(free_bytes() == free_on_1);
      REQUIRE(cudaSetDevice(0) == cudaSuccess);
    }
  }

  CHECK(cudaFree(a) == cudaSuccess);
  CHECK(free_bytes() == free0);
}

TEST_CASE("threads allocate, copy and make streams and events at once; the books balance") {
  cudaGetLastError();
  const size_t free0 = free_bytes();
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &failures] {
      for (int i = 0; i < 200; ++i) {
        void* p = nullptr;
        cudaStream_t s = nullptr;
        cudaEvent_t e = nullptr;
        const int value = t * 1000 + i;
        int back = -1;
        const bool ok = cudaMalloc(&p, 1000 + size_t(i)) == cudaSuccess &&
                        cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, -1) == cudaSuccess &&
                        cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess &&
                        cudaMemcpyAsync(p, &value, sizeof value, cudaMemcpyHostToDevice, s) == cudaSuccess &&
                        cudaEventRecord(e, s) == cudaSuccess && cudaStreamWaitEvent(nullptr, e, 0) == cudaSuccess &&
                        cudaMemcpy(&back, p, sizeof back, cudaMemcpyDeviceToHost) == cudaSuccess && back == value &&
                        cudaEventDestroy(e) == cudaSuccess && cudaStreamDestroy(s) == cudaSuccess &&
                        cudaFree(p) == cudaSuccess;
        if (!ok) ++failures[size_t(t)];
      }
    });
  for (std::thread& t : threads) t.join();
  CHECK(failures == std::vector<int>(4, 0));
  CHECK(free_bytes() == free0);
}

TEST_CASE("pinned host memory is page aligned, checks its flags, and is not device memory") {
  cudaGetLastError();
  const size_t free0 = free_bytes();
  void* p = nullptr;
  REQUIRE(cudaHostAlloc(&p, 100000, cudaHostAllocDefault) == cudaSuccess);
  CHECK(reinterpret_cast<uintptr_t>(p) % 4096 == 0);
  std::memset(p, 1, 100000);
  CHECK(free_bytes() == free0);
  void* q = &p;
  CHECK(cudaHostAlloc(&q, 16, 0x80) == cudaErrorInvalidValue);
  CHECK(q == nullptr);
  CHECK(cudaFreeHost(p) == cudaSuccess);
  CHECK(cudaFreeHost(p) == cudaErrorInvalidValue);
  CHECK(cudaFreeHost(nullptr) == cudaSuccess);
  cudaGetLastError();
}

TEST_CASE("copies check their kind and that the device side is a live block") {
  cudaGetLastError();
  std::vector<int> host(64), back(64, 0);
  for (int i = 0; i < 64; ++i) host[size_t(i)] = i * 3;
  const size_t bytes = host.size() * sizeof(int);
  void* d = device_alloc(bytes);
  void* d2 = device_alloc(bytes);

  CHECK(cudaMemcpy(d, host.data(), bytes, cudaMemcpyHostToDevice) == cudaSuccess);
  CHECK(cudaMemcpyAsync(d2, d, bytes, cudaMemcpyDeviceToDevice, nullptr) == cudaSuccess);
  CHECK(cudaMemcpyAsync(back.data(), d2, bytes, cudaMemcpyDeviceToHost, cudaStreamPerThread) == cudaSuccess);
  CHECK(back == host);
  std::vector<int> other(64, 0);
  CHECK(cudaMemcpy(other.data(), back.data(), bytes, cudaMemcpyHostToHost) == cudaSuccess);
  CHECK(cudaMemcpy(other.data(), d, bytes, cudaMemcpyDefault) == cudaSuccess);
  CHECK(other == host);

  CHECK(cudaMemcpy(d, host.data(), bytes, cudaMemcpyKind(7)) == cudaErrorInvalidMemcpyDirection);
  CHECK(cudaGetLastError() == cudaErrorInvalidMemcpyDirection);
  CHECK(cudaMemcpy(other.data(), host.data(), bytes, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
  CHECK(cudaMemcpy(other.data(), host.data(), bytes, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
  CHECK(cudaMemcpy(back.data(), d, bytes + 1, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);  // past its end
  CHECK(cudaMemcpy(back.data(), static_cast<char*>(d) + 4, bytes - 4, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(cudaMemcpy(nullptr, nullptr, 0, cudaMemcpyHostToDevice) == cudaSuccess);

  CHECK(cudaMemsetAsync(d, 0, bytes, nullptr) == cudaSuccess);
  CHECK(cudaMemcpy(back.data(), d, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(back == std::vector<int>(64, 0));
  CHECK(cudaMemsetAsync(other.data(), 0, bytes, nullptr) == cudaErrorInvalidValue);

  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, 0) == cudaSuccess);
  CHECK(cudaMemcpyAsync(d, host.data(), bytes, cudaMemcpyHostToDevice, s) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
  CHECK(cudaMemcpyAsync(d, host.data(), bytes, cudaMemcpyHostToDevice, s) == cudaErrorInvalidResourceHandle);
  CHECK(cudaMemsetAsync(d, 0, bytes, s) == cudaErrorInvalidResourceHandle);

  const void* freed = d2;
  CHECK(cudaFree(d2) == cudaSuccess);
  CHECK(cudaMemcpy(back.data(), freed, bytes, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);

  int count = 0;
  REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
  CHECK(cudaMemcpyPeerAsync(d, 0, d, count, bytes, nullptr) == cudaErrorInvalidDevice);
  if (count >= 2) {
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    void* on_1 = device_alloc(bytes);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    CHECK(cudaMemcpy(d, host.data(), bytes, cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK(cudaMemcpyPeerAsync(on_1, 1, d, 0, bytes, nullptr) == cudaSuccess);
    CHECK(cudaMemcpy(back.data(), on_1, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(back == host);
    CHECK(cudaMemcpyPeerAsync(on_1, 0, d, 0, bytes, nullptr) == cudaErrorInvalidValue);  // on_1 is on device 1
    CHECK(cudaFree(on_1) == cudaSuccess);
  }
  CHECK(cudaFree(d) == cudaSuccess);
  cudaGetLastError();
}

// ---- Streams, events, function attributes -------------------------------------------------------

TEST_CASE("streams: distinct handles, clamped priorities, always idle") {
  cudaGetLastError();
  int least = 1, greatest = 1;
  REQUIRE(cudaDeviceGetStreamPriorityRange(&least, &greatest) == cudaSuccess);
  CHECK(least == 0);
  CHECK(greatest == -5);

  const int asked[] = {0, -1, -5, -100, 7};
  const int got[] = {0, -1, -5, -5, 0};
  std::vector<cudaStream_t> streams;
  for (int i = 0; i < 5; ++i) {
    cudaStream_t s = nullptr;
    REQUIRE(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, asked[i]) == cudaSuccess);
    CHECK(s != nullptr);
    for (cudaStream_t other : streams) CHECK(s != other);
    int p = 99;
    REQUIRE(cudaStreamGetPriority(s, &p) == cudaSuccess);
    CHECK(p == got[i]);
    CHECK(cudaStreamQuery(s) == cudaSuccess);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess);
    streams.push_back(s);
  }
  cudaStream_t bad = nullptr;
  CHECK(cudaStreamCreateWithPriority(&bad, 0x4, 0) == cudaErrorInvalidValue);
  CHECK(cudaStreamCreateWithPriority(nullptr, 0, 0) == cudaErrorInvalidValue);

  for (cudaStream_t s : {cudaStream_t(nullptr), cudaStreamLegacy, cudaStreamPerThread}) {
    int p = 99;
    CHECK(cudaStreamGetPriority(s, &p) == cudaSuccess);
    CHECK(p == 0);
    CHECK(cudaStreamQuery(s) == cudaSuccess);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess);
  }
  CHECK(cudaStreamDestroy(nullptr) == cudaErrorInvalidResourceHandle);

  for (cudaStream_t s : streams) CHECK(cudaStreamDestroy(s) == cudaSuccess);
  CHECK(cudaStreamQuery(streams[0]) == cudaErrorInvalidResourceHandle);
  CHECK(cudaStreamSynchronize(streams[0]) == cudaErrorInvalidResourceHandle);
  int p = 0;
  CHECK(cudaStreamGetPriority(streams[0], &p) == cudaErrorInvalidResourceHandle);
  CHECK(cudaStreamDestroy(streams[0]) == cudaErrorInvalidResourceHandle);
  CHECK(cudaGetLastError() == cudaErrorInvalidResourceHandle);
}

TEST_CASE("a host function runs at once, its stream being idle") {
  cudaGetLastError();
  int calls = 0;
  const cudaHostFn_t count_call = [](void* n) { ++*static_cast<int*>(n); };
  CHECK(cudaLaunchHostFunc(nullptr, count_call, &calls) == cudaSuccess);
  CHECK(calls == 1);
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreateWithPriority(&s, cudaStreamDefault, 0) == cudaSuccess);
  CHECK(cudaLaunchHostFunc(s, count_call, &calls) == cudaSuccess);
  CHECK(calls == 2);
  CHECK(cudaLaunchHostFunc(s, nullptr, &calls) == cudaErrorInvalidValue);
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
  CHECK(cudaLaunchHostFunc(s, count_call, &calls) == cudaErrorInvalidResourceHandle);
  CHECK(calls == 2);
  cudaGetLastError();
}

TEST_CASE("events: host-time elapsed, which needs timing on both and both recorded") {
  cudaGetLastError();
  cudaEvent_t start = nullptr, end = nullptr, untimed = nullptr;
  REQUIRE(cudaEventCreate(&start) == cudaSuccess);
  REQUIRE(cudaEventCreateWithFlags(&end, cudaEventBlockingSync) == cudaSuccess);
  REQUIRE(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming) == cudaSuccess);
  CHECK(start != end);

  float ms = -1.f;
  CHECK(cudaEventQuery(start) == cudaSuccess);  // never recorded: complete
  CHECK(cudaEventSynchronize(start) == cudaSuccess);
  CHECK(cudaEventElapsedTime(&ms, start, end) == cudaErrorInvalidResourceHandle);

  REQUIRE(cudaEventRecord(start, nullptr) == cudaSuccess);
  CHECK(cudaEventElapsedTime(&ms, start, end) == cudaErrorInvalidResourceHandle);  // end not recorded
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(cudaEventRecord(end, cudaStreamLegacy) == cudaSuccess);
  CHECK(cudaEventQuery(end) == cudaSuccess);
  CHECK(cudaEventSynchronize(end) == cudaSuccess);
  REQUIRE(cudaEventElapsedTime(&ms, start, end) == cudaSuccess);
  CHECK(ms >= 19.f);
  CHECK(ms < 10000.f);
  CHECK(cudaEventElapsedTime(nullptr, start, end) == cudaErrorInvalidValue);

  REQUIRE(cudaEventRecord(untimed, nullptr) == cudaSuccess);
  CHECK(cudaEventElapsedTime(&ms, start, untimed) == cudaErrorInvalidResourceHandle);
  CHECK(cudaEventElapsedTime(&ms, untimed, end) == cudaErrorInvalidResourceHandle);

  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, 0) == cudaSuccess);
  CHECK(cudaEventRecord(untimed, s) == cudaSuccess);
  CHECK(cudaStreamWaitEvent(s, untimed, 0) == cudaSuccess);
  CHECK(cudaStreamWaitEvent(nullptr, untimed, 0) == cudaSuccess);
  CHECK(cudaStreamWaitEvent(s, untimed, 0x10) == cudaErrorInvalidValue);
  CHECK(cudaStreamWaitEvent(s, nullptr, 0) == cudaErrorInvalidResourceHandle);

  cudaEvent_t bad = nullptr;
  CHECK(cudaEventCreateWithFlags(&bad, 0x40) == cudaErrorInvalidValue);
  CHECK(cudaEventCreateWithFlags(&bad, cudaEventInterprocess) == cudaErrorInvalidValue);  // needs DisableTiming

  CHECK(cudaEventDestroy(untimed) == cudaSuccess);
  CHECK(cudaStreamWaitEvent(s, untimed, 0) == cudaErrorInvalidResourceHandle);
  CHECK(cudaEventRecord(untimed, s) == cudaErrorInvalidResourceHandle);
  CHECK(cudaEventQuery(untimed) == cudaErrorInvalidResourceHandle);
  CHECK(cudaEventDestroy(untimed) == cudaErrorInvalidResourceHandle);
  CHECK(cudaEventDestroy(nullptr) == cudaErrorInvalidResourceHandle);
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
  CHECK(cudaEventRecord(start, s) == cudaErrorInvalidResourceHandle);
  CHECK(cudaEventDestroy(start) == cudaSuccess);
  CHECK(cudaEventDestroy(end) == cudaSuccess);
  CHECK(cudaGetLastError() == cudaErrorInvalidResourceHandle);
}

TEST_CASE("an event records only streams of its own device") {
  int count = 0;
  REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
  if (count < 2) {
    WARN("skipped: RT_CUDA_EMULATED_DEVICES=" << count);
    return;
  }
  cudaGetLastError();
  cudaEvent_t on_0 = nullptr;
  REQUIRE(cudaEventCreateWithFlags(&on_0, cudaEventDisableTiming) == cudaSuccess);
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  cudaStream_t s1 = nullptr;
  REQUIRE(cudaStreamCreateWithPriority(&s1, cudaStreamNonBlocking, 0) == cudaSuccess);
  CHECK(cudaEventRecord(on_0, s1) == cudaErrorInvalidResourceHandle);
  CHECK(cudaEventRecord(on_0, nullptr) == cudaErrorInvalidResourceHandle);  // device 1's default stream
  CHECK(cudaStreamWaitEvent(s1, on_0, 0) == cudaSuccess);                   // waiting across devices is fine
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  CHECK(cudaEventRecord(on_0, nullptr) == cudaSuccess);
  CHECK(cudaEventRecord(on_0, s1) == cudaErrorInvalidResourceHandle);
  CHECK(cudaStreamDestroy(s1) == cudaSuccess);
  CHECK(cudaEventDestroy(on_0) == cudaSuccess);
  cudaGetLastError();
}

TEST_CASE("cudaFuncSetAttribute stores the dynamic shared memory limit per function") {
  cudaGetLastError();
  using rt::cuda_emulator::kDefaultSharedBytes;
  using rt::cuda_emulator::kMaxSharedBytesOptin;
  using rt::cuda_emulator::max_dynamic_shared_bytes;
  const void* a = reinterpret_cast<const void*>(&kernel_a);
  const void* b = reinterpret_cast<const void*>(&kernel_b);
  CHECK(max_dynamic_shared_bytes(a) == kDefaultSharedBytes);

  CHECK(cudaFuncSetAttribute(a, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024) == cudaSuccess);
  CHECK(max_dynamic_shared_bytes(a) == 100 * 1024);
  CHECK(max_dynamic_shared_bytes(b) == kDefaultSharedBytes);
  CHECK(cudaFuncSetAttribute(a, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kMaxSharedBytesOptin)) == cudaSuccess);
  CHECK(max_dynamic_shared_bytes(a) == kMaxSharedBytesOptin);
  CHECK(cudaFuncSetAttribute(a, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kMaxSharedBytesOptin) + 1) ==
        cudaErrorInvalidValue);
  CHECK(cudaFuncSetAttribute(a, cudaFuncAttributeMaxDynamicSharedMemorySize, -1) == cudaErrorInvalidValue);
  CHECK(max_dynamic_shared_bytes(a) == kMaxSharedBytesOptin);  // refused values change nothing

  CHECK(cudaFuncSetAttribute(b, cudaFuncAttributePreferredSharedMemoryCarveout, 100) == cudaSuccess);
  CHECK(cudaFuncSetAttribute(b, cudaFuncAttributePreferredSharedMemoryCarveout, -1) == cudaSuccess);
  CHECK(cudaFuncSetAttribute(b, cudaFuncAttributePreferredSharedMemoryCarveout, 101) == cudaErrorInvalidValue);
  CHECK(max_dynamic_shared_bytes(b) == kDefaultSharedBytes);
  CHECK(cudaFuncSetAttribute(nullptr, cudaFuncAttributeMaxDynamicSharedMemorySize, 0) ==
        cudaErrorInvalidDeviceFunction);
  CHECK(cudaGetLastError() == cudaErrorInvalidDeviceFunction);
}

// ---- cuBLAS -------------------------------------------------------------------------------------

namespace {

// A column-major matrix with leading dimension ld >= rows, its padding filled with a marker.
template <class T>
struct Matrix {
  int rows, cols, ld;
  std::vector<T> data;
  T& at(int r, int c) { return data[size_t(r + c * ld)]; }
  T at(int r, int c) const { return data[size_t(r + c * ld)]; }
};

constexpr float kPadding = -96.f;  // exact in every type, and no product here reaches it

// Small multiples of 0.5: products and short sums are exact in float, half and bfloat16.
float value_for(int r, int c, int seed) { return float(((r * 7 + c * 3 + seed * 5) % 9) - 4) * 0.5f; }

template <class T>
T from_float(float v) {
  if constexpr (std::is_same_v<T, __half>)
    return __float2half_rn(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16_rn(v);
  else
    return T(v);
}

template <class T>
double to_double(T v) {
  if constexpr (std::is_same_v<T, __half>)
    return __half2float(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __bfloat162float(v);
  else
    return double(v);
}

template <class T>
Matrix<T> make_matrix(int rows, int cols, int ld, int seed) {
  Matrix<T> m{rows, cols, ld, std::vector<T>(size_t(ld) * size_t(std::max(cols, 1)), from_float<T>(kPadding))};
  for (int c = 0; c < cols; ++c)
    for (int r = 0; r < rows; ++r) m.at(r, c) = from_float<T>(value_for(r, c, seed));
  return m;
}

// alpha * op(A) * op(B) + beta * C, in double, for a stored A (B) read transposed when ta (tb).
template <class TA, class TC>
std::vector<double> reference(const Matrix<TA>& A, bool ta, const Matrix<TA>& B, bool tb, const Matrix<TC>& C,
                              int m, int n, int k, double alpha, double beta) {
  std::vector<double> out(size_t(m) * size_t(n));
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double sum = 0;
      for (int p = 0; p < k; ++p)
        sum += to_double(ta ? A.at(p, i) : A.at(i, p)) * to_double(tb ? B.at(j, p) : B.at(p, j));
      out[size_t(i + j * m)] = alpha * sum + (beta == 0 ? 0.0 : beta * to_double(C.at(i, j)));
    }
  return out;
}

struct Blas {
  cublasHandle_t h = nullptr;
  Blas() { REQUIRE(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS); }
  ~Blas() { cublasDestroy(h); }
};

// Runs one gemm of every transpose combination on m x n x k with padded leading dimensions and
// checks C against the reference within `tolerance`, and that C's padding is untouched.
template <class T, class TC, class Scalar>
void check_all_transposes(cudaDataType ab_type, cudaDataType c_type, cublasComputeType_t compute, double tolerance,
                          Scalar alpha, Scalar beta) {
  Blas blas;
  const int m = 5, n = 4, k = 3;
  for (const bool ta : {false, true})
    for (const bool tb : {false, true}) {
      CAPTURE(ta, tb);
      const Matrix<T> A = ta ? make_matrix<T>(k, m, k + 2, 1) : make_matrix<T>(m, k, m + 3, 1);
      const Matrix<T> B = tb ? make_matrix<T>(n, k, n + 1, 2) : make_matrix<T>(k, n, k + 4, 2);
      Matrix<TC> C = make_matrix<TC>(m, n, m + 2, 3);
      const std::vector<double> want = reference(A, ta, B, tb, C, m, n, k, double(alpha), double(beta));
      REQUIRE(cublasGemmEx(blas.h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &alpha,
                           A.data.data(), ab_type, A.ld, B.data.data(), ab_type, B.ld, &beta, C.data.data(), c_type,
                           C.ld, compute, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
      for (int j = 0; j < n; ++j) {
        for (int i = 0; i < m; ++i) CHECK(std::abs(to_double(C.at(i, j)) - want[size_t(i + j * m)]) <= tolerance);
        for (int i = m; i < C.ld; ++i) CHECK(to_double(C.at(i, j)) == double(kPadding));
      }
    }
}

}  // namespace

TEST_CASE("cuBLAS handles, workspaces and status names") {
  cublasHandle_t h = nullptr;
  REQUIRE(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
  CHECK(h != nullptr);
  CHECK(cublasCreate(nullptr) == CUBLAS_STATUS_INVALID_VALUE);
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, 0) == cudaSuccess);
  CHECK(cublasSetStream(h, s) == CUBLAS_STATUS_SUCCESS);
  void* workspace = device_alloc(4096);
  CHECK(cublasSetWorkspace(h, workspace, 4096) == CUBLAS_STATUS_SUCCESS);
  CHECK(cublasSetWorkspace(h, static_cast<char*>(workspace) + 16, 1024) == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(cublasSetStream(nullptr, s) == CUBLAS_STATUS_NOT_INITIALIZED);
  CHECK(cublasSetWorkspace(nullptr, workspace, 4096) == CUBLAS_STATUS_NOT_INITIALIZED);
  CHECK(cublasDestroy(h) == CUBLAS_STATUS_SUCCESS);
  CHECK(cublasDestroy(nullptr) == CUBLAS_STATUS_NOT_INITIALIZED);
  CHECK(cudaFree(workspace) == cudaSuccess);
  CHECK(cudaStreamDestroy(s) == cudaSuccess);

  CHECK(std::string(cublasGetStatusName(CUBLAS_STATUS_SUCCESS)) == "CUBLAS_STATUS_SUCCESS");
  CHECK(std::string(cublasGetStatusString(CUBLAS_STATUS_SUCCESS)) == "success");
  CHECK(std::string(cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE)) == "CUBLAS_STATUS_INVALID_VALUE");
  CHECK(std::string(cublasGetStatusString(CUBLAS_STATUS_INVALID_VALUE)) ==
        "an unsupported value or parameter was passed to the function");
  CHECK(std::string(cublasGetStatusName(CUBLAS_STATUS_NOT_SUPPORTED)) == "CUBLAS_STATUS_NOT_SUPPORTED");
  CHECK(std::string(cublasGetStatusString(CUBLAS_STATUS_NOT_SUPPORTED)) ==
        "the requested functionality is not supported");
  CHECK(std::string(cublasGetStatusName(cublasStatus_t(12345))) == "unrecognized status");
}

TEST_CASE("cublasGemmEx matches a column-major reference for N/N, T/N, N/T and T/T") {
  SECTION("float") {
    check_all_transposes<float, float>(CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 1e-5, 1.5f, 0.5f);
  }
  SECTION("float, TF32 allowed") {
    check_all_transposes<float, float>(CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 1e-5, 1.f, 0.f);
  }
  SECTION("double") {
    check_all_transposes<double, double>(CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, 1e-12, 0.75, -2.0);
  }
  // Exact: the values are multiples of 0.25 well inside half's and bfloat16's precision.
  SECTION("half") {
    check_all_transposes<__half, __half>(CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 0.0, 0.5f, 2.f);
  }
  SECTION("bfloat16") {
    check_all_transposes<__nv_bfloat16, __nv_bfloat16>(CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 0.0, 1.f, 1.f);
  }
  SECTION("half into float") {
    check_all_transposes<__half, float>(CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 0.0, 1.f, 0.5f);
  }
  SECTION("bfloat16 into float") {
    check_all_transposes<__nv_bfloat16, float>(CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, 0.0, 2.f, 0.f);
  }
}

TEST_CASE("cublasGemmEx rounds half results, and beta 0 never reads C") {
  Blas blas;
  const int m = 3, n = 2, k = 40;
  std::vector<__half> a(size_t(m) * k), b(size_t(k) * n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = __float2half_rn(0.1f * float(i % 7) - 0.3f);
  for (size_t i = 0; i < b.size(); ++i) b[i] = __float2half_rn(0.37f - 0.05f * float(i % 11));
  std::vector<__half> c(size_t(m) * n, __float2half_rn(std::numeric_limits<float>::quiet_NaN()));
  const float alpha = 1.f, beta = 0.f;
  REQUIRE(cublasGemmEx(blas.h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a.data(), CUDA_R_16F, m, b.data(),
                       CUDA_R_16F, k, &beta, c.data(), CUDA_R_16F, m, CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double want = 0;
      for (int p = 0; p < k; ++p)
        want += double(__half2float(a[size_t(i + p * m)])) * __half2float(b[size_t(p + j * k)]);
      const float got = __half2float(c[size_t(i + j * m)]);
      CHECK(std::isfinite(got));
      // Rounded to nearest: within half a unit in the last place of half (11 significant bits),
      // plus the float sum's own error.
      int exponent = 0;
      std::frexp(want, &exponent);
      CHECK(std::abs(got - want) <= 0.5 * std::ldexp(1.0, exponent - 11) + 1e-5);
    }

  std::vector<float> cf(4, std::numeric_limits<float>::quiet_NaN()), af{1, 2, 3, 4}, bf{1, 0, 0, 1};
  REQUIRE(cublasGemmEx(blas.h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &alpha, af.data(), CUDA_R_32F, 2, bf.data(),
                       CUDA_R_32F, 2, &beta, cf.data(), CUDA_R_32F, 2, CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
  CHECK(cf == af);
}

TEST_CASE("cublasGemmEx with k == 0 scales C by beta") {
  Blas blas;
  std::vector<double> c{1, 2, 3, 4};
  const double alpha = 1, beta = 3;
  REQUIRE(cublasGemmEx(blas.h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 0, &alpha, nullptr, CUDA_R_64F, 2, nullptr, CUDA_R_64F,
                       1, &beta, c.data(), CUDA_R_64F, 2, CUBLAS_COMPUTE_64F,
                       CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
  CHECK(c == std::vector<double>{3, 6, 9, 12});
}

TEST_CASE("cublasGemmStridedBatchedEx steps each operand by its batch stride") {
  Blas blas;
  const int m = 4, n = 3, k = 5, batches = 3;
  const int lda = k + 1, ldb = k + 2, ldc = m + 1;  // A is stored k x m (transposed), B k x n
  const long long stride_a = lda * m + 7, stride_b = ldb * n + 3, stride_c = ldc * n + 5;
  std::vector<float> a(size_t(stride_a * batches)), b(size_t(stride_b * batches));
  std::vector<float> c(size_t(stride_c * batches), kPadding);
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(int(i % 13) - 6) * 0.25f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = float(int(i % 7) - 3) * 0.5f;
  const float alpha = 2.f, beta = 0.f;
  REQUIRE(cublasGemmStridedBatchedEx(blas.h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, a.data(), CUDA_R_32F, lda,
                                     stride_a, b.data(), CUDA_R_32F, ldb, stride_b, &beta, c.data(), CUDA_R_32F, ldc,
                                     stride_c, batches, CUBLAS_COMPUTE_32F,
                                     CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
  std::vector<bool> written(c.size(), false);
  for (int t = 0; t < batches; ++t)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        double want = 0;
        for (int p = 0; p < k; ++p)
          want += double(a[size_t(t * stride_a + p + i * lda)]) * b[size_t(t * stride_b + p + j * ldb)];
        const size_t at = size_t(t * stride_c + i + j * ldc);
        CHECK(c[at] == float(alpha * want));  // exact: quarter steps, short sums
        written[at] = true;
      }
  for (size_t i = 0; i < c.size(); ++i)
    if (!written[i]) CHECK(c[i] == kPadding);

  // Batch count 0 (or m / n 0) is a successful no-op.
  std::vector<float> before = c;
  CHECK(cublasGemmStridedBatchedEx(blas.h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, a.data(), CUDA_R_32F, lda,
                                   stride_a, b.data(), CUDA_R_32F, ldb, stride_b, &beta, c.data(), CUDA_R_32F, ldc,
                                   stride_c, 0, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
  CHECK(c == before);
  CHECK(cublasGemmStridedBatchedEx(blas.h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, a.data(), CUDA_R_32F, lda,
                                   stride_a, b.data(), CUDA_R_32F, ldb, stride_b, &beta, c.data(), CUDA_R_32F, ldc,
                                   stride_c, -1, CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_INVALID_VALUE);
}

TEST_CASE("cublasGemmEx validates like cuBLAS") {
  Blas blas;
  std::vector<float> buf(64, 0.f);
  std::vector<double> dbuf(64, 0.0);
  const float one = 1.f, zero = 0.f;
  const auto gemm = [&](cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, int lda, int ldb, int ldc,
                        cudaDataType ab = CUDA_R_32F, cudaDataType c = CUDA_R_32F,
                        cublasComputeType_t compute = CUBLAS_COMPUTE_32F, cublasHandle_t h = nullptr,
                        cublasGemmAlgo_t algo = CUBLAS_GEMM_DEFAULT) {
    return cublasGemmEx(h ? h : blas.h, ta, tb, m, n, k, &one, buf.data(), ab, lda, buf.data(), ab, ldb, &zero,
                        buf.data(), c, ldc, compute, algo);
  };
  const auto N = CUBLAS_OP_N, T = CUBLAS_OP_T;
  CHECK(gemm(N, N, 2, 3, 4, 2, 4, 2) == CUBLAS_STATUS_SUCCESS);
  CHECK(gemm(N, N, -1, 3, 4, 2, 4, 2) == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(gemm(N, N, 2, -3, 4, 2, 4, 2) == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(gemm(N, N, 2, 3, -4, 2, 4, 2) == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(gemm(N, N, 2, 3, 4, 1, 4, 2) == CUBLAS_STATUS_INVALID_VALUE);  // lda < m
  CHECK(gemm(T, N, 2, 3, 4, 2, 4, 2) == CUBLAS_STATUS_INVALID_VALUE);  // lda < k when transposed
  CHECK(gemm(T, N, 2, 3, 4, 4, 4, 2) == CUBLAS_STATUS_SUCCESS);
  CHECK(gemm(N, N, 2, 3, 4, 2, 3, 2) == CUBLAS_STATUS_INVALID_VALUE);  // ldb < k
  CHECK(gemm(N, T, 2, 3, 4, 2, 2, 2) == CUBLAS_STATUS_INVALID_VALUE);  // ldb < n when transposed
  CHECK(gemm(N, T, 2, 3, 4, 2, 3, 2) == CUBLAS_STATUS_SUCCESS);
  CHECK(gemm(N, N, 2, 3, 4, 2, 4, 1) == CUBLAS_STATUS_INVALID_VALUE);  // ldc < m
  CHECK(gemm(N, N, 0, 0, 0, 0, 4, 2) == CUBLAS_STATUS_INVALID_VALUE);  // lda >= 1 even when empty
  CHECK(gemm(N, N, 0, 3, 4, 1, 4, 1) == CUBLAS_STATUS_SUCCESS);
  CHECK(gemm(cublasOperation_t(7), N, 2, 3, 4, 4, 4, 2) == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(gemm(N, N, 2, 3, 4, 2, 4, 2, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, nullptr, cublasGemmAlgo_t(500)) ==
        CUBLAS_STATUS_INVALID_VALUE);

  CHECK(gemm(N, N, 2, 3, 4, 2, 4, 2, CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I) == CUBLAS_STATUS_NOT_SUPPORTED);
  CHECK(gemm(N, N, 2, 3, 4, 2, 4, 2, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_32F) == CUBLAS_STATUS_NOT_SUPPORTED);
  CHECK(gemm(N, N, 2, 3, 4, 2, 4, 2, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_64F) == CUBLAS_STATUS_NOT_SUPPORTED);
  CHECK(gemm(N, N, 2, 3, 4, 2, 4, 2, CUDA_R_32F, CUDA_R_16F, CUBLAS_COMPUTE_32F) == CUBLAS_STATUS_NOT_SUPPORTED);
  CHECK(gemm(N, N, 2, 3, 4, 2, 4, 2, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F_FAST_TF32) ==
        CUBLAS_STATUS_NOT_SUPPORTED);
  CHECK(gemm(N, N, 2, 3, 4, 2, 4, 2, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_16F) == CUBLAS_STATUS_NOT_SUPPORTED);
  CHECK(cublasGemmEx(nullptr, N, N, 2, 3, 4, &one, buf.data(), CUDA_R_32F, 2, buf.data(), CUDA_R_32F, 4, &zero,
                     buf.data(), CUDA_R_32F, 2, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_NOT_INITIALIZED);
  CHECK(cublasGemmEx(blas.h, N, N, 2, 3, 4, nullptr, buf.data(), CUDA_R_32F, 2, buf.data(), CUDA_R_32F, 4, &zero,
                     buf.data(), CUDA_R_32F, 2, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_INVALID_VALUE);
  const double done = 1.0, dzero = 0.0;
  CHECK(cublasGemmEx(blas.h, N, N, 2, 3, 4, &done, dbuf.data(), CUDA_R_64F, 2, dbuf.data(), CUDA_R_64F, 4, &dzero,
                     dbuf.data(), CUDA_R_64F, 2, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT_TENSOR_OP) ==
        CUBLAS_STATUS_SUCCESS);
}
