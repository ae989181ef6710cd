// rt/debug/breakpoint.h — the conditions that pause the backward debugger.
//
//   int id = dbg.break_on_module("encoder");          // BackwardDebugger makes them
//   rt::debug::Breakpoint b = dbg.breakpoints().back();
//   b.str();                                          // "breakpoint 1 (module 'encoder')"
//   rt::debug::module_within("encoder.layer0.fc1", "encoder");   // true
//
// Kinds (what BackwardDebugger checks, and where):
// - NonFinite: a NaN or ±Inf appears. It fires after the node that produced it (a produced
//   gradient is non-finite while everything the node received was finite), or before a node
//   whose received gradient is non-finite although no producer handed it one (the root
//   gradient, or a sum of finite gradients that overflowed). Nodes that merely pass an
//   existing NaN along do not fire it again.
// - Op: before a node whose forward op or node name equals `pattern` ("linear", "AddmmBackward0").
// - Module: before a node whose module is `pattern` or inside it (dotted prefix: "encoder"
//   matches "encoder.layer0.fc1", not "encoder2").
// - GradNorm: a gradient's L2 norm exceeds `threshold`: after a node that produced one, or
//   before a node that received one that no producer handed it (a sum of gradients).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "rt/debug/paused_state.h"
#include "rt/export.h"

RT_API_BEGIN

namespace rt::debug {

enum class BreakpointKind { NonFinite, Op, Module, GradNorm };
std::string_view kind_name(BreakpointKind k);  // "nan_inf", "op", "module", "grad_norm"

struct Breakpoint {
  int id = 0;
  BreakpointKind kind = BreakpointKind::NonFinite;
  std::string pattern;   // Op, Module
  double threshold = 0;  // GradNorm
  bool enabled = true;
  int64_t hits = 0;      // times it fired
  std::string str() const;
  // Op and Module: does `node` match? Always false for the value kinds.
  bool matches(const NodeInfo& node) const;
};

// True when `module` is `prefix` or a dotted descendant of it. An empty prefix matches only "".
bool module_within(std::string_view module, std::string_view prefix);

}  // namespace rt::debug

RT_API_END
