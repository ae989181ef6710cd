// kernels/cuda_emulator/runtime.cpp — the part of the CUDA runtime API the engine calls, on the CPU.
//
// Linked instead of libcudart (see emulator.h). Each function keeps the exact signature and C
// linkage of <cuda_runtime_api.h>, returns the codes the real runtime returns for the same
// mistakes, and records every failure as this thread's last error (cudaGetLastError).
//
// The model: work runs when it is issued (kernels when launched, copies when called), so every
// stream and event is always idle; streams and events are still real handles, validated on each
// use, so a destroyed or made-up handle fails as on a GPU. Device memory is host memory from
// posix_memalign, counted against each device's capacity; copies and memsets check that the
// device side of the transfer lies inside a live cudaMalloc block, which a GPU would fault on.
//
// Settings, read from the environment:
//   RT_CUDA_EMULATED_DEVICES=0..8   devices (none when unset: a build that emulates CUDA behaves like a
//                                   machine without a GPU, cudaErrorNoDevice, until a test asks for
//                                   devices), read once, at the first call;
//   RT_CUDA_EMULATED_MEMORY_MB=N    each device's capacity (8 GiB when unset), read at every
//                                   cudaMalloc / cudaMemGetInfo / cudaGetDeviceProperties, so a
//                                   test may shrink it; a device over the new capacity has none free.
// A malformed value is reported on stderr once and fails the calls that need it with
// cudaErrorInitializationError, as a runtime that could not start would.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "emulator.h"

