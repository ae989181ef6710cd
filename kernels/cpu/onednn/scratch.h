// kernels/cpu/onednn/scratch.h — memory the engine lends a oneDNN call.
//
//   struct TensorScratch final : rt::cpu::onednn::Scratch {     // the engine's (engine/src/ops/onednn_scratch.h)
//     void* allocate(size_t bytes) override { ... keep a tensor of `bytes` alive, return its data ... }
//   } scratch;
//   rt::cpu::onednn::conv_forward(problem, operands, scratch);   // reordered operands and the scratchpad live there
//
// oneDNN kernels need buffers: operands reordered into the blocked layouts its fast kernels read,
// and each primitive's scratchpad. The kernels ask for them here instead of letting oneDNN allocate,
// so they come from the engine's allocator and show in a profile as the op's temporaries. A block
// stays valid until the Scratch is destroyed, which the engine does after the call returns.
#pragma once
#include <cstddef>
#include <memory>

#include "rt/export.h"

RT_API_BEGIN

namespace rt::cpu::onednn {

class Scratch {
 public:
  // At least `bytes` bytes, 64-byte aligned; never nullptr (throws rt::OutOfMemoryError instead).
  virtual void* allocate(size_t bytes) = 0;

 protected:
  ~Scratch() = default;
};

// Reordered copies of inputs that several primitive runs of one call read, kept so the reorder happens
// once: a convolution's input and weight gradients both read diff_dst. Pass one object to each run; its
// copies live in the Scratch they were allocated from, so it must not outlive that Scratch, and a copy is
// found by the input's address and layout, so the inputs must stay where they are while it is in use.
class SharedReorders {
 public:
  SharedReorders();
  ~SharedReorders();
  SharedReorders(const SharedReorders&) = delete;
  SharedReorders& operator=(const SharedReorders&) = delete;

 private:
  friend class Execution;  // runtime.h
  struct Entries;
  std::unique_ptr<Entries> entries_;
};

}  // namespace rt::cpu::onednn

RT_API_END
