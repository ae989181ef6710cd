// Internal: the engine's cpu::onednn::Scratch, blocks from the CPU allocator kept alive for one call.
//
//   TensorScratch scratch;
//   conv->run(src, weight, bias, dst, scratch);   // its reorder buffers and scratchpad are tensors
//
// The blocks are tensors, so a profile shows them as the op's temporaries; they are freed with the scratch.
#pragma once
#include <vector>

#include "cpu/onednn/scratch.h"
#include "rt/tensor.h"

namespace rt {

class TensorScratch final : public cpu::onednn::Scratch {
 public:
  void* allocate(size_t bytes) override {
    blocks_.push_back(make_tensor({int64_t(bytes)}, kUInt8));
    return blocks_.back().raw_data();
  }

 private:
  std::vector<Tensor> blocks_;
};

}  // namespace rt
