// Gradient histograms in the SQLite store (GradientHistograms, schema 6): saved and loaded record for record
// (NaN and Inf norms, gradients with no finite value), streamed by a recording session, migrated from a
// schema-5 store, deleted with their session, and corrupt rows reported instead of loaded.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <string>

#include "rt/prof/gradient_histograms.h"
#include "rt/prof/session.h"
#include "rt/prof/store.h"
#include "rt/rt.h"
#include "store/sqlite_connection.h"
#include "temp_store_dir.h"

using namespace rt;
using prof::GradientHistogramRecord;
using prof::SessionData;
using prof::Store;
using prof::StoreError;
namespace fs = std::filesystem;

namespace {

const prof::testing::TempStoreDir scratch("rt_grad_store_test_");

SessionData session_with_histograms() {
  SessionData d;
  d.name = "grads";
  d.start_ns = 1000;
  d.end_ns = 9000;
  d.complete = true;
  d.steps = {{0, 1000, 5000}, {1, 5000, 9000}};
  GradientHistogramRecord w;
  w.step = 0;
  w.time_ns = 4000;
  w.name = d.strings.intern("encoder.0.weight");
  w.numel = 10;
  w.norm = 3.25;
  w.lo = -0.125;
  w.hi = 1e-3;
  w.counts = {1, 2, 3, 4};
  GradientHistogramRecord nan = w;
  nan.step = 1;
  nan.time_ns = 8000;
  nan.norm = std::nan("");
  nan.nan_count = 2;
  nan.inf_count = 1;
  nan.counts = {3, 0, 0, 4};
  GradientHistogramRecord inf = nan;
  inf.name = d.strings.intern("encoder.0.bias");
  inf.norm = INFINITY;
  inf.nan_count = 0;
  inf.inf_count = 3;
  inf.counts = {0, 7, 0, 0};
  GradientHistogramRecord none;  // no finite value: no bins, a zero range
  none.step = 1;
  none.time_ns = 8500;
  none.name = d.strings.intern("head.weight");
  none.numel = 2;
  none.norm = std::nan("");
  none.nan_count = 2;
  d.gradient_histograms = {w, nan, inf, none};
  return d;
}

void check_same_histograms(const SessionData& a, const SessionData& b) {
  REQUIRE(a.gradient_histograms.size() == b.gradient_histograms.size());
  for (size_t i = 0; i < a.gradient_histograms.size(); ++i) {
    const GradientHistogramRecord &x = a.gradient_histograms[i], &y = b.gradient_histograms[i];
    CHECK(a.strings.at(x.name) == b.strings.at(y.name));
    CHECK(x.step == y.step);
    CHECK(x.time_ns == y.time_ns);
    CHECK(x.numel == y.numel);
    if (std::isnan(x.norm)) CHECK(std::isnan(y.norm));
    else CHECK(x.norm == y.norm);
    CHECK(x.lo == y.lo);
    CHECK(x.hi == y.hi);
    CHECK(x.nan_count == y.nan_count);
    CHECK(x.inf_count == y.inf_count);
    CHECK(x.counts == y.counts);
  }
}

}  // namespace

TEST_CASE("a saved session's gradient histograms load back record for record") {
  const fs::path p = scratch.fresh("roundtrip.sqlite");
  Store store = Store::open(p);
  const SessionData d = session_with_histograms();
  const int64_t id = store.save_session(d);
  check_same_histograms(d, store.load_session(id));
  // Plain SQL sees one row per record, the bins as a JSON array.
  prof::sqlite::Connection raw(p, true, 1000);
  CHECK(raw.query_int("SELECT count(*) FROM GradientHistograms WHERE sessionId = " + std::to_string(id)) == 4);
  CHECK(raw.query_int("SELECT sum(value) FROM GradientHistograms, json_each(GradientHistograms.counts) "
                      "WHERE sessionId = " + std::to_string(id) + " AND step = 0") == 10);
}

