#include "desync_check.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "rt/op_observer.h"

namespace rt::dist::detail {

nlohmann::json ledger_summary(int rank, size_t recent) {
  const std::vector<CollectiveRecord> records = ledger_snapshot();
  const int64_t now = rt::now_ns();
  std::map<uint32_t, nlohmann::json> groups;
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    const CollectiveRecord& r = *it;
    if (r.id == 0 || r.point_to_point) continue;
    nlohmann::json& g = groups[r.group];
    if (g.is_null()) g = {{"name", ledger_group_name(r.group)}, {"last_seq", r.seq}, {"recent", nlohmann::json::array()}};
    if (g["recent"].size() >= recent) continue;
    g["recent"].push_back({{"seq", r.seq},
                           {"op", r.op},
                           {"call", describe_record(r)},
                           {"fingerprint", fmt::format("{}/{:016x}", r.op, r.shapes_hash)},
                           {"finished", r.end_ns != 0},
                           {"waiting_s", r.end_ns ? 0.0 : double(now - r.enqueue_ns) / 1e9}});
  }
  const int64_t wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch()).count();
  nlohmann::json out = {{"rank", rank}, {"wall_ms", wall_ms}, {"groups", nlohmann::json::array()}};
  for (auto& [id, g] : groups) out["groups"].push_back(std::move(g));
  return out;
}

namespace {

struct Seen {
  int rank;
  const nlohmann::json* call;  // an entry of "recent"
};

}  // namespace

std::vector<LedgerReport> check_ledger_summaries(const std::vector<nlohmann::json>& summaries, double hang_seconds) {
  std::vector<LedgerReport> reports;
  // group name -> rank -> that rank's group summary
  std::map<std::string, std::map<int, const nlohmann::json*>> by_group;
  for (const nlohmann::json& s : summaries)
    for (const nlohmann::json& g : s.at("groups")) by_group[g.at("name").get<std::string>()][s.at("rank").get<int>()] = &g;

  for (const auto& [group, ranks] : by_group) {
    // Desync: the same sequence number, different fingerprints.
    std::map<uint64_t, std::vector<Seen>> by_seq;
    for (const auto& [rank, g] : ranks)
      for (const nlohmann::json& c : g->at("recent")) by_seq[c.at("seq").get<uint64_t>()].push_back({rank, &c});
    for (const auto& [seq, seen] : by_seq) {
      const Seen& first = seen.front();
      for (const Seen& other : seen) {
        if (other.call->at("fingerprint") == first.call->at("fingerprint")) continue;
        reports.push_back({fmt::format("desync/{}/{}", group, seq),
                           fmt::format("collective desync in group '{}' at sequence {}: rank {} called {} where rank {} "
                                       "called {}. Every rank of a group must call the same collectives in the same "
                                       "order with the same shapes and dtypes",
                                       group, seq, other.rank, other.call->at("call").get<std::string>(), first.rank,
                                       first.call->at("call").get<std::string>()),
                           {}});
        break;
      }
    }
    // Hang: the oldest collective some member has waited in for hang_seconds; every member still waiting
    // in it is listed, and the members whose last sequence number is below it are the ones waited for.
    uint64_t waiting_seq = 0;
    bool hung = false;
    for (const auto& [rank, g] : ranks)
      for (const nlohmann::json& c : g->at("recent"))
        if (!c.at("finished").get<bool>() && c.at("waiting_s").get<double>() >= hang_seconds &&
            (!hung || c.at("seq").get<uint64_t>() < waiting_seq)) {
          waiting_seq = c.at("seq").get<uint64_t>();
          hung = true;
        }
    if (!hung) continue;
    double waited = 0;
    std::vector<int> waiting;
    std::string waiting_call;
    for (const auto& [rank, g] : ranks)
      for (const nlohmann::json& c : g->at("recent"))
        if (c.at("seq").get<uint64_t>() == waiting_seq && !c.at("finished").get<bool>()) {
          waiting.push_back(rank);
          waited = std::max(waited, c.at("waiting_s").get<double>());
          waiting_call = c.at("call").get<std::string>();
        }
    if (waiting.empty()) continue;
    std::string waited_for;
    std::vector<int> laggards;
    for (const auto& [rank, g] : ranks) {
      if (g->at("last_seq").get<uint64_t>() >= waiting_seq) continue;
      laggards.push_back(rank);
      const nlohmann::json& recent = g->at("recent");
      std::string last = recent.empty() ? std::string("no collective yet")
                                        : fmt::format("its last collective is {} ({})",
                                                      recent.front().at("call").get<std::string>(),
                                                      recent.front().at("finished").get<bool>() ? "finished" : "running");
      waited_for += fmt::format("{}rank {} has not called it: {}", waited_for.empty() ? "" : "; ", rank, last);
    }
    std::string names;
    for (int r : waiting) names += (names.empty() ? "" : ", ") + std::to_string(r);
    reports.push_back({fmt::format("hang/{}/{}", group, waiting_seq),
                       fmt::format("suspected hang in group '{}': rank{} {} {} waited {:.1f} s in {}; {}", group,
                                   waiting.size() > 1 ? "s" : "", names, waiting.size() > 1 ? "have" : "has", waited,
                                   waiting_call,
                                   waited_for.empty() ? "every member has called it (a slow or stuck peer, or the "
                                                        "network)"
                                                      : waited_for),
                       laggards});
  }
  return reports;
}

}  // namespace rt::dist::detail
