// kernels/cpu/stop_request.h — how a long CPU kernel learns that its caller wants it to stop.
//
//   bool stop_if(const void* flag) { return static_cast<const std::atomic<bool>*>(flag)->load(); }
//   rt::cpu::StopRequest stop{stop_if, &flag};
//   rt::cpu::batched_matmul(out, a, b, 1.0, 0.0, stop);   // returns early, results incomplete
//
// A kernel polls requested() between independent pieces of work (one GEMM of a batch) and
// returns without finishing once it is true; the caller then reports the interruption (the engine
// throws rt::InterruptedError through rt::check_cancel). A default StopRequest never asks.
#pragma once
#include "rt/export.h"

RT_API_BEGIN

namespace rt::cpu {

struct StopRequest {
  bool (*poll)(const void* state) = nullptr;
  const void* state = nullptr;

  bool requested() const { return poll != nullptr && poll(state); }
};

}  // namespace rt::cpu

RT_API_END
