#include <fmt/format.h>

#include "rt/viz/scalars.h"

namespace rt::viz {

std::vector<OverlayLine> overlay(std::span<const ScalarSet* const> sessions, std::string_view name, OverlayAxis axis,
                                 double smoothing) {
  std::vector<OverlayLine> lines;
  for (size_t k = 0; k < sessions.size(); ++k) {
    const ScalarSeries* s = sessions[k] ? sessions[k]->find(name) : nullptr;
    if (!s) continue;
    OverlayLine line;
    line.session = k;
    line.label = sessions[k]->session_name();
    if (line.label.empty()) line.label = fmt::format("session {}", k);
    for (size_t i = 0; i < s->size(); ++i) {
      if (axis == OverlayAxis::Step) {
        if (s->step[i] < 0) continue;
        line.x.push_back(s->step[i]);
      } else {
        line.x.push_back(s->time_ns[i] - sessions[k]->origin_ns());
      }
      line.y.push_back(s->value[i]);
    }
    if (smoothing > 0) line.y = smooth(line.y, smoothing);
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace rt::viz
