// engine/src/cuda/allocator_events.h — the CUDA events behind SegmentSource's event calls, shared by
// CudaSegmentSource (device memory) and CudaPinnedSource (pinned host memory).
//
//   void* e = rt::cuda::allocator_event_record(stream, "caching allocator");  // on the current device
//   if (rt::cuda::allocator_event_done(e, "caching allocator")) ...
//   rt::cuda::allocator_event_destroy(e, "caching allocator");
//
// Events are made with cudaEventDisableTiming. `who` names the caller in CUDA error messages.
// destroy does nothing once the CUDA runtime is unloading at exit. Built only with CUDA.
#pragma once

namespace rt::cuda {

void* allocator_event_record(void* stream, const char* who);
bool allocator_event_done(void* event, const char* who);
void allocator_event_wait(void* event, const char* who);
void allocator_event_destroy(void* event, const char* who);

}  // namespace rt::cuda
