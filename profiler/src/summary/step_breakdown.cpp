#include <algorithm>
#include <cctype>
#include <map>

#include "rt/prof/summary.h"
#include "summary/op_timing.h"

namespace rt::prof {
namespace {

bool names_optimizer(const std::string& name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return lower.find("optimizer") != std::string::npos;
}

// outermost[i]: op i matches and no ancestor of it matches.
template <typename Match>
std::vector<bool> outermost(const SessionData& data, const std::vector<OpTiming>& timing, Match match) {
  std::vector<bool> out(data.ops.size(), false);
  for (size_t i = 0; i < data.ops.size(); ++i) {
    if (!match(data.ops[i])) continue;
    bool nested = false;
    for (int64_t p = timing[i].parent; p >= 0 && !nested; p = timing[size_t(p)].parent)
      nested = match(data.ops[size_t(p)]);
    out[i] = !nested;
  }
  return out;
}

// The part of the op, clamped into its parent (Note [Nesting clamp] in rt/prof/nesting.h), inside the step.
int64_t clipped(const OpRecord& op, const OpTiming& timing, const StepRecord& step) {
  return std::max<int64_t>(0, std::min(timing.end_ns, step.end_ns) - std::max(op.start_ns, step.start_ns));
}

}  // namespace

std::vector<StepBreakdown> step_breakdown(const SessionData& data) {
  const std::vector<OpTiming> timing = op_timings(data);
  const auto backward = outermost(data, timing, [](const OpRecord& op) { return op.kind == OpKind::BackwardNode; });
  const auto optimizer = outermost(data, timing, [&](const OpRecord& op) {
    return op.kind == OpKind::UserRange && names_optimizer(data.strings.at(op.name));
  });

  std::vector<StepBreakdown> out;
  out.reserve(data.steps.size());
  for (const StepRecord& step : data.steps) {
    StepBreakdown b;
    b.step = step.step;
    b.start_ns = step.start_ns;
    b.end_ns = step.end_ns;
    b.wall_ns = std::max<int64_t>(0, step.end_ns - step.start_ns);
    std::map<std::string, int64_t> by_name;
    for (size_t i = 0; i < data.ops.size(); ++i) {
      const int64_t inside = clipped(data.ops[i], timing[i], step);
      if (inside == 0) continue;
      if (timing[i].parent < 0) {
        b.op_ns += inside;
        by_name[data.strings.at(data.ops[i].name)] += inside;
      }
      if (backward[i]) b.backward_ns += inside;
      if (optimizer[i]) b.optimizer_ns += inside;
    }
    b.top_level.assign(by_name.begin(), by_name.end());
    std::stable_sort(b.top_level.begin(), b.top_level.end(),
                     [](const auto& x, const auto& y) { return x.second > y.second; });
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace rt::prof
