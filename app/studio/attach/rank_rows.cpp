#include "attach/rank_rows.h"

#include <fmt/format.h>

namespace rt::studio {
namespace {
const char* const kUnknown = "\u2014";
}

std::string duration_text(int64_t ns) {
  if (ns < 0) return kUnknown;
  if (ns < 1'000'000) return fmt::format("{} \u00B5s", ns / 1000);
  if (ns < 1'000'000'000) return fmt::format("{:.2f} ms", double(ns) / 1e6);
  return fmt::format("{:.1f} s", double(ns) / 1e9);
}

std::vector<RankRow> rank_rows(const JobListing& job, const AttachedJob* attached) {
  std::vector<RankRow> rows;
  if (attached && attached->job() == job.job) {
    for (size_t i = 0; i < attached->rank_count(); ++i) {
      const RankState s = attached->rank_state(i);
      RankRow r;
      r.rank = fmt::format("{}/{}", s.manifest.rank, s.manifest.world_size);
      r.host = s.manifest.host;
      r.pid = std::to_string(s.manifest.pid);
      r.step = std::to_string(s.counts.steps);
      r.step_time = duration_text(s.counts.last_step_ns);
      r.ops = std::to_string(s.counts.ops);
      r.dropped = std::to_string(s.dropped);
      r.state = phase_text(s.phase);
      if (!s.message.empty()) r.state += ": " + s.message;
      r.ended = phase_ended(s.phase);
      r.problem = s.phase == RankPhase::NotAnswering || s.phase == RankPhase::ConnectionLost;
      rows.push_back(std::move(r));
    }
    return rows;
  }
  for (const RankListing& l : job.ranks) {
    RankRow r;
    r.rank = fmt::format("{}/{}", l.manifest.rank, l.manifest.world_size);
    r.host = l.manifest.host;
    r.pid = std::to_string(l.manifest.pid);
    r.step = l.answering ? std::to_string(l.steps) : kUnknown;
    r.step_time = kUnknown;
    r.ops = l.answering ? std::to_string(l.ops) : kUnknown;
    r.dropped = kUnknown;
    r.state = !l.answering ? "not answering: " + l.error : l.recording ? "recording" : "idle";
    if (l.answering && l.clients > 0) r.state += fmt::format(", {} client{} attached", l.clients, l.clients == 1 ? "" : "s");
    r.problem = !l.answering;
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace rt::studio