namespace rt::cuda_emulator {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxDevices = 8;
constexpr size_t kDeviceAlignment = 256;    // what cudaMalloc guarantees
constexpr size_t kPinnedAlignment = 4096;   // cudaHostAlloc hands out whole pages
constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kDefaultCapacity = size_t(8) << 30;
// Stream priorities as an H100 reports them: lower numbers run first.
constexpr int kLeastPriority = 0, kGreatestPriority = -5;

thread_local cudaError_t t_last_error = cudaSuccess;
thread_local int t_device = 0;

// Records `e` as this thread's last error and returns it: `return fail(cudaErrorInvalidValue);`.
cudaError_t fail(cudaError_t e) {
  set_last_error(e);
  return e;
}

// A whole-string decimal integer, or false ("", "12abc", overflow).
bool parse_integer(const char* text, long long& value) {
  const std::string_view s(text);
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

struct DeviceSetup {
  int count = 0;
  // cudaErrorNoDevice with no devices; cudaErrorInitializationError when RT_CUDA_EMULATED_DEVICES is malformed
  cudaError_t status = cudaSuccess;
};

const DeviceSetup& device_setup() {
  static const DeviceSetup setup = [] {
    const char* text = std::getenv("RT_CUDA_EMULATED_DEVICES");
    if (!text) return DeviceSetup{0, cudaErrorNoDevice};
    long long n = 0;
    if (parse_integer(text, n) && n >= 0 && n <= kMaxDevices)
      return DeviceSetup{int(n), n == 0 ? cudaErrorNoDevice : cudaSuccess};
    std::fprintf(stderr, "CUDA emulator: RT_CUDA_EMULATED_DEVICES=\"%s\" is not a device count from 0 to %d\n", text,
                 kMaxDevices);
    return DeviceSetup{0, cudaErrorInitializationError};
  }();
  return setup;
}

// cudaSuccess when `device` is an emulated device's ordinal; else the setup's error or cudaErrorInvalidDevice.
cudaError_t check_device(int device) {
  const DeviceSetup& setup = device_setup();
  if (setup.status != cudaSuccess) return setup.status;
  return device >= 0 && device < setup.count ? cudaSuccess : cudaErrorInvalidDevice;
}

// Each device's capacity in bytes, or cudaErrorInitializationError when RT_CUDA_EMULATED_MEMORY_MB is malformed.
cudaError_t device_capacity(size_t& bytes) {
  const char* text = std::getenv("RT_CUDA_EMULATED_MEMORY_MB");
  if (!text) {
    bytes = kDefaultCapacity;
    return cudaSuccess;
  }
  long long mib = 0;
  constexpr long long kMaxMiB = 1LL << 24;  // 16 TiB: anything larger is a typo
  if (parse_integer(text, mib) && mib >= 1 && mib <= kMaxMiB) {
    bytes = size_t(mib) * kMiB;
    return cudaSuccess;
  }
  static std::once_flag reported;
  std::call_once(reported, [text] {
    std::fprintf(stderr, "CUDA emulator: RT_CUDA_EMULATED_MEMORY_MB=\"%s\" is not a size in MiB from 1 to %lld\n", text,
                 kMaxMiB);
  });
  return cudaErrorInitializationError;
}

size_t round_up(size_t bytes, size_t alignment) { return (bytes + alignment - 1) / alignment * alignment; }

// ---- Memory -------------------------------------------------------------------------------------

struct Allocation {
  size_t requested;  // what cudaMalloc was asked for: copies must stay inside it
  size_t reserved;   // rounded up to the alignment: what counts against the capacity
};

struct DeviceMemory {
  std::mutex mu;
  std::map<uintptr_t, Allocation> blocks;  // by start address, to find the block holding any address
  size_t reserved = 0;
};

// Leaked on purpose, like every table below: tensors held by statics are freed after main returns.
DeviceMemory& memory_of(int device) {
  static auto* memories = new std::array<DeviceMemory, kMaxDevices>();
  return (*memories)[size_t(device)];
}

struct PinnedMemory {
  std::mutex mu;
  std::unordered_set<void*> blocks;
};

PinnedMemory& pinned_memory() {
  static auto* pinned = new PinnedMemory();
  return *pinned;
}

// The device whose live cudaMalloc block holds all of [p, p + bytes), or -1 (host memory, a freed
// block, or a range running past the end of its block).
int device_holding(const void* p, size_t bytes) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  for (int d = 0; d < device_setup().count; ++d) {
    DeviceMemory& memory = memory_of(d);
    std::lock_guard<std::mutex> lk(memory.mu);
    auto it = memory.blocks.upper_bound(address);
    if (it == memory.blocks.begin()) continue;
    --it;
    const size_t offset = address - it->first;
    if (offset < it->second.requested && bytes <= it->second.requested - offset) return d;
  }
  return -1;
}

// ---- Streams and events -------------------------------------------------------------------------

struct Stream {
  int device;
  unsigned flags;
  int priority;
};

struct Event {
  int device;
  unsigned flags;
  bool recorded = false;
  Clock::time_point recorded_at{};
};

// The live streams and events. One mutex guards both sets and the events' fields.
struct Handles {
  std::mutex mu;
  std::unordered_set<Stream*> streams;
  std::unordered_set<Event*> events;
};

Handles& handles() {
  static auto* h = new Handles();
  return *h;
}

Stream* as_stream(cudaStream_t s) { return reinterpret_cast<Stream*>(s); }
Event* as_event(cudaEvent_t e) { return reinterpret_cast<Event*>(e); }

bool is_default_stream(cudaStream_t s) { return s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread; }

// The live stream `s`, or nullptr for a default stream or a handle that is not (or no longer) a stream.
// Requires handles().mu.
Stream* live_stream(cudaStream_t s) {
  if (is_default_stream(s)) return nullptr;
  return handles().streams.count(as_stream(s)) ? as_stream(s) : nullptr;
}

// cudaSuccess when `s` is a default stream or a live one. Requires handles().mu.
cudaError_t check_stream_locked(cudaStream_t s) {
  return is_default_stream(s) || live_stream(s) ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

cudaError_t check_stream(cudaStream_t s) {
  if (is_default_stream(s)) return cudaSuccess;
  std::lock_guard<std::mutex> lk(handles().mu);
  return check_stream_locked(s);
}

// The live event `e`, or nullptr. Requires handles().mu.
Event* live_event(cudaEvent_t e) { return handles().events.count(as_event(e)) ? as_event(e) : nullptr; }

cudaError_t check_event(cudaEvent_t e) {
  std::lock_guard<std::mutex> lk(handles().mu);
  return live_event(e) ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

// ---- Copies -------------------------------------------------------------------------------------

// Copies at once, after checking the kind, the stream, and that each side the kind calls device
// memory lies inside a cudaMalloc block (cudaMemcpyDefault and host sides are taken as given).
cudaError_t copy_now(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream) {
  bool dst_on_device = false, src_on_device = false;
  switch (kind) {
    case cudaMemcpyHostToHost: break;
    case cudaMemcpyHostToDevice: dst_on_device = true; break;
    case cudaMemcpyDeviceToHost: src_on_device = true; break;
    case cudaMemcpyDeviceToDevice: dst_on_device = src_on_device = true; break;
    case cudaMemcpyDefault: break;
    default: return fail(cudaErrorInvalidMemcpyDirection);
  }
  if (const cudaError_t e = check_stream(stream); e != cudaSuccess) return fail(e);
  if (count == 0) return cudaSuccess;
  if (!dst || !src) return fail(cudaErrorInvalidValue);
  if ((dst_on_device && device_holding(dst, count) < 0) || (src_on_device && device_holding(src, count) < 0))
    return fail(cudaErrorInvalidValue);
  std::memmove(dst, src, count);
  return cudaSuccess;
}

// ---- Function attributes ------------------------------------------------------------------------

struct FunctionAttributes {
  std::mutex mu;
  std::unordered_map<const void*, size_t> max_dynamic_shared;  // cudaFuncAttributeMaxDynamicSharedMemorySize
};

FunctionAttributes& function_attributes() {
  static auto* a = new FunctionAttributes();
  return *a;
}

// ---- Device description -------------------------------------------------------------------------

constexpr int kComputeMajor = 9, kComputeMinor = 0;
constexpr int kWarpSize = 32;
constexpr int kMaxBlockDim[3] = {1024, 1024, 64};
constexpr int kMaxGridDim[3] = {2147483647, 65535, 65535};
constexpr size_t kSharedPerMultiprocessor = 228 * 1024;
constexpr int kRegistersPerBlock = 65536;
constexpr int kL2CacheBytes = 50 << 20;
constexpr int kMemoryBusWidthBits = 5120;
constexpr size_t kConstantMemoryBytes = 64 * 1024;
constexpr int kClockKHz = 1980000;        // H100 SXM boost clock
constexpr int kMemoryClockKHz = 2619000;  // its HBM3 clock

// ---- Error names --------------------------------------------------------------------------------

struct ErrorText {
  cudaError_t code;
  const char* name;
  const char* description;
};

// libcudart's own names and descriptions.
constexpr ErrorText kErrorTexts[] = {
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
    {cudaErrorLaunchOutOfResources, "cudaErrorLaunchOutOfResources", "too many resources requested for launch"},
    {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

const ErrorText* text_of(cudaError_t e) {
  for (const ErrorText& t : kErrorTexts)
    if (t.code == e) return &t;
  return nullptr;
}

}  // namespace

void set_last_error(cudaError_t e) {
  if (e != cudaSuccess) t_last_error = e;
}

int current_device() { return t_device; }

cudaError_t check_launch_stream(cudaStream_t stream) { return check_stream(stream); }

size_t max_dynamic_shared_bytes(const void* kernel) {
  FunctionAttributes& a = function_attributes();
  std::lock_guard<std::mutex> lk(a.mu);
  const auto it = a.max_dynamic_shared.find(kernel);
  return it == a.max_dynamic_shared.end() ? kDefaultSharedBytes : it->second;
}

}  // namespace rt::cuda_emulator

using namespace rt::cuda_emulator;

// ---- Errors and versions ------------------------------------------------------------------------

extern "C" cudaError_t cudaGetLastError() { return std::exchange(t_last_error, cudaSuccess); }

extern "C" cudaError_t cudaPeekAtLastError() { return t_last_error; }

extern "C" const char* cudaGetErrorName(cudaError_t error) {
  const ErrorText* t = text_of(error);
  return t ? t->name : "unrecognized error code";
}

extern "C" const char* cudaGetErrorString(cudaError_t error) {
  const ErrorText* t = text_of(error);
  return t ? t->description : "unrecognized error code";
}

extern "C" cudaError_t cudaDriverGetVersion(int* driverVersion) {
  if (!driverVersion) return fail(cudaErrorInvalidValue);
  *driverVersion = CUDART_VERSION;
  return cudaSuccess;
}

extern "C" cudaError_t cudaRuntimeGetVersion(int* runtimeVersion) {
  if (!runtimeVersion) return fail(cudaErrorInvalidValue);
  *runtimeVersion = CUDART_VERSION;
  return cudaSuccess;
}

// ---- Devices ------------------------------------------------------------------------------------

extern "C" cudaError_t cudaGetDeviceCount(int* count) {
  if (!count) return fail(cudaErrorInvalidValue);
  *count = device_setup().count;
  return device_setup().status == cudaSuccess ? cudaSuccess : fail(device_setup().status);
}

extern "C" cudaError_t cudaSetDevice(int device) {
  if (const cudaError_t e = check_device(device); e != cudaSuccess) return fail(e);
  t_device = device;
  return cudaSuccess;
}

extern "C" cudaError_t cudaGetDevice(int* device) {
  if (!device) return fail(cudaErrorInvalidValue);
  if (const cudaError_t e = check_device(t_device); e != cudaSuccess) return fail(e);
  *device = t_device;
  return cudaSuccess;
}

// Nothing is ever pending.
extern "C" cudaError_t cudaDeviceSynchronize() {
  const cudaError_t e = check_device(t_device);
  return e == cudaSuccess ? e : fail(e);
}

extern "C" cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (!prop) return fail(cudaErrorInvalidValue);
  if (const cudaError_t e = check_device(device); e != cudaSuccess) return fail(e);
  size_t capacity = 0;
  if (const cudaError_t e = device_capacity(capacity); e != cudaSuccess) return fail(e);
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof prop->name, "%s", "CUDA emulator on the CPU (RustyTorch++)");
  prop->major = kComputeMajor;
  prop->minor = kComputeMinor;
  prop->totalGlobalMem = capacity;
  prop->multiProcessorCount = kMultiprocessors;
  prop->maxThreadsPerBlock = kMaxThreadsPerBlock;
  std::copy(std::begin(kMaxBlockDim), std::end(kMaxBlockDim), prop->maxThreadsDim);
  std::copy(std::begin(kMaxGridDim), std::end(kMaxGridDim), prop->maxGridSize);
  prop->warpSize = kWarpSize;
  prop->sharedMemPerBlock = kDefaultSharedBytes;
  prop->sharedMemPerBlockOptin = kMaxSharedBytesOptin;
  prop->sharedMemPerMultiprocessor = kSharedPerMultiprocessor;
  prop->regsPerBlock = kRegistersPerBlock;
  prop->l2CacheSize = kL2CacheBytes;
  prop->memoryBusWidth = kMemoryBusWidthBits;
  prop->totalConstMem = kConstantMemoryBytes;
  // CUDA 13's cudaDeviceProp has no clockRate / memoryClockRate: cudaDeviceGetAttribute answers them.
  return cudaSuccess;
}

extern "C" cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (!value) return fail(cudaErrorInvalidValue);
  if (const cudaError_t e = check_device(device); e != cudaSuccess) return fail(e);
  switch (attr) {
    case cudaDevAttrComputeCapabilityMajor: *value = kComputeMajor; break;
    case cudaDevAttrComputeCapabilityMinor: *value = kComputeMinor; break;
    case cudaDevAttrMultiProcessorCount: *value = kMultiprocessors; break;
    case cudaDevAttrMaxThreadsPerBlock: *value = kMaxThreadsPerBlock; break;
    case cudaDevAttrMaxBlockDimX: *value = kMaxBlockDim[0]; break;
    case cudaDevAttrMaxBlockDimY: *value = kMaxBlockDim[1]; break;
    case cudaDevAttrMaxBlockDimZ: *value = kMaxBlockDim[2]; break;
    case cudaDevAttrMaxGridDimX: *value = kMaxGridDim[0]; break;
    case cudaDevAttrMaxGridDimY: *value = kMaxGridDim[1]; break;
    case cudaDevAttrMaxGridDimZ: *value = kMaxGridDim[2]; break;
    case cudaDevAttrWarpSize: *value = kWarpSize; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = int(kDefaultSharedBytes); break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = int(kMaxSharedBytesOptin); break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = int(kSharedPerMultiprocessor); break;
    case cudaDevAttrMaxRegistersPerBlock: *value = kRegistersPerBlock; break;
    case cudaDevAttrL2CacheSize: *value = kL2CacheBytes; break;
    case cudaDevAttrGlobalMemoryBusWidth: *value = kMemoryBusWidthBits; break;
    case cudaDevAttrTotalConstantMemory: *value = int(kConstantMemoryBytes); break;
    case cudaDevAttrClockRate: *value = kClockKHz; break;
    case cudaDevAttrMemoryClockRate: *value = kMemoryClockKHz; break;
    default: return fail(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

extern "C" cudaError_t cudaDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  if (const cudaError_t e = check_device(t_device); e != cudaSuccess) return fail(e);
  if (leastPriority) *leastPriority = kLeastPriority;  // either pointer may be null, as in CUDA
  if (greatestPriority) *greatestPriority = kGreatestPriority;
  return cudaSuccess;
}

extern "C" cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
  if (!func) return fail(cudaErrorInvalidDeviceFunction);
  switch (attr) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize: {
      if (value < 0 || size_t(value) > kMaxSharedBytesOptin) return fail(cudaErrorInvalidValue);
      FunctionAttributes& a = function_attributes();
      std::lock_guard<std::mutex> lk(a.mu);
      a.max_dynamic_shared[func] = size_t(value);
      return cudaSuccess;
    }
    case cudaFuncAttributePreferredSharedMemoryCarveout:
      // A hint in percent of the shared memory per SM (-1: no preference); fibers have no carveout.
      return value >= -1 && value <= 100 ? cudaSuccess : fail(cudaErrorInvalidValue);
    default: return fail(cudaErrorInvalidValue);
  }
}

