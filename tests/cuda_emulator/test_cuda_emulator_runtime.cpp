// The CUDA emulator's host runtime (kernels/cuda_emulator/runtime.cpp), through the real CUDA
// headers: devices and their ordinals, the per-thread last error, device and pinned memory
// bookkeeping, copies, streams, events and function attributes (its cuBLAS:
// test_cuda_emulator_cublas.cpp).
//
// The binary asks for two emulated devices (RT_CUDA_EMULATED_DEVICES, read at the first CUDA call)
// unless the environment already chose; every expectation is derived from the environment.
#include <catch2/catch.hpp>
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

TEST_CASE("cudaMalloc counts 256-byte blocks against the capacity, cudaFree gives them back") {
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

TEST_CASE("threads allocate, copy and make streams and events at once, the books balance") {
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
