// kernels/cpu/onednn/pooling.h — avg_pool2d forward and backward through oneDNN, on dense NCHW buffers.
//
//   rt::cpu::onednn::AvgPoolProblem p{.N = 64, .C = 32, .H = 28, .W = 28, .oH = 14, .oW = 14,
//                                      .kH = 2, .kW = 2, .sH = 2, .sW = 2};
//   if (auto pool = rt::cpu::onednn::AvgPoolForward::plan(p))
//     pool->run(src, dst, scratch);
//   else
//     ...;                                      // the engine's loops
//
// src [N, C, H, W], dst [N, C, oH, oW], float32, dense row-major. Windows and divisors are PyTorch's:
// count_include_pad divides by the window clipped to the padded input, otherwise by its part inside the
// input. plan() returns nullopt for what oneDNN cannot express that way (a dtype other than float32; a
// ceil_mode window reaching past the right padding while count_include_pad, whose divisor oneDNN would
// count differently) and for its reference code. Other oneDNN failures throw rt::Error.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>

#include "scratch.h"
#include "rt/dtype.h"
#include "rt/export.h"

RT_API_BEGIN

namespace rt::cpu::onednn {

struct AvgPoolProblem {
  int64_t N = 1, C = 1, H = 1, W = 1, oH = 1, oW = 1;
  int64_t kH = 1, kW = 1, sH = 1, sW = 1, pH = 0, pW = 0;
  bool count_include_pad = true;
  ScalarType dtype = kFloat32;
};

struct AvgPoolPlanState;  // pooling.cpp

class AvgPoolForward {
 public:
  static std::optional<AvgPoolForward> plan(const AvgPoolProblem& p);
  void run(const void* src, void* dst, Scratch& scratch) const;

 private:
  std::shared_ptr<const AvgPoolPlanState> state_;
};

class AvgPoolBackward {
 public:
  static std::optional<AvgPoolBackward> plan(const AvgPoolProblem& p);
  void run(const void* diff_dst, void* diff_src, Scratch& scratch) const;

 private:
  std::shared_ptr<const AvgPoolPlanState> state_;
};

}  // namespace rt::cpu::onednn

RT_API_END