// ---- Device memory ------------------------------------------------------------------------------

extern "C" cudaError_t cudaMalloc(void** devPtr, size_t size) {
  if (!devPtr) return fail(cudaErrorInvalidValue);
  *devPtr = nullptr;
  if (const cudaError_t e = check_device(t_device); e != cudaSuccess) return fail(e);
  if (size == 0) return cudaSuccess;  // a null pointer, as CUDA gives
  size_t capacity = 0;
  if (const cudaError_t e = device_capacity(capacity); e != cudaSuccess) return fail(e);
  if (size > capacity) return fail(cudaErrorMemoryAllocation);  // also keeps round_up from overflowing
  const size_t reserved = round_up(size, kDeviceAlignment);
  DeviceMemory& memory = memory_of(t_device);
  std::lock_guard<std::mutex> lk(memory.mu);
  if (memory.reserved > capacity || reserved > capacity - memory.reserved) return fail(cudaErrorMemoryAllocation);
  // Exactly `size` bytes (posix_memalign takes any size): under AddressSanitizer a kernel reading one
  // element past a tensor then faults, as compute-sanitizer's memcheck reports it on a GPU (with
  // PYTORCH_NO_CUDA_MEMORY_CACHING=1 each tensor is its own allocation).
  void* p = nullptr;
  if (posix_memalign(&p, kDeviceAlignment, size) != 0) return fail(cudaErrorMemoryAllocation);
  memory.blocks.emplace(reinterpret_cast<uintptr_t>(p), Allocation{size, reserved});
  memory.reserved += reserved;
  *devPtr = p;
  return cudaSuccess;
}

