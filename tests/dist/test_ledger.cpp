// The collective ledger without processes: records, the ring, call sites, the JSON dump, and the
// desync and hang findings on hand-made summaries.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "ledger/desync_check.h"
#include "ledger/ledger_internal.h"
#include "rt/dist/ledger.h"
#include "rt/op_observer.h"
#include "rt/ops/creation.h"
#include "rt/prof/session.h"

#include <algorithm>

namespace dist = rt::dist;

namespace {
uint64_t record(const char* op, const rt::Tensor& t, uint64_t seq, uint32_t group, int peer = -1) {
  dist::detail::LedgerEntry e{op, seq, group, false, peer, &t, t.numel(), dist::detail::hash_shape(0, t)};
  return dist::detail::ledger_record(e);
}
}  // namespace

TEST_CASE("ledger: a record names its op, tensor, peer, call site and group, finish stamps its end") {
  const uint32_t group = dist::detail::ledger_group_id("test-group");
  const rt::Tensor t = rt::zeros({20, 10});
  uint64_t id;
  {
    dist::CallSiteScope site(dist::intern_call_site("train.py:91"));
    id = record("broadcast", t, 683, group, 1);
  }
  auto find = [&] {
    for (const auto& r : dist::ledger_snapshot())
      if (r.id == id) return r;
    FAIL("record missing");
    return dist::CollectiveRecord{};
  };
  dist::CollectiveRecord r = find();
  CHECK(dist::describe_record(r) == "broadcast([20, 10] float32, root 1) at train.py:91, sequence 683 in group 'test-group'");
  CHECK(r.end_ns == 0);
  dist::detail::ledger_finish(id);
  CHECK(find().end_ns >= r.enqueue_ns);
  CHECK(dist::intern_call_site("train.py:91") == r.site);  // interned once
}

TEST_CASE("ledger: the ring keeps the newest records and ignores finishing an overwritten one") {
  const uint32_t group = dist::detail::ledger_group_id("ring");
  const rt::Tensor t = rt::zeros({1});
  const uint64_t first = record("all_reduce", t, 1, group);
  for (uint64_t i = 0; i < dist::kLedgerCapacity + 5; ++i) record("all_reduce", t, i + 2, group);
  dist::detail::ledger_finish(first);  // its slot now holds a newer record: left alone
  auto snap = dist::ledger_snapshot();
  REQUIRE(snap.size() == dist::kLedgerCapacity);
  CHECK(snap.front().id < snap.back().id);
  CHECK(snap.front().id > first);
  for (const auto& r : snap) CHECK(r.end_ns == 0);
}

TEST_CASE("ledger: the trace JSON has the records and one complete event per record") {
  const rt::Tensor t = rt::zeros({3});
  const uint64_t id = record("all_gather", t, 7, dist::detail::ledger_group_id("json-group"));
  auto doc = nlohmann::json::parse(dist::ledger_trace_json(4));
  CHECK(doc["rt_ledger"]["rank"] == 4);
  bool found = false;
  for (const auto& r : doc["rt_ledger"]["records"])
    if (r["id"] == id) {
      found = true;
      CHECK(r["op"] == "all_gather");
      CHECK(r["group"] == "json-group");
      CHECK(r["end_ns"] == 0);
    }
  CHECK(found);
  size_t complete = 0;
  for (const auto& e : doc["traceEvents"]) complete += e["ph"] == "X";
  CHECK(complete == doc["rt_ledger"]["records"].size());
}

namespace {
nlohmann::json call(uint64_t seq, const std::string& op, const std::string& fp, bool finished, double waiting) {
  return {{"seq", seq}, {"op", op}, {"call", op + "(...) at x.py:" + std::to_string(seq)},
          {"fingerprint", fp}, {"finished", finished}, {"waiting_s", waiting}};
}
nlohmann::json summary(int rank, uint64_t last, std::vector<nlohmann::json> recent) {
  return {{"rank", rank}, {"groups", {{{"name", "default"}, {"last_seq", last}, {"recent", recent}}}}};
}
}  // namespace

TEST_CASE("desync check: the same sequence number with different fingerprints is one finding") {
  auto reports = dist::detail::check_ledger_summaries(
      {summary(0, 5, {call(5, "all_reduce", "a", false, 0.2), call(4, "barrier", "b", true, 0)}),
       summary(1, 5, {call(5, "broadcast", "c", false, 0.2), call(4, "barrier", "b", true, 0)})},
      30);
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].key == "desync/default/5");
  CHECK(reports[0].text.find("at sequence 5: rank 1 called broadcast(...) at x.py:5 where rank 0 called "
                             "all_reduce(...) at x.py:5") != std::string::npos);
}

TEST_CASE("desync check: members waiting past the threshold name the member that has not called it") {
  auto reports = dist::detail::check_ledger_summaries(
      {summary(0, 9, {call(9, "all_reduce", "a", false, 12.0)}),
       summary(1, 8, {call(8, "barrier", "b", true, 0)}),
       summary(2, 9, {call(9, "all_reduce", "a", false, 0.5)})},
      10);
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].key == "hang/default/9");
  CHECK(reports[0].text ==
        "suspected hang in group 'default': ranks 0, 2 have waited 12.0 s in all_reduce(...) at x.py:9; rank 1 has "
        "not called it: its last collective is barrier(...) at x.py:8 (finished)");
  CHECK(dist::detail::check_ledger_summaries({summary(0, 9, {call(9, "all_reduce", "a", false, 3.0)})}, 10).empty());
}

TEST_CASE("ledger: while a profiler records, each finished call reaches it with its group, times and bytes") {
  const uint32_t group = dist::detail::ledger_group_id("profiled-group");
  const rt::Tensor t = rt::zeros({20, 10});
  const uint64_t before = record("all_reduce", t, 1, group);
  dist::detail::ledger_finish(before);  // nothing records yet: not in the session

  rt::prof::Session session;
  session.start();
  uint64_t id;
  {
    dist::CallSiteScope site(dist::intern_call_site("train.py:91"));
    id = record("broadcast", t, 683, group, 1);
  }
  dist::detail::ledger_start(id);
  dist::detail::ledger_finish(id);
  dist::detail::ledger_finish(id);  // finishing twice reports once
  const uint64_t unfinished = record("all_reduce", t, 684, group);
  session.stop();
  dist::detail::ledger_finish(unfinished);  // after stop: not in the session

  const rt::prof::SessionData& d = session.data();
  REQUIRE(d.collectives.size() == 1);
  const rt::prof::CollectiveRecord& c = d.collectives[0];
  CHECK(d.strings.at(c.name) == "broadcast");
  CHECK(d.strings.at(c.group) == "profiled-group");
  CHECK(d.strings.at(c.shape) == "[20, 10]");
  CHECK(d.strings.at(c.dtype) == "float32");
  CHECK(d.strings.at(c.call_site) == "train.py:91");
  CHECK(c.seq == 683);
  CHECK(c.numel == 200);
  CHECK(c.bytes == 800);
  CHECK(c.peer == 1);
  CHECK_FALSE(c.point_to_point);
  CHECK(c.thread == rt::current_thread_id());
  CHECK(c.enqueue_ns <= c.start_ns);
  CHECK(c.start_ns <= c.end_ns);
  CHECK(session.counts().collectives == 1);
  const auto snap = dist::ledger_snapshot();
  const auto it = std::find_if(snap.begin(), snap.end(), [&](const auto& r) { return r.id == id; });
  REQUIRE(it != snap.end());
  CHECK(it->start_ns == c.start_ns);  // the ledger and the profiler agree
  CHECK(it->thread == c.thread);
}
