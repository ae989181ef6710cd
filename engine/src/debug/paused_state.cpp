#include "rt/debug/paused_state.h"

#include <fmt/format.h>

namespace rt::debug {

std::string_view phase_name(PausePhase p) { return p == PausePhase::BeforeNode ? "before" : "after"; }

std::string_view side_name(GradientSide s) { return s == GradientSide::Outputs ? "grad_outputs" : "grad_inputs"; }

std::string_view reason_name(PauseReason r) {
  switch (r) {
    case PauseReason::Start: return "start";
    case PauseReason::Step: return "step";
    case PauseReason::StepOverModule: return "step_over";
    case PauseReason::RunToNode: return "run_to";
    case PauseReason::PauseRequest: return "pause";
    case PauseReason::Breakpoint: return "breakpoint";
  }
  return "?";
}

std::string_view action_name(Action::Kind k) {
  switch (k) {
    case Action::Kind::Step: return "step";
    case Action::Kind::StepOverModule: return "step_over";
    case Action::Kind::Continue: return "continue";
    case Action::Kind::RunToNode: return "run_to";
    case Action::Kind::Stop: return "stop";
  }
  return "?";
}

std::string NodeInfo::str() const {
  std::string s = name + " (";
  s += is_leaf ? "leaf" : fmt::format("seq {}", sequence_nr);
  if (!forward_op.empty()) s += fmt::format(", op '{}'", forward_op);
  if (!module.empty()) s += fmt::format(", module '{}'", module);
  return s + ")";
}

std::string PausedState::str() const {
  std::string s = fmt::format("node {}/{} {} {} the node: {}", index + 1, num_nodes, node.str(), phase_name(phase),
                              description);
  for (size_t i = 0; i < grad_outputs.size(); ++i)
    s += fmt::format("\n  grad_outputs[{}]: {}", i, grad_outputs[i].summary());
  for (size_t i = 0; i < grad_inputs.size(); ++i)
    s += fmt::format("\n  grad_inputs[{}]: {}", i, grad_inputs[i].summary());
  return s;
}

}  // namespace rt::debug
