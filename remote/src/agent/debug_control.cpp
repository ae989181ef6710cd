#include "agent/debug_control.h"

#include <cmath>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "rt/error.h"

namespace rt::remote {
using json = nlohmann::json;
namespace dbg = rt::debug;

namespace {

json number(double v) { return std::isfinite(v) ? json(v) : json(fmt::format("{}", v)); }  // "nan", "inf"

json stats_json(const dbg::GradientStats& s) {
  if (!s.defined) return json{{"defined", false}};
  json j = {{"defined", true}, {"shape", s.shape},          {"dtype", std::string(rt::dtype_name(s.dtype))},
            {"numel", s.numel}, {"norm", number(s.norm)},   {"min", number(s.min)},
            {"max", number(s.max)}, {"mean", number(s.mean)}, {"nan", s.nan_count}, {"inf", s.inf_count}};
  j["histogram"] = {{"lo", number(s.histogram.lo)}, {"hi", number(s.histogram.hi)}, {"counts", s.histogram.counts}};
  return j;
}

json paused_json(const dbg::PausedState& p) {
  json j = {{"node", {{"id", p.node.id},
                      {"name", p.node.name},
                      {"sequence_nr", p.node.sequence_nr},
                      {"forward_op", p.node.forward_op},
                      {"module", p.node.module},
                      {"is_leaf", p.node.is_leaf}}},
            {"index", p.index},
            {"num_nodes", p.num_nodes},
            {"backward", p.backward},
            {"phase", std::string(dbg::phase_name(p.phase))},
            {"reason", std::string(dbg::reason_name(p.reason))},
            {"description", p.description}};
  j["grad_outputs"] = json::array();
  for (const auto& s : p.grad_outputs) j["grad_outputs"].push_back(stats_json(s));
  j["grad_inputs"] = json::array();
  for (const auto& s : p.grad_inputs) j["grad_inputs"].push_back(stats_json(s));
  return j;
}

uint64_t pause_key(const dbg::PausedState& p) {
  return (p.backward << 32) ^ (uint64_t(p.index) << 1) ^ uint64_t(p.phase == dbg::PausePhase::AfterNode) ^ 1u << 31;
}

}  // namespace

bool DebugControl::handles(const std::string& m) {
  return m == "pause" || m == "step" || m == "step_over" || m == "continue" || m == "paused_state" ||
         m == "debug_status" || m == "read_tensor";
}

std::string DebugControl::status_json() const {
  json j = {{"attached", debugger_ && debugger_->attached()}, {"running", debugger_ && debugger_->running()},
            {"releasing", release_when_idle_}};
  if (debugger_)
    if (auto p = debugger_->paused_state()) j["paused"] = paused_json(*p);
  return j.dump();
}

// An integer parameter: `fallback` when absent, ValueError naming it when not an integer.
int64_t integer_param(const json& params, const char* name, std::optional<int64_t> fallback) {
  if (!params.is_object() || !params.contains(name)) {
    if (fallback) return *fallback;
    throw rt::ValueError(fmt::format("read_tensor needs \"{}\" (an integer) in its params", name));
  }
  const json& v = params[name];
  if (!v.is_number_integer())
    throw rt::ValueError(fmt::format("read_tensor: \"{}\" must be an integer, not {}", name, v.dump()));
  return v.get<int64_t>();
}

std::string DebugControl::read_tensor(const json& params) const {
  if (!params.is_null() && !params.is_object())
    throw rt::ValueError(fmt::format("read_tensor: params must be a JSON object, not {}", params.dump()));
  const json side_param = params.is_object() && params.contains("side") ? params["side"] : json();
  if (!side_param.is_string() || (side_param != "grad_outputs" && side_param != "grad_inputs"))
    throw rt::ValueError(fmt::format("read_tensor: \"side\" must be \"grad_outputs\" or \"grad_inputs\", not {}",
                                     side_param.is_null() ? "missing" : side_param.dump()));
  const auto side = side_param == "grad_outputs" ? dbg::GradientSide::Outputs : dbg::GradientSide::Inputs;
  const int64_t index = integer_param(params, "index", std::nullopt);
  const int64_t offset = integer_param(params, "offset", 0);
  const int64_t limit = integer_param(params, "limit", 1024);
  if (index < 0 || offset < 0 || limit < 0)
    throw rt::ValueError(fmt::format("read_tensor: index {}, offset {} and limit {} must be >= 0", index, offset, limit));
  if (limit > kMaxReadElements)
    throw rt::ValueError(fmt::format("read_tensor: limit {} is over the {} values one reply may carry; read in pieces "
                                     "(offset += limit)", limit, kMaxReadElements));
  if (!debugger_ || !debugger_->attached()) throw rt::ValueError("not paused: send \"pause\" first");
  const auto v = debugger_->read_paused_gradient(side, size_t(index), offset, limit);
  if (!v) throw rt::ValueError("not paused: read_tensor reads the paused node's gradients (wait for the \"paused\" notice)");
  json values = json::array();
  for (double x : v->values) values.push_back(number(x));
  return json{{"side", side_param}, {"index", index}, {"shape", v->shape}, {"dtype", std::string(rt::dtype_name(v->dtype))},
              {"numel", v->numel}, {"offset", v->offset}, {"values", std::move(values)}, {"truncated", v->truncated()}}
      .dump();
}

std::string DebugControl::handle(const std::string& method, const json& params) {
  if (method == "debug_status") return status_json();
  if (method == "read_tensor") return read_tensor(params);
  if (method == "pause") {
    if (!debugger_) debugger_ = std::make_unique<dbg::BackwardDebugger>();
    debugger_->attach();  // no-op when attached
    release_when_idle_ = false;
    debugger_->set_pause_at_start(true);
    // A backward already running pauses before its next node; otherwise the next one pauses at its start.
    if (debugger_->running()) debugger_->pause();
    return status_json();
  }
  if (method == "paused_state") {
    if (!debugger_ || !debugger_->attached()) throw rt::ValueError("not paused: send \"pause\" first");
    auto p = debugger_->paused_state();
    return p ? paused_json(*p).dump() : "null";
  }
  // step, step_over, continue act on a paused (or running) backward under the debugger.
  if (!debugger_ || !debugger_->attached() || !debugger_->running())
    throw rt::ValueError(fmt::format("cannot {}: no backward pass is paused here (send \"pause\", then wait for the "
                                     "\"paused\" notice)", method));
  if (method == "step") {
    debugger_->step();
  } else if (method == "step_over") {
    debugger_->step_over_module();
  } else {  // continue: release this backward and stop pausing later ones
    release();
  }
  return status_json();
}

void DebugControl::release() {
  if (!debugger_ || !debugger_->attached()) return;
  debugger_->set_pause_at_start(false);
  if (debugger_->running()) debugger_->resume();
  release_when_idle_ = true;
}

std::string DebugControl::tick() {
  if (!debugger_ || !debugger_->attached()) return "";
  if (release_when_idle_ && !debugger_->running()) {
    // No backward holds it, so this returns at once. The object itself stays: an op that began while it
    // observed may still be ending on a training thread and reach it (OpFrame keeps its observer), so it lives
    // as long as the agent and is attached again by the next pause.
    debugger_->detach();
    release_when_idle_ = false;
    const bool announced = last_paused_key_ != 0;
    last_paused_key_ = 0;
    return announced ? json{{"event", "resumed"}}.dump() : "";
  }
  const auto p = debugger_->paused_state();
  const uint64_t key = p ? pause_key(*p) : 0;
  if (key == last_paused_key_) return "";
  last_paused_key_ = key;
  if (!p) return json{{"event", "resumed"}}.dump();
  json n = paused_json(*p);
  n["event"] = "paused";
  return n.dump();
}

}  // namespace rt::remote