// Frees a block of any device (addresses are unified), as CUDA does; interior pointers are refused.
extern "C" cudaError_t cudaFree(void* devPtr) {
  if (!devPtr) return cudaSuccess;
  for (int d = 0; d < device_setup().count; ++d) {
    DeviceMemory& memory = memory_of(d);
    std::lock_guard<std::mutex> lk(memory.mu);
    const auto it = memory.blocks.find(reinterpret_cast<uintptr_t>(devPtr));
    if (it == memory.blocks.end()) continue;
    memory.reserved -= it->second.reserved;
    memory.blocks.erase(it);
    std::free(devPtr);
    return cudaSuccess;
  }
  return fail(cudaErrorInvalidValue);
}

extern "C" cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  if (!free || !total) return fail(cudaErrorInvalidValue);
  if (const cudaError_t e = check_device(t_device); e != cudaSuccess) return fail(e);
  size_t capacity = 0;
  if (const cudaError_t e = device_capacity(capacity); e != cudaSuccess) return fail(e);
  DeviceMemory& memory = memory_of(t_device);
  std::lock_guard<std::mutex> lk(memory.mu);
  *free = capacity > memory.reserved ? capacity - memory.reserved : 0;
  *total = capacity;
  return cudaSuccess;
}

// ---- Pinned host memory -------------------------------------------------------------------------

