#include "backward_streams.h"

#include "cuda/backend.h"

namespace rt::autograd::detail {

void BackwardStreams::enter(const Node& node) {
  const OutputMeta* meta = nullptr;
  for (const OutputMeta& m : node.output_meta())
    if (m.has_stream) {
      meta = &m;
      break;
    }
  if (!meta) return;
  DeviceStreams* d = nullptr;
  for (DeviceStreams& s : devices_)
    if (s.device == meta->device) d = &s;
  if (!d) {
    void* current = cuda::detail::stream(meta->device);
    d = &devices_.emplace_back(DeviceStreams{meta->device, current, current});
  }
  if (meta->stream == d->last) return;
  cuda::detail::stream_wait(d->device, meta->stream, d->last);
  cuda::detail::set_stream(d->device, meta->stream);
  d->last = meta->stream;
}

BackwardStreams::~BackwardStreams() {
  for (const DeviceStreams& d : devices_) {
    if (d.last == d.caller) continue;
    try {
      cuda::detail::stream_wait(d.device, d.caller, d.last);
    } catch (...) {
      // A broken CUDA context: the error shows at the caller's next CUDA call.
    }
    cuda::detail::set_stream(d.device, d.caller);
  }
}

}  // namespace rt::autograd::detail
