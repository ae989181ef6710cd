// Note [Backward streams]
// As in PyTorch, each backward node runs on the CUDA stream its forward op ran on (recorded in
// OutputMeta::stream by record()), not on whatever stream is current when backward() is called:
//
//   with rt.cuda.stream(s):  loss = model(x)      # forward on s
//   loss.backward()                               # the nodes run on s as well
//
// The engine runs nodes one at a time on one thread, so ordering needs no per-edge bookkeeping:
// whenever the stream changes on a device, the new stream waits for the one used before it, which
// orders every node after all earlier ones (and allocations after the uses of earlier blocks). At
// the end the caller's current stream of each device waits for the last stream used there and is
// current again. Nodes that recorded no stream (AccumulateGrad, CPU ops) run where the last node did.
#pragma once
#include <vector>

#include "rt/autograd/node.h"

namespace rt::autograd::detail {

class BackwardStreams {
 public:
  BackwardStreams() = default;
  // Restores the callers' current streams; they wait for the last stream used. Never throws.
  ~BackwardStreams();
  BackwardStreams(const BackwardStreams&) = delete;
  BackwardStreams& operator=(const BackwardStreams&) = delete;

  // Makes the stream `node`'s forward ran on current (waiting for the previous one) before it runs.
  void enter(const Node& node);

 private:
  struct DeviceStreams {
    Device device;
    void* caller;  // current when backward started
    void* last;    // current now
  };
  std::vector<DeviceStreams> devices_;
};

}  // namespace rt::autograd::detail