TEST_CASE("a recording session streams its gradient histograms into the store") {
  const fs::path p = scratch.fresh("live.sqlite");
  prof::SessionOptions o;
  o.cupti = prof::CuptiMode::Off;
  o.name = "live";
  o.store_path = p.string();
  o.flush_interval = std::chrono::milliseconds(10);
  prof::Session s(o);
  s.start();
  REQUIRE(prof::record_gradient_histogram("fc.weight", arange(12).reshape({3, 4}), 6));
  s.step();
  REQUIRE(prof::record_gradient_histogram("fc.weight", full({3, 4}, 0.5), 6));
  s.stop();
  const SessionData stored = Store::open(p).load_session(s.store_session_id());
  check_same_histograms(s.data(), stored);
  CHECK(stored.gradient_histograms[1].step == 1);
}

TEST_CASE("a schema-5 store migrates: old sessions load without histograms, new ones keep them") {
  const fs::path p = scratch.fresh("v5.sqlite");
  int64_t old_id = 0;
  {
    Store store = Store::open(p);
    SessionData old = session_with_histograms();
    old.gradient_histograms.clear();
    old_id = store.save_session(old);
  }
  {  // What a schema-5 build wrote: no GradientHistograms table, and its index never built.
    prof::sqlite::Connection raw(p, false, 1000);
    raw.exec("DROP INDEX IF EXISTS GradientHistograms_name_step");
    raw.exec("DROP TABLE GradientHistograms");
    raw.exec("PRAGMA user_version = 5");
  }
  Store store = Store::open(p);
  CHECK(store.schema_version() == 6);
  const SessionData old = store.load_session(old_id);
  CHECK(old.name == "grads");
  CHECK(old.gradient_histograms.empty());
  const SessionData d = session_with_histograms();
  check_same_histograms(d, store.load_session(store.save_session(d)));
}

TEST_CASE("delete_session removes the session's gradient histograms and leaves the others") {
  const fs::path p = scratch.fresh("delete.sqlite");
  Store store = Store::open(p);
  const int64_t a = store.save_session(session_with_histograms());
  const int64_t b = store.save_session(session_with_histograms());
  store.delete_session(a);
  prof::sqlite::Connection raw(p, true, 1000);
  CHECK(raw.query_int("SELECT count(*) FROM GradientHistograms WHERE sessionId = " + std::to_string(a)) == 0);
  CHECK(store.load_session(b).gradient_histograms.size() == 4);
}

TEST_CASE("corrupt gradient histogram rows are reported with the store and the row, never loaded") {
  const fs::path p = scratch.fresh("corrupt.sqlite");
  int64_t id = 0;
  {
    Store store = Store::open(p);
    id = store.save_session(session_with_histograms());
  }
  const std::string first = "(SELECT min(id) FROM GradientHistograms)";
  for (const auto& [sql, message] : std::initializer_list<std::pair<std::string, std::string>>{
           {"UPDATE GradientHistograms SET counts = 'not json' WHERE id = " + first, "not a JSON array"},
           {"UPDATE GradientHistograms SET counts = '[1,2,3]' WHERE id = " + first, "3 counts but bins = 4"},
           {"UPDATE GradientHistograms SET counts = '[1,2,3,\"x\"]' WHERE id = " + first, "not an integer"},
           {"UPDATE GradientHistograms SET counts = '[1,2,3,3]' WHERE id = " + first, "sum to 9"},
           {"UPDATE GradientHistograms SET nanCount = 11 WHERE id = " + first, "11 NaN"}}) {
    DYNAMIC_SECTION(message) {  // each section runs the test case afresh, on a fresh store
      {
        prof::sqlite::Connection raw(p, false, 1000);
        prof::sqlite::Transaction tx(raw);
        raw.exec(sql);
        tx.commit();
      }
      Store store = Store::open(p);
      CHECK_THROWS_AS(store.load_session(id), StoreError);
      CHECK_THROWS_WITH(store.load_session(id), Catch::Contains("is corrupt") && Catch::Contains(message) &&
                                                    Catch::Contains(p.string()));
    }
  }
}

TEST_CASE("a writer refuses inconsistent histograms instead of storing them") {
  Store store = Store::open(scratch.fresh("refuse.sqlite"));
  SessionData d = session_with_histograms();
  d.gradient_histograms[0].counts[0] = 100;
  CHECK_THROWS_WITH(store.save_session(d), Catch::Contains("encoder.0.weight") && Catch::Contains("inconsistent"));
}
