// Every way opening or reading a store can go wrong gives a StoreError naming the problem and
// the fix; none crashes or hangs.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "temp_store_dir.h"
#include "rt/prof/store.h"
#include "store/sqlite_connection.h"

using namespace rt::prof;
namespace fs = std::filesystem;
using Catch::Contains;

namespace {

const rt::prof::testing::TempStoreDir scratch("rt_store_errors_");

fs::path fresh_path(std::string_view name) { return scratch.fresh(name); }

SessionData small_session() {
  SessionData d;
  d.name.append("small session");
  d.complete = true;
  for (int i = 0; i < 200; ++i)
    d.ops.push_back({i * 10, i * 10 + 5, 1, d.strings.intern("op" + std::to_string(i % 7)), 0, 0, 0, -1, 0, 0, OpKind::Op});
  return d;
}

}  // namespace

TEST_CASE("a file that is not a database") {
  const fs::path p = fresh_path("notes.txt");
  std::ofstream(p) << "these are my notes, not a database; they are long enough to fill a header page......\n";
  REQUIRE_THROWS_WITH(Store::open(p),
                      p.string() + " is not a RustyTorch store (SQLite said: file is not a database)");
  std::ifstream in(p);
  std::string first;
  std::getline(in, first);
  CHECK(first.rfind("these are my notes", 0) == 0);  // left untouched
}

TEST_CASE("an SQLite database of another program") {
  const fs::path p = fresh_path("other.sqlite");
  {
    sqlite::Connection raw(p, true, 100);
    raw.exec("CREATE TABLE recipes (name TEXT)");
  }
  REQUIRE_THROWS_WITH(Store::open(p), Contains("is not a RustyTorch store") && Contains("other tables"));
  {
    sqlite::Connection raw(p, false, 100);
    raw.exec("PRAGMA application_id = 1234");
  }
  REQUIRE_THROWS_WITH(Store::open(p), Contains("is not a RustyTorch store") && Contains("another program"));
}

TEST_CASE("a store from a newer schema") {
  const fs::path p = fresh_path("newer.sqlite");
  Store::open(p).save_session(small_session());
  {
    sqlite::Connection raw(p, false, 100);
    raw.exec("PRAGMA user_version = 99");
  }
  REQUIRE_THROWS_WITH(Store::open(p), Contains("created by a newer RustyTorch (schema 99 > " +
                                                        std::to_string(kStoreSchemaVersion) + "): upgrade"));
}

TEST_CASE("a store locked by another connection fails after the busy timeout instead of hanging") {
  const fs::path p = fresh_path("locked.sqlite");
  Store::open(p).save_session(small_session());

  SECTION("an exclusive lock blocks even opening") {
    sqlite::Connection holder(p, false, 100);
    holder.exec("PRAGMA locking_mode = EXCLUSIVE");
    holder.exec("BEGIN EXCLUSIVE");
    holder.exec("INSERT INTO SessionMetadata VALUES (1, 'held', 'yes')");
    REQUIRE_THROWS_WITH(Store::open(p, {.busy_timeout_ms = 100}),
                        Contains(p.string() + " is locked by another connection (gave up after 100 ms") &&
                            Contains("retry"));
    holder.exec("COMMIT");
  }
  SECTION("a writer holding the write lock makes new sessions fail, not wait forever") {
    Store store = Store::open(p, {.busy_timeout_ms = 100});
    sqlite::Connection holder(p, false, 100);
    holder.exec("BEGIN IMMEDIATE");
    REQUIRE_THROWS_WITH(store.begin_session("blocked"), Contains("is locked by another connection"));
    CHECK(store.list_sessions().size() == 1);  // reading still works
    holder.exec("ROLLBACK");
    SessionWriter w = store.begin_session("after");  // and the store recovers once the lock is gone
    w.append(small_session());
    w.finish();
  }
}

