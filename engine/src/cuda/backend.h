// Internal: what the rest of the engine asks of the CUDA backend. No CUDA headers here.
// engine/src/cuda/*.cpp implement it when RT_CUDA is built; engine/src/cuda/stub/ otherwise,
// where every call that needs a device throws DeviceError saying CUDA was not built.
#pragma once
#include "rt/allocator.h"
#include "rt/tensor.h"

namespace rt::cuda::detail {

// The caching allocator of CUDA device `index`; throws DeviceError when CUDA is unusable or
// the index is out of range (naming the devices there are).
Allocator* device_allocator(int index);

// dst = src (broadcast to dst's shape, as copy_ allows) on any devices, at least one of them a CUDA device,
// converting dtype. Returns once the copy is complete as far as the host can observe (copies
// to the host are synchronous; device copies are ordered on the device's stream). With
// non_blocking, a same-dtype copy from contiguous pinned memory to a contiguous GPU tensor is
// only queued on the device's current stream (the pinned block is kept from reuse until done).
void copy(const Tensor& dst, const Tensor& src, bool non_blocking = false);

// The caching allocator of page-locked host memory (cudaHostAlloc) behind rt::cuda::pin_memory;
// its device is the CPU. Throws DeviceError when CUDA is unusable.
Allocator* pinned_allocator();
// An asynchronous copy on `stream` (a cudaStream_t of `device`) reads pinned tensor `pinned`: its
// block is reused only after the work queued there by the time the tensor is freed.
void record_pinned_use(const Tensor& pinned, Device device, void* stream);

// Stream that ops on `device` launch on: the calling thread's current stream (streams.cpp); as a
// cudaStream_t, nullptr for the legacy default stream.
void* stream(Device device);
// Makes cudaStream_t `s` the calling thread's current stream of `device`.
void set_stream(Device device, void* s);
// Work queued on stream `waiting` of `device` from now on waits for the work queued on
// `producer` so far (an event; nothing when they are the same stream).
void stream_wait(Device device, void* waiting, void* producer);

}  // namespace rt::cuda::detail
