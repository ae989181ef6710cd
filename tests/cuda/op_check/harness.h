// The op check's harness: runs one case on the CPU and on cuda:0 from the same inputs and compares
// outputs and gradients (ggml's test-backend-ops idea).
//
//   OpCheck check;
//   check.run({.op = "add", .inputs = {randn_t({4, 5}), randn_t({5})}, .grad = {true, true},
//              .fn = [](const TensorList& in, Device) { return TensorList{in[0] + in[1]}; }});
//   return check.summary();   // prints the totals; 0 when every case passed, 1 otherwise
//
// Contracts:
// - `inputs` are made on the CPU (cases.h's helpers, from the default generator). Each device's run
//   gets its own copy: clone() on the CPU, .cuda() on the GPU, detached, requiring grad where
//   `grad` says. `fn` builds anything else it needs (scalars, masks, factories) on the `Device` it
//   is given. 0-dim CPU tensors made inside fn stay on the CPU in both runs, as Python numbers do.
// - The default generator is re-seeded with `seed` before each run, so random ops (rand, randn,
//   dropout) draw the same counters on both devices.
// - Outputs of the CUDA run must be on the GPU unless `host_outputs` is set. Outputs are compared
//   with the case's tolerance class scaled by their dtype (bound() below); NaN must appear in the
//   same places on both devices, infinities must be equal.
// - When an output requires grad, the harness backpropagates sum_i sum(out_i * w_i), with w_i a fixed
//   random tensor of out_i's shape and dtype made on the CPU (copied to the GPU for that run), and
//   compares the gradient of every input with `grad` set (undefined on both counts as equal).
// - One line per case: status, op, input shapes, dtype, max abs and max rel error, and the first
//   problem found. An exception in either run fails the case with its message.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "rt/rt.h"

namespace rt::op_check {

// How far the GPU may drift from the CPU: exact (random draws, copies, integer results),
// elementwise math, reductions (different summation order), matrix products (cuBLAS, TF32 off),
// and whole training steps (errors compound over several ops and steps).
enum class Tol { Exact, Pointwise, Reduction, Matmul, Model };

struct Bound {
  double atol = 0.0, rtol = 0.0;
};
// The bound for a tensor of dtype `dt` under tolerance class `tol`: |cpu - gpu| <= atol + rtol * |cpu|.
Bound bound(Tol tol, ScalarType dt);

using CaseFn = std::function<TensorList(const TensorList& inputs, Device device)>;

struct OpCase {
  std::string op;            // the op under test, as the engine names it ("add", "cross_entropy")
  std::string variant;       // what distinguishes this case ("keepdim", "ignore_index=1"); may be empty
  TensorList inputs;         // on the CPU
  std::vector<bool> grad;    // per input: requires grad (missing entries: false)
  Tol tol = Tol::Pointwise;
  uint64_t seed = 1234;      // re-seeds the default generator before each device's run
  bool host_outputs = false; // the CUDA run returns CPU tensors on purpose (D2H copies, item())
  CaseFn fn;                 // last, so that case literals read "what, on what, then how"
};

// Largest errors over every compared tensor of a case and the first thing that was wrong.
struct CaseResult {
  double max_abs = 0.0, max_rel = 0.0;
  std::string problem;  // empty: passed
};

class OpCheck {
 public:
  // Only cases whose "op variant" text contains `filter` run (empty: all). `device` is what the
  // CPU is compared with: cuda:0, or the CPU itself for --self-test (checks the cases and the
  // harness on a machine without a GPU: every case must run and be deterministic).
  // `max_elements` > 0 skips (and counts) the cases whose inputs hold more elements than that: the
  // CUDA emulator (kernels/cuda_emulator/) runs a thread per fiber, too slow for the few cases sized
  // for a GPU's limits.
  explicit OpCheck(std::string filter = {}, Device device = Device::cuda(0), int64_t max_elements = 0)
      : filter_(std::move(filter)), device_(device), max_elements_(max_elements) {}
  // Runs the case on both devices, prints its line, and records the outcome.
  void run(const OpCase& c);
  // Prints the totals and the failed cases; returns the process exit code (0 or 1).
  int summary() const;

 private:
  std::string filter_;
  Device device_;
  int64_t max_elements_ = 0;
  int passed_ = 0;
  std::vector<std::string> skipped_;
  std::vector<std::string> failed_;
};

// Compares a CPU result with the GPU's (copied back here); accumulates into `r`. `what` names the
// tensor in r.problem ("output 0", "grad of input 1").
void compare_into(CaseResult& r, const std::string& what, const Tensor& cpu, const Tensor& gpu, Tol tol);

}  // namespace rt::op_check
