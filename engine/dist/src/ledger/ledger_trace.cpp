// The ledger as self-describing JSON that also loads as a Chrome trace: one process per rank, one row
// (thread) per group, each operation a complete event from enqueue to end (to the dump's time while it
// runs). Several ranks' dumps load together in Perfetto, and arrival skew shows as offset starts.
#include <fmt/core.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "rt/dist/errors.h"
#include "rt/dist/ledger.h"
#include "rt/op_observer.h"

namespace rt::dist {

std::string ledger_trace_json(int rank) {
  const std::vector<CollectiveRecord> records = ledger_snapshot();
  const int64_t now = rt::now_ns();
  nlohmann::json events = nlohmann::json::array();
  nlohmann::json list = nlohmann::json::array();
  std::vector<uint32_t> groups_seen;
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", rank}, {"args", {{"name", fmt::format("rank {}", rank)}}}});
  for (const CollectiveRecord& r : records) {
    if (r.id == 0) continue;
    const std::string group = ledger_group_name(r.group);
    if (std::find(groups_seen.begin(), groups_seen.end(), r.group) == groups_seen.end()) {
      groups_seen.push_back(r.group);
      events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", rank}, {"tid", r.group},
                        {"args", {{"name", fmt::format("group '{}'", group)}}}});
    }
    nlohmann::json args = {{"seq", r.seq},
                           {"group", group},
                           {"tensor", describe_tensor(r)},
                           {"numel", r.numel},
                           {"peer", r.peer},
                           {"site", ledger_site(r.site)},
                           {"shapes_hash", fmt::format("{:016x}", r.shapes_hash)},
                           {"queued_us", double(r.start_ns - r.enqueue_ns) / 1e3},
                           {"finished", r.end_ns != 0}};
    list.push_back({{"id", r.id},
                    {"seq", r.seq},
                    {"group", group},
                    {"op", r.op},
                    {"point_to_point", r.point_to_point},
                    {"dtype", std::string(dtype_name(r.dtype))},
                    {"sizes", std::vector<int64_t>(r.sizes, r.sizes + std::min<int>(r.ndim, 4))},
                    {"ndim", r.ndim},
                    {"numel", r.numel},
                    {"peer", r.peer},
                    {"site", ledger_site(r.site)},
                    {"shapes_hash", fmt::format("{:016x}", r.shapes_hash)},
                    {"enqueue_ns", r.enqueue_ns},
                    {"start_ns", r.start_ns},
                    {"end_ns", r.end_ns}});
    const int64_t end = r.end_ns ? r.end_ns : now;
    events.push_back({{"name", r.op},
                      {"cat", "collective"},
                      {"ph", "X"},
                      {"pid", rank},
                      {"tid", r.group},
                      {"ts", double(r.enqueue_ns) / 1e3},
                      {"dur", double(end - r.enqueue_ns) / 1e3},
                      {"args", args}});
  }
  nlohmann::json doc = {{"rt_ledger",
                         {{"format", "rustytorch collective ledger 1"},
                          {"rank", rank},
                          {"clock", "steady clock, nanoseconds (enqueue_ns, start_ns, end_ns; end_ns 0: still running)"},
                          {"dumped_ns", now},
                          {"records", list}}},
                        {"traceEvents", events},
                        {"displayTimeUnit", "ms"}};
  return doc.dump(1);
}

void write_ledger_trace(const std::string& path, int rank) {
  const std::string text = ledger_trace_json(rank);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw DistError(fmt::format("cannot write the collective ledger to {}: check the folder exists and is writable", path));
  out << text;
  if (!out.flush()) throw DistError(fmt::format("writing the collective ledger to {} failed (disk full?)", path));
}

}  // namespace rt::dist
