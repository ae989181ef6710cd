// Pausing this process for a remote client: the agent's side of the pause, step, continue and inspect
// requests (docs/remote-protocol.md, "Pausing and stepping"). A BackwardDebugger (rt/debug/backward_debugger.h)
// in blocking mode does the work: a pause request attaches it with pause-at-start, so the training thread
// stops before the first node of its next backward pass (on every rank of a data-parallel job that is the same
// step), and waits there, without the GIL, until a client steps or continues it.
//
// Contracts
// - Every method runs on the agent's thread and never blocks on the training thread: continue resumes the
//   backward and the debugger is detached by a later tick(), once no backward holds it.
// - handle() answers one request ("pause", "step", "step_over", "continue", "paused_state", "debug_status",
//   "read_tensor") with its JSON result, and throws rt::ValueError naming the problem (e.g. stepping while not
//   paused, or a read_tensor parameter of the wrong type).
// - read_tensor copies at most kMaxReadElements values of one gradient of the paused node (params: "side"
//   "grad_outputs" or "grad_inputs", "index", "offset" = 0, "limit" = 1024), so a reply stays under the
//   protocol's 1 MiB control frame whatever the tensor's size; a client reads a large gradient in pieces.
// - tick() returns a Notice's JSON when the pause state changed since the last call ({"event": "paused", ...}
//   or {"event": "resumed"}), "" otherwise.
#pragma once
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "rt/debug/backward_debugger.h"

namespace rt::remote {

class DebugControl {
 public:
  static constexpr int64_t kMaxReadElements = 16384;  // ~25 bytes of JSON each at most: ~400 KiB a reply
  static bool handles(const std::string& method);
  // params: the Request's "params" object (null when it has none).
  std::string handle(const std::string& method, const nlohmann::json& params);
  std::string tick();
  // No client controls this process any more: let a paused backward run on and stop pausing.
  void release();
  bool active() const { return debugger_ && debugger_->attached(); }

 private:
  std::string status_json() const;
  std::string read_tensor(const nlohmann::json& params) const;
  std::unique_ptr<rt::debug::BackwardDebugger> debugger_;  // made at the first pause, kept (see tick())
  bool release_when_idle_ = false;  // continue was sent: detach once no backward runs under the debugger
  uint64_t last_paused_key_ = 0;    // (backward, index, phase) of the pause last announced; 0: not paused
};

}  // namespace rt::remote