extern "C" cudaError_t cudaHostAlloc(void** pHost, size_t size, unsigned int flags) {
  if (!pHost) return fail(cudaErrorInvalidValue);
  *pHost = nullptr;
  if (flags & ~unsigned(cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined))
    return fail(cudaErrorInvalidValue);
  if (const cudaError_t e = check_device(t_device); e != cudaSuccess) return fail(e);
  if (size == 0) return cudaSuccess;
  if (size > SIZE_MAX - kPinnedAlignment) return fail(cudaErrorMemoryAllocation);
  void* p = std::aligned_alloc(kPinnedAlignment, round_up(size, kPinnedAlignment));
  if (!p) return fail(cudaErrorMemoryAllocation);
  PinnedMemory& pinned = pinned_memory();
  std::lock_guard<std::mutex> lk(pinned.mu);
  pinned.blocks.insert(p);
  *pHost = p;
  return cudaSuccess;
}

extern "C" cudaError_t cudaFreeHost(void* ptr) {
  if (!ptr) return cudaSuccess;
  PinnedMemory& pinned = pinned_memory();
  std::lock_guard<std::mutex> lk(pinned.mu);
  if (!pinned.blocks.erase(ptr)) return fail(cudaErrorInvalidValue);
  std::free(ptr);
  return cudaSuccess;
}