TEST_CASE("a session id that is not in the store") {
  Store store = Store::open(fresh_path("missing.sqlite"));
  REQUIRE_THROWS_WITH(store.load_session(42), Contains("session 42 is not in store") &&
                                                  Contains("it has no sessions") && Contains("rtorch trace list"));
  const int64_t id = store.save_session(small_session());
  REQUIRE_THROWS_WITH(store.load_session(id + 7), Contains("it has " + std::to_string(id)));
  REQUIRE_THROWS_AS(store.session_info(-1), StoreError);
  REQUIRE_THROWS_AS(store.top_ops(99), StoreError);
  REQUIRE_THROWS_AS(store.graph_snapshots(99), StoreError);
  REQUIRE_THROWS_AS(store.delete_session(99), StoreError);
}

TEST_CASE("a store file that cannot be created") {
  const fs::path blocker = fresh_path("a_file");
  std::ofstream(blocker) << "x";
  REQUIRE_THROWS_WITH(Store::open(blocker / "sub" / "runs.sqlite"),
                      Contains("cannot create directory") && Contains("choose a writable location"));
  REQUIRE_THROWS_WITH(Store::open(blocker.parent_path()), Contains("is a directory, not a store file"));
  REQUIRE_THROWS_WITH(Store::open(""), Contains("empty path"));
  if (::geteuid() != 0) {  // root ignores directory permissions
    const fs::path dir = fresh_path("readonly_dir");
    fs::create_directories(dir);
    ::chmod(dir.c_str(), 0555);
    REQUIRE_THROWS_WITH(Store::open(dir / "runs.sqlite"), Contains("cannot open store") && Contains("writable"));
    ::chmod(dir.c_str(), 0755);
  }
}

TEST_CASE("a truncated or overwritten store gives an error, never a crash") {
  const fs::path good = fresh_path("good.sqlite");
  {
    Store store = Store::open(good);
    for (int i = 0; i < 5; ++i) store.save_session(small_session());
    sqlite::Connection raw(good, false, 100);
    raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  const auto size = fs::file_size(good);
  REQUIRE(size > 16 * 4096);
  for (int variant = 0; variant < 3; ++variant) {
    const fs::path bad = fresh_path("bad" + std::to_string(variant) + ".sqlite");
    fs::copy_file(good, bad);
    if (variant == 0) {
      fs::resize_file(bad, size / 3);
    } else {
      std::fstream f(bad, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(variant == 1 ? 4096 : std::streamoff(size / 2));  // a b-tree page / the middle
      const std::string junk(8192, '\x5a');
      f.write(junk.data(), std::streamsize(junk.size()));
    }
    // Every variant damages pages that reading all sessions back must touch (the ops' b-tree fills most of the
    // file), so each must be reported, naming the file and what to do.
    INFO("variant " << variant);
    const auto read_everything = [&bad] {
      Store store = Store::open(bad);
      for (const SessionInfo& s : store.list_sessions()) {
        store.load_session(s.id);
        store.top_ops(s.id);
      }
    };
    REQUIRE_THROWS_MATCHES(read_everything(), StoreError,
                           Catch::Matchers::Predicate<StoreError>([&bad](const StoreError& e) {
                             const std::string what = e.what();
                             return what.find(bad.string()) != std::string::npos &&
                                    (what.find("is corrupt") != std::string::npos ||
                                     what.find("is not a RustyTorch store") != std::string::npos);
                           }, "names the file and says it is damaged"));
  }
}

TEST_CASE("writer misuse is reported") {
  Store store = Store::open(fresh_path("misuse.sqlite"));
  SessionWriter w = store.begin_session("m");
  StringTable strings;  // only ""
  std::vector<OpRecord> ops = {{0, 1, 1, 5, 0, 0, 0, -1, 0, 0, OpKind::Op}};
  REQUIRE_THROWS_WITH(w.append_ops(ops, strings), Contains("string id 5") && Contains("holds 1 strings"));
  CHECK(store.load_session(w.id()).ops.empty());  // the failed batch was rolled back
  SessionWriter moved = std::move(w);
  REQUIRE_THROWS_WITH(w.finish(), Contains("moved from"));
  moved.finish();
}
