// rt/debug/paused_state.h — what the backward debugger shows while it is paused, and the
// actions that resume it. Plain data: copy it freely, read it on any thread.
//
//   std::optional<rt::debug::PausedState> s = dbg.paused_state();   // the GUI, once per frame
//   if (s) std::puts(s->str().c_str());
//   // node 3/9 AddmmBackward0 (seq 41, op 'linear', module 'fc2') before the node: breakpoint 1 (op 'linear')
//   //   grad_outputs[0]: [64, 10] float32 norm=0.12 min=-0.03 max=0.02 mean=1.2e-10
//
// Naming follows PyTorch's backward hooks: grad_outputs are the gradients a node receives
// (one per forward output), grad_inputs the gradients it produces (one per forward input;
// undefined where an input needs none).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rt/debug/gradient_stats.h"
#include "rt/dtype.h"
#include "rt/export.h"

RT_API_BEGIN

namespace rt::debug {

struct NodeInfo {
  uint64_t id = 0;  // the node's graph id, as rt::autograd::GraphSnapshot spells it
  std::string name;  // "AddmmBackward0", "AccumulateGrad"
  uint64_t sequence_nr = 0;
  std::string forward_op;  // "linear"; "" unless ops were observed during the forward
  // "encoder.layer0.fc1"; for AccumulateGrad, the module of the node that fed it its gradient.
  std::string module;
  bool is_leaf = false;  // AccumulateGrad
  // "AddmmBackward0 (seq 41, op 'linear', module 'fc2')"
  std::string str() const;
};

enum class PausePhase { BeforeNode, AfterNode };
enum class PauseReason { Start, Step, StepOverModule, RunToNode, PauseRequest, Breakpoint };
std::string_view phase_name(PausePhase p);    // "before", "after"
std::string_view reason_name(PauseReason r);  // "start", "step", "step_over", "run_to", "pause", "breakpoint"

struct PausedState {
  NodeInfo node;
  size_t index = 0;      // the node's position in this backward's execution order
  size_t num_nodes = 0;  // nodes reachable from the roots (an upper bound on what will run)
  uint64_t backward = 0; // which backward pass under this debugger (1, 2, ...)
  PausePhase phase = PausePhase::BeforeNode;
  PauseReason reason = PauseReason::Step;
  std::vector<int> breakpoints;  // ids of the breakpoints that fired here
  std::string description;       // "breakpoint 1 (op 'linear')", "breakpoint 2 (NaN/Inf): grad_inputs[0] has 4 NaN"
  std::vector<GradientStats> grad_outputs;  // received; the engine filled missing ones with zeros
  std::vector<GradientStats> grad_inputs;   // produced; empty when phase is BeforeNode
  std::vector<uint64_t> order;   // ids of the nodes reached so far in this backward, this one last
  std::string str() const;       // multi-line, one line per gradient
};

// Which of a paused node's gradients: the ones it received or the ones it produced.
enum class GradientSide { Outputs, Inputs };  // grad_outputs, grad_inputs
std::string_view side_name(GradientSide s);    // "grad_outputs", "grad_inputs"

// Some of one gradient's values at a pause (BackwardDebugger::read_paused_gradient): elements
// [offset, offset + values.size()) of the gradient flattened in row-major order, as float64.
struct GradientValues {
  std::vector<int64_t> shape;
  ScalarType dtype = kFloat32;
  int64_t numel = 0;
  int64_t offset = 0;
  std::vector<double> values;
  bool truncated() const { return offset + int64_t(values.size()) < numel; }  // more follow
};

// A node to run to: by sequence number (every AccumulateGrad shares UINT64_MAX) or by graph id.
struct NodeTarget {
  enum class By { SequenceNr, Id };
  By by = By::SequenceNr;
  uint64_t value = 0;
  static NodeTarget sequence_nr(uint64_t s) { return {By::SequenceNr, s}; }
  static NodeTarget id(uint64_t i) { return {By::Id, i}; }
  bool matches(const NodeInfo& n) const { return by == By::Id ? n.id == value : n.sequence_nr == value; }
};

// What to do after a pause. See BackwardDebugger for each one's meaning.
struct Action {
  enum class Kind { Step, StepOverModule, Continue, RunToNode, Stop };
  Kind kind = Kind::Continue;
  NodeTarget target;  // RunToNode only
  static Action step() { return {Kind::Step, {}}; }
  static Action step_over_module() { return {Kind::StepOverModule, {}}; }
  static Action resume() { return {Kind::Continue, {}}; }
  static Action run_to(NodeTarget t) { return {Kind::RunToNode, t}; }
  static Action stop() { return {Kind::Stop, {}}; }
};
std::string_view action_name(Action::Kind k);  // "step", "step_over", "continue", "run_to", "stop"

}  // namespace rt::debug

RT_API_END