// ---- Copies and memset --------------------------------------------------------------------------

extern "C" cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  return copy_now(dst, src, count, kind, nullptr);
}

extern "C" cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                                       cudaStream_t stream) {
  return copy_now(dst, src, count, kind, stream);
}

extern "C" cudaError_t cudaMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice, size_t count,
                                           cudaStream_t stream) {
  if (const cudaError_t e = check_device(dstDevice); e != cudaSuccess) return fail(e);
  if (const cudaError_t e = check_device(srcDevice); e != cudaSuccess) return fail(e);
  if (const cudaError_t e = check_stream(stream); e != cudaSuccess) return fail(e);
  if (count == 0) return cudaSuccess;
  if (!dst || !src || device_holding(dst, count) != dstDevice || device_holding(src, count) != srcDevice)
    return fail(cudaErrorInvalidValue);
  std::memmove(dst, src, count);
  return cudaSuccess;
}

extern "C" cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream) {
  if (const cudaError_t e = check_stream(stream); e != cudaSuccess) return fail(e);
  if (count == 0) return cudaSuccess;
  if (!devPtr || device_holding(devPtr, count) < 0) return fail(cudaErrorInvalidValue);
  std::memset(devPtr, value, count);
  return cudaSuccess;
}

// ---- Streams ------------------------------------------------------------------------------------

extern "C" cudaError_t cudaStreamCreateWithPriority(cudaStream_t* pStream, unsigned int flags, int priority) {
  if (!pStream) return fail(cudaErrorInvalidValue);
  if (flags != cudaStreamDefault && flags != cudaStreamNonBlocking) return fail(cudaErrorInvalidValue);
  if (const cudaError_t e = check_device(t_device); e != cudaSuccess) return fail(e);
  // Out-of-range priorities are clamped, not refused, as CUDA documents.
  auto* s = new Stream{t_device, flags, std::clamp(priority, kGreatestPriority, kLeastPriority)};
  std::lock_guard<std::mutex> lk(handles().mu);
  handles().streams.insert(s);
  *pStream = reinterpret_cast<cudaStream_t>(s);
  return cudaSuccess;
}

extern "C" cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  std::lock_guard<std::mutex> lk(handles().mu);
  Stream* s = live_stream(stream);
  if (!s) return fail(cudaErrorInvalidResourceHandle);  // including the default streams
  handles().streams.erase(s);
  delete s;
  return cudaSuccess;
}

