#include "rt/debug/breakpoint.h"

#include <fmt/format.h>

namespace rt::debug {

std::string_view kind_name(BreakpointKind k) {
  switch (k) {
    case BreakpointKind::NonFinite: return "nan_inf";
    case BreakpointKind::Op: return "op";
    case BreakpointKind::Module: return "module";
    case BreakpointKind::GradNorm: return "grad_norm";
  }
  return "?";
}

bool module_within(std::string_view module, std::string_view prefix) {
  if (prefix.empty()) return module.empty();
  return module.size() >= prefix.size() && module.substr(0, prefix.size()) == prefix &&
         (module.size() == prefix.size() || module[prefix.size()] == '.');
}

bool Breakpoint::matches(const NodeInfo& node) const {
  switch (kind) {
    case BreakpointKind::Op: return node.forward_op == pattern || node.name == pattern;
    case BreakpointKind::Module: return module_within(node.module, pattern);
    default: return false;
  }
}

std::string Breakpoint::str() const {
  std::string what;
  switch (kind) {
    case BreakpointKind::NonFinite: what = "NaN/Inf"; break;
    case BreakpointKind::Op: what = fmt::format("op '{}'", pattern); break;
    case BreakpointKind::Module: what = fmt::format("module '{}'", pattern); break;
    case BreakpointKind::GradNorm: what = fmt::format("grad norm > {:g}", threshold); break;
  }
  return fmt::format("breakpoint {} ({}){}", id, what, enabled ? "" : " [disabled]");
}

}  // namespace rt::debug
