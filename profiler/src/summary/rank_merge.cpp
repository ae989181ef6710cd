#include "rt/prof/rank_merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <charconv>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "rt/error.h"

namespace rt::prof {
namespace {

std::string rank_prefix(int rank) { return fmt::format("rank {} \u00b7 ", rank); }

std::string metadata_or(const SessionData& d, const char* key, const std::string& fallback = {}) {
  const auto it = d.metadata.find(key);
  return it == d.metadata.end() ? fallback : it->second;
}

// Note [Rank clocks]: whether every session names the same host.
std::pair<bool, std::string> one_host(const std::vector<RankSession>& ranks) {
  std::set<std::string> hosts;
  bool unnamed = false;
  for (const RankSession& r : ranks) {
    const std::string h = metadata_or(r.data, "host");
    if (h.empty()) unnamed = true;
    else hosts.insert(h);
  }
  std::string list;
  for (const std::string& h : hosts) list += (list.empty() ? "" : ", ") + h;
  if (unnamed) list += list.empty() ? "not recorded" : ", not recorded";
  return {!unnamed && hosts.size() == 1, list};
}

// Copies one rank's records into `out`, shifting times by `shift` and renumbering what collides.
class RankAppender {
 public:
  RankAppender(SessionData& out, const RankSession& rank, int64_t shift, uint64_t& next_thread,
               std::map<int32_t, int32_t>& next_stream, uint64_t correlation_base, int64_t sequence_base)
      : out_(out), in_(rank.data), prefix_(rank_prefix(rank.rank)), rank_(rank.rank), shift_(shift),
        next_thread_(next_thread), next_stream_(next_stream), correlation_base_(correlation_base),
        sequence_base_(sequence_base) {
    strings_.assign(in_.strings.size(), std::numeric_limits<StringId>::max());
  }

  void append() {
    for (const ThreadRecord& t : in_.threads) {
      if (threads_.contains(t.thread)) continue;  // a thread named twice keeps its first name
      const std::string& name = in_.strings.at(t.name);
      out_.threads.push_back({thread(t.thread), t.os_tid,
                              out_.strings.intern(prefix_ + (name.empty() ? fmt::format("thread {}", t.thread) : name)),
                              rank_});
    }
    for (OpRecord op : in_.ops) {
      op.start_ns += shift_;
      op.end_ns += shift_;
      op.thread = named_thread(op.thread);
      op.name = str(op.name);
      op.module = str(op.module);
      op.input_shapes = str(op.input_shapes);
      op.input_dtypes = str(op.input_dtypes);
      if (op.sequence_nr >= 0) op.sequence_nr += sequence_base_;
      if (op.correlation_id != 0) op.correlation_id += correlation_base_;
      out_.ops.push_back(op);
    }
    for (GpuActivityRecord g : in_.gpu) {
      g.start_ns += shift_;
      g.end_ns += shift_;
      if (g.thread != 0) g.thread = named_thread(g.thread);
      g.stream = stream(g.device, g.stream);
      g.name = str(g.name);
      if (g.correlation_id != 0) g.correlation_id += correlation_base_;
      if (g.external_id != 0) g.external_id += correlation_base_;
      out_.gpu.push_back(g);
    }
    for (CollectiveRecord c : in_.collectives) {
      c.enqueue_ns += shift_;
      c.start_ns += shift_;
      c.end_ns += shift_;
      if (c.thread != 0) c.thread = named_thread(c.thread);
      c.name = str(c.name);
      c.group = str(c.group);
      c.shape = str(c.shape);
      c.dtype = str(c.dtype);
      c.call_site = str(c.call_site);
      c.rank = rank_;
      out_.collectives.push_back(c);
    }
    for (MemoryRecord m : in_.memory) {
      m.time_ns += shift_;
      if (m.thread != 0) m.thread = named_thread(m.thread);
      m.op = str(m.op);
      out_.memory.push_back(m);
    }
    for (CounterRecord c : in_.counters) {
      c.time_ns += shift_;
      c.name = out_.strings.intern(prefix_ + in_.strings.at(c.name));
      out_.counters.push_back(c);
    }
    for (GradientHistogramRecord h : in_.gradient_histograms) {
      h.time_ns += shift_;
      h.name = out_.strings.intern(prefix_ + in_.strings.at(h.name));
      out_.gradient_histograms.push_back(std::move(h));
    }
    if (!in_.steps.empty()) {
      const uint64_t steps_thread = next_thread_++;
      out_.threads.push_back({steps_thread, 0, out_.strings.intern(prefix_ + "steps"), rank_});
      for (const StepRecord& s : in_.steps) {
        OpRecord r;
        r.start_ns = s.start_ns + shift_;
        r.end_ns = s.end_ns + shift_;
        r.thread = steps_thread;
        r.name = out_.strings.intern(fmt::format("step {}", s.step));
        r.kind = OpKind::UserRange;
        out_.ops.push_back(r);
      }
    }
    for (GraphRecord g : in_.graphs) {
      g.time_ns += shift_;
      if (g.thread != 0) g.thread = named_thread(g.thread);
      for (autograd::GraphNodeInfo& n : g.graph.nodes) n.sequence_nr += uint64_t(sequence_base_);
      out_.graphs.push_back(std::move(g));
    }
  }