extern "C" cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int* priority) {
  if (!priority) return fail(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(handles().mu);
  if (const cudaError_t e = check_stream_locked(hStream); e != cudaSuccess) return fail(e);
  const Stream* s = live_stream(hStream);
  *priority = s ? s->priority : kLeastPriority;  // the default streams have the default priority
  return cudaSuccess;
}

// Work finishes when it is issued: every valid stream is idle.
extern "C" cudaError_t cudaStreamQuery(cudaStream_t stream) {
  const cudaError_t e = check_stream(stream);
  return e == cudaSuccess ? e : fail(e);
}

extern "C" cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  const cudaError_t e = check_stream(stream);
  return e == cudaSuccess ? e : fail(e);
}

// Nothing to wait for once the handles are checked: the event's work is done.
extern "C" cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  if (flags != cudaEventWaitDefault && flags != cudaEventWaitExternal) return fail(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(handles().mu);
  if (const cudaError_t e = check_stream_locked(stream); e != cudaSuccess) return fail(e);
  if (!live_event(event)) return fail(cudaErrorInvalidResourceHandle);
  return cudaSuccess;
}

// Runs `fn` now: it would run once the stream's earlier work is done, which it already is.
extern "C" cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData) {
  if (const cudaError_t e = check_stream(stream); e != cudaSuccess) return fail(e);
  if (!fn) return fail(cudaErrorInvalidValue);
  fn(userData);
  return cudaSuccess;
}

// ---- Events -------------------------------------------------------------------------------------

extern "C" cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  if (!event) return fail(cudaErrorInvalidValue);
  constexpr unsigned kKnown = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
  if (flags & ~kKnown) return fail(cudaErrorInvalidValue);
  if ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming)) return fail(cudaErrorInvalidValue);
  if (const cudaError_t e = check_device(t_device); e != cudaSuccess) return fail(e);
  auto* created = new Event{t_device, flags};
  std::lock_guard<std::mutex> lk(handles().mu);
  handles().events.insert(created);
  *event = reinterpret_cast<cudaEvent_t>(created);
  return cudaSuccess;
}

extern "C" cudaError_t cudaEventCreate(cudaEvent_t* event) { return cudaEventCreateWithFlags(event, cudaEventDefault); }

extern "C" cudaError_t cudaEventDestroy(cudaEvent_t event) {
  std::lock_guard<std::mutex> lk(handles().mu);
  Event* e = live_event(event);
  if (!e) return fail(cudaErrorInvalidResourceHandle);
  handles().events.erase(e);
  delete e;
  return cudaSuccess;
}

// Marks the host time now. The event and the stream must belong to one device (a default stream is
// the current device's), else cudaErrorInvalidResourceHandle, as on a GPU.
extern "C" cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  std::lock_guard<std::mutex> lk(handles().mu);
  Event* e = live_event(event);
  if (!e) return fail(cudaErrorInvalidResourceHandle);
  if (const cudaError_t err = check_stream_locked(stream); err != cudaSuccess) return fail(err);
  const Stream* s = live_stream(stream);
  if ((s ? s->device : t_device) != e->device) return fail(cudaErrorInvalidResourceHandle);
  e->recorded = true;
  e->recorded_at = Clock::now();
  return cudaSuccess;
}

// A recorded event is complete at once; an unrecorded one counts as complete, as in CUDA.
extern "C" cudaError_t cudaEventQuery(cudaEvent_t event) {
  const cudaError_t e = check_event(event);
  return e == cudaSuccess ? e : fail(e);
}

extern "C" cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  const cudaError_t e = check_event(event);
  return e == cudaSuccess ? e : fail(e);
}

// Host milliseconds between the two records. CUDA's errors: cudaErrorInvalidResourceHandle when
// either event has timing disabled or was never recorded (cudaErrorNotReady, for a record not yet
// reached, cannot happen here).
extern "C" cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (!ms) return fail(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(handles().mu);
  const Event* a = live_event(start);
  const Event* b = live_event(end);
  if (!a || !b) return fail(cudaErrorInvalidResourceHandle);
  if ((a->flags | b->flags) & cudaEventDisableTiming) return fail(cudaErrorInvalidResourceHandle);
  if (!a->recorded || !b->recorded) return fail(cudaErrorInvalidResourceHandle);
  *ms = std::chrono::duration<float, std::milli>(b->recorded_at - a->recorded_at).count();
  return cudaSuccess;
}
