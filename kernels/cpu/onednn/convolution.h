// kernels/cpu/onednn/convolution.h — conv2d forward and backward through oneDNN (as PyTorch's CPU
// convolutions run), on dense NCHW buffers.
//
//   rt::cpu::onednn::ConvProblem p{.N = 64, .Cin = 32, .Cout = 64, .groups = 1, .g = geometry, .bias = true};
//   if (auto conv = rt::cpu::onednn::ConvForward::plan(p))
//     conv->run(src, weight, bias, dst, scratch);
//   else
//     ...;                                      // oneDNN has no fast kernel for it: run im2col + GEMM
//
// Operands: src [N, Cin, H, W], weights [Cout, Cin/groups, kH, kW], bias [Cout], dst [N, Cout, oH, oW],
// all dense row-major in p.dtype (float32, or bfloat16 where the CPU has it). Inside the primitive
// oneDNN may use its blocked layouts (Note [oneDNN convolution layouts] in convolution.cpp); run()
// reorders into and out of them through `scratch`.
// plan() returns nullopt when oneDNN cannot run the problem well: a dtype it lacks, or a geometry only
// its reference code handles (far slower than im2col + GEMM). Any other oneDNN failure, in plan() or
// run(), throws rt::Error. Primitives come from oneDNN's primitive cache (keyed on the problem), so a
// repeated shape skips their JIT compilation. A plan is immutable and may run on any thread.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>

#include "../im2col.h"
#include "scratch.h"
#include "rt/dtype.h"
#include "rt/export.h"

RT_API_BEGIN

namespace rt::cpu::onednn {

struct ConvProblem {
  int64_t N = 1, Cin = 1, Cout = 1, groups = 1;
  ConvGeometry g;                 // of one group (g.C = Cin / groups), finish()ed
  ScalarType dtype = kFloat32;
  bool bias = false;              // forward: add bias; backward weights: also write diff_bias
};

struct ConvPlanState;  // convolution.cpp: the primitive descriptor and its memory descriptors

class ConvForward {
 public:
  static std::optional<ConvForward> plan(const ConvProblem& p);
  void run(const void* src, const void* weights, const void* bias, void* dst, Scratch& scratch) const;

 private:
  std::shared_ptr<const ConvPlanState> state_;
};

class ConvBackwardData {
 public:
  static std::optional<ConvBackwardData> plan(const ConvProblem& p);  // p.bias is ignored
  // `shared`: see SharedReorders (scratch.h); give the weight gradient's run the same one.
  void run(const void* diff_dst, const void* weights, void* diff_src, Scratch& scratch,
           SharedReorders* shared = nullptr) const;

 private:
  std::shared_ptr<const ConvPlanState> state_;
};

class ConvBackwardWeights {
 public:
  static std::optional<ConvBackwardWeights> plan(const ConvProblem& p);
  // diff_bias is written when p.bias (and may be nullptr otherwise).
  void run(const void* src, const void* diff_dst, void* diff_weights, void* diff_bias, Scratch& scratch,
           SharedReorders* shared = nullptr) const;

 private:
  std::shared_ptr<const ConvPlanState> state_;
};

}  // namespace rt::cpu::onednn

RT_API_END