 private:
  uint64_t thread(uint64_t id) {
    auto [it, added] = threads_.emplace(id, 0);
    if (added) it->second = next_thread_++;
    return it->second;
  }
  // A thread that only records mention (no ThreadRecord) gets one, named as the timeline would name it.
  uint64_t named_thread(uint64_t id) {
    if (const auto it = threads_.find(id); it != threads_.end()) return it->second;
    const uint64_t mapped = thread(id);
    out_.threads.push_back({mapped, 0, out_.strings.intern(prefix_ + fmt::format("thread {}", id)), rank_});
    return mapped;
  }
  int32_t stream(int32_t device, int32_t id) {
    auto [it, added] = streams_.emplace(std::pair(device, id), 0);
    if (added) {
      it->second = next_stream_[device]++;
      out_.streams.push_back({device, it->second, out_.strings.intern(prefix_ + fmt::format("cuda:{} stream {}", device, id))});
    }
    return it->second;
  }
  StringId str(StringId id) {
    StringId& slot = strings_.at(id);
    if (slot == std::numeric_limits<StringId>::max()) slot = out_.strings.intern(in_.strings.at(id));
    return slot;
  }

  SessionData& out_;
  const SessionData& in_;
  std::string prefix_;
  int32_t rank_;
  int64_t shift_;
  uint64_t& next_thread_;
  std::map<int32_t, int32_t>& next_stream_;
  uint64_t correlation_base_;
  int64_t sequence_base_;
  std::vector<StringId> strings_;
  std::unordered_map<uint64_t, uint64_t> threads_;
  std::map<std::pair<int32_t, int32_t>, int32_t> streams_;
};

uint64_t max_correlation(const SessionData& d) {
  uint64_t m = 0;
  for (const OpRecord& o : d.ops) m = std::max(m, o.correlation_id);
  for (const GpuActivityRecord& g : d.gpu) m = std::max({m, g.correlation_id, g.external_id});
  return m;
}

int64_t max_sequence(const SessionData& d) {
  int64_t m = -1;
  for (const OpRecord& o : d.ops) m = std::max(m, o.sequence_nr);
  for (const GraphRecord& g : d.graphs)
    for (const autograd::GraphNodeInfo& n : g.graph.nodes) m = std::max(m, int64_t(n.sequence_nr));
  return m;
}

std::optional<int> parse_int(const std::unordered_map<std::string, std::string>& metadata, const char* key) {
  const auto it = metadata.find(key);
  if (it == metadata.end()) return std::nullopt;
  int value = 0;
  const std::string& s = it->second;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

// The offset a recorder measured and left in the session's metadata (kClockOffsetKey, kClockErrorKey).
std::optional<RankClockOffset> recorded_clock(const SessionData& d) {
  auto number = [&](const char* key) -> std::optional<int64_t> {
    const auto it = d.metadata.find(key);
    if (it == d.metadata.end()) return std::nullopt;
    int64_t v = 0;
    const char* end = it->second.data() + it->second.size();
    const auto [ptr, ec] = std::from_chars(it->second.data(), end, v);
    if (ec != std::errc() || ptr != end) return std::nullopt;
    return v;
  };
  const auto offset = number(kClockOffsetKey), error = number(kClockErrorKey);
  if (!offset || !error) return std::nullopt;
  return RankClockOffset{*offset, *error};
}

}  // namespace

SessionData merge_rank_sessions(std::vector<RankSession> ranks, RankMergeOptions options) {
  if (ranks.empty()) throw rt::ValueError("merge_rank_sessions: no sessions given; pass one per rank");
  std::sort(ranks.begin(), ranks.end(), [](const RankSession& a, const RankSession& b) { return a.rank < b.rank; });
  for (size_t i = 1; i < ranks.size(); ++i)
    if (ranks[i].rank == ranks[i - 1].rank)
      throw rt::ValueError(fmt::format("merge_rank_sessions: rank {} is given twice; pass one session per rank "
                                       "(sessions '{}' and '{}')",
                                       ranks[i].rank, ranks[i - 1].data.name, ranks[i].data.name));

  for (RankSession& r : ranks)
    if (!r.clock) r.clock = recorded_clock(r.data);
  const auto [same_host, hosts] = one_host(ranks);
  const bool measured = std::all_of(ranks.begin(), ranks.end(), [](const RankSession& r) { return r.clock.has_value(); });
  if (options.clock == RankClock::Estimated && !measured)
    throw rt::ValueError("merge_rank_sessions: RankClock::Estimated needs every rank's measured clock offset "
                         "(RankSession::clock, from remote::AgentClient::estimate_clock); some rank has none");
  const bool recorded =
      options.clock == RankClock::Recorded || (options.clock == RankClock::Auto && same_host);
  const bool estimated = !recorded && (options.clock == RankClock::Estimated || (options.clock == RankClock::Auto && measured));
  int64_t largest_error = 0;
  for (const RankSession& r : ranks)
    if (r.clock) largest_error = std::max(largest_error, r.clock->error_ns);
  int64_t earliest = ranks.front().data.start_ns;
  for (const RankSession& r : ranks) earliest = std::min(earliest, r.data.start_ns);

  SessionData out;
  out.clock_offset_ns = ranks.front().data.clock_offset_ns;  // epoch = steady + offset, on the first rank's clock
  if (estimated) out.clock_offset_ns += ranks.front().clock->offset_ns;  // ... moved onto the viewer's
  out.complete = true;
  uint64_t next_thread = 1;
  std::map<int32_t, int32_t> next_stream;
  uint64_t correlation_base = 0;
  int64_t sequence_base = 0;
  bool first = true;
  std::string rank_list;
  for (const RankSession& r : ranks) {
    const int64_t shift = recorded ? 0 : estimated ? -r.clock->offset_ns : earliest - r.data.start_ns;
    RankAppender(out, r, shift, next_thread, next_stream, correlation_base, sequence_base).append();
    correlation_base += max_correlation(r.data);
    sequence_base += max_sequence(r.data) + 1;
    const int64_t start = r.data.start_ns + shift;
    const int64_t end = r.data.end_ns == 0 ? 0 : r.data.end_ns + shift;
    out.start_ns = first ? start : std::min(out.start_ns, start);
    out.end_ns = std::max(out.end_ns, end);
    out.complete = out.complete && r.data.complete;
    out.dropped_records += r.data.dropped_records;
    rank_list += (first ? "" : ",") + std::to_string(r.rank);
    first = false;
  }

  // Views expect ops by start (outer first on ties), memory events and counters by time (session.h).
  std::stable_sort(out.ops.begin(), out.ops.end(), [](const OpRecord& a, const OpRecord& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
  });
  std::stable_sort(out.gpu.begin(), out.gpu.end(),
                   [](const GpuActivityRecord& a, const GpuActivityRecord& b) { return a.start_ns < b.start_ns; });
  std::stable_sort(out.collectives.begin(), out.collectives.end(),
                   [](const CollectiveRecord& a, const CollectiveRecord& b) { return a.start_ns < b.start_ns; });
  std::stable_sort(out.memory.begin(), out.memory.end(),
                   [](const MemoryRecord& a, const MemoryRecord& b) { return a.time_ns < b.time_ns; });
  std::stable_sort(out.counters.begin(), out.counters.end(),
                   [](const CounterRecord& a, const CounterRecord& b) { return a.time_ns < b.time_ns; });
  std::stable_sort(out.gradient_histograms.begin(), out.gradient_histograms.end(),
                   [](const GradientHistogramRecord& a, const GradientHistogramRecord& b) { return a.time_ns < b.time_ns; });

  auto agreed = [&](const char* key) {
    const std::string v = metadata_or(ranks.front().data, key);
    for (const RankSession& r : ranks)
      if (metadata_or(r.data, key) != v) return std::string();
    return v;
  };
  const std::string job = agreed(kJobIdKey);
  const std::string count = fmt::format("{} rank{}", ranks.size(), ranks.size() == 1 ? "" : "s");
  out.name = job.empty() ? count : fmt::format("job {}: {}", job, count);
  out.metadata["ranks"] = rank_list;
  if (!job.empty()) out.metadata[kJobIdKey] = job;
  if (const std::string w = agreed(kWorldSizeKey); !w.empty()) out.metadata[kWorldSizeKey] = w;
  out.metadata["rank_clock"] =
      recorded    ? (same_host ? "recorded (one host: " + hosts + ")" : "recorded (hosts: " + hosts + ")")
      : estimated ? fmt::format("estimated by ping, within {:.0f} us (hosts: {})", std::ceil(largest_error / 1e3), hosts)
                  : "aligned on session starts (hosts: " + hosts + ")";
  return out;
}

std::vector<LaunchJob> launch_jobs(const std::vector<SessionInfo>& sessions) {
  std::vector<LaunchJob> jobs;
  std::map<std::pair<std::string, int>, size_t> index;
  for (const SessionInfo& s : sessions) {
    const auto job = s.metadata.find(kJobIdKey);
    const std::optional<int> rank = parse_int(s.metadata, kRankKey);
    if (job == s.metadata.end() || job->second.empty() || !rank) continue;
    const int restart = parse_int(s.metadata, kRestartCountKey).value_or(0);
    auto [it, added] = index.emplace(std::pair(job->second, restart), jobs.size());
    if (added) jobs.push_back({job->second, restart, 0, {}});
    LaunchJob& j = jobs[it->second];
    j.world_size = std::max(j.world_size, parse_int(s.metadata, kWorldSizeKey).value_or(0));
    auto same = std::find_if(j.ranks.begin(), j.ranks.end(), [&](const LaunchJobRank& r) { return r.rank == *rank; });
    if (same == j.ranks.end()) j.ranks.push_back({*rank, s.id});
    else same->session_id = std::max(same->session_id, s.id);  // the newest
  }
  for (LaunchJob& j : jobs)
    std::sort(j.ranks.begin(), j.ranks.end(), [](const LaunchJobRank& a, const LaunchJobRank& b) { return a.rank < b.rank; });
  return jobs;
}

}  // namespace rt::prof
