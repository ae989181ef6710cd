// Trace plugins run in a child process: the crashing-importer fixture crashes, hangs, exits, prints and sends
// invalid slices, and each time the test process (the parent) goes on with a clear error.
#include <catch2/catch.hpp>

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "rt/plugin_host/importer_checks.h"
#include "rt/plugin_host/trace_plugins.h"

namespace fs = std::filesystem;
using namespace rt::plugin;

namespace {

Manifest crashing() { return read_manifest(fs::path(RT_TRACE_FIXTURE_DIR) / "crashing-importer" / "plugin.json"); }
Manifest folded() { return read_manifest(fs::path(RT_SHIPPED_PLUGIN_DIR) / "folded-stacks" / "plugin.json"); }

TraceRunOptions run_options() {
  TraceRunOptions o;
  o.runner = RT_TRACE_RUNNER;
  return o;
}

class TempDir {
 public:
  TempDir() : path_(fs::temp_directory_path() / ("rt-test-oop-" + std::to_string(getpid()) + "-" +
                                                 std::to_string(counter_++))) {
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  fs::path write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name, std::ios::binary) << text;
    return path_ / name;
  }
  const fs::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

// The error importing `text` with the fixture gives.
TracePluginError import_error(const std::string& text, TraceRunOptions options = run_options()) {
  TempDir dir;
  const fs::path file = dir.write("input.crash", text);
  try {
    import_with_plugin(crashing(), file, options);
  } catch (const TracePluginError& e) {
    return e;
  }
  FAIL("importing \"" << text << "\" succeeded");
  return TracePluginError("");
}

}  // namespace

TEST_CASE("the runner is found beside the running program") {
  CHECK(fs::equivalent(trace_plugin_runner(), RT_TRACE_RUNNER));
}

TEST_CASE("a segfaulting importer costs one failed import, named with its signal and the file") {
  TempDir dir;
  const fs::path file = dir.write("hostile.crash", "segv please");
  try {
    import_with_plugin(crashing(), file, run_options());
    FAIL("the import succeeded");
  } catch (const TracePluginError& e) {
    const std::string expected = fmt::format(
        "importer org.test.crashing-importer crashed (SIGSEGV) while reading {}; nothing was imported", file.string());
    CHECK(e.what() == expected);
    CHECK(e.failure() == TraceFailure::Crashed);
  }
  // ...and the parent goes on: the next import works.
  const TraceImport ok = import_with_plugin(crashing(), dir.write("fine.crash", "crash-fixture"), run_options());
  REQUIRE(ok.session.ops.size() == 1);
  CHECK(ok.session.strings.at(ok.session.ops[0].name) == "fixture");
}

TEST_CASE("a crash while the plugin initializes is named as such") {
  TempDir dir;
  const Manifest m = read_manifest(fs::path(RT_FIXTURE_PLUGIN_DIR) / "init-crashes" / "plugin.json");
  const fs::path file = dir.write("any.fixture", "x");
  try {
    import_with_plugin(m, file, run_options());
    FAIL("the import succeeded");
  } catch (const TracePluginError& e) {
    const std::string expected = fmt::format(
        "importer org.test.init-crashes crashed (SIGSEGV) while initializing the plugin, before reading {}; "
        "nothing was imported",
        file.string());
    CHECK(e.what() == expected);
  }
}

TEST_CASE("abort, exit and hang are each a clear error") {
  const TracePluginError aborted = import_error("abort");
  CHECK_THAT(aborted.what(), Catch::Contains("crashed (SIGABRT) while reading"));

  const TracePluginError exited = import_error("exit");
  CHECK_THAT(exited.what(), Catch::Contains("exited with status 7 while reading"));
  CHECK(exited.failure() == TraceFailure::Crashed);

  TraceRunOptions quick = run_options();
  quick.timeout = std::chrono::milliseconds(1500);
  const TracePluginError hung = import_error("hang", quick);
  CHECK_THAT(hung.what(), Catch::Contains("ran past its 1.5 s timeout and was killed while reading"));
  CHECK_THAT(hung.what(), Catch::EndsWith("nothing was imported"));
  CHECK(hung.failure() == TraceFailure::TimedOut);
}

TEST_CASE("what a plugin prints cannot corrupt the channel, and is kept as its log") {
  TempDir dir;
  const TraceImport r = import_with_plugin(crashing(), dir.write("loud.crash", "print"), run_options());
  REQUIRE(r.session.ops.size() == 1);
  CHECK_THAT(r.plugin_log, Catch::Contains("a message on stderr"));
  CHECK_THAT(r.plugin_log, Catch::Contains("garbage on stdout 1999"));
}

TEST_CASE("bytes on the channel that are not the framing end the run") {
  const TracePluginError garbage = import_error("channel");
  CHECK_THAT(garbage.what(), Catch::Contains("importer org.test.crashing-importer sent bytes that are not the trace "
                                              "plugin framing (end record at byte 0 claims 2147483647 bytes"));
  CHECK_THAT(garbage.what(), Catch::EndsWith("nothing was imported"));
  CHECK(garbage.failure() == TraceFailure::BrokeProtocol);
}

TEST_CASE("a crashing exporter leaves no file, not even a partial one") {
  TempDir dir;
  rt::prof::SessionData d;
  d.ops.push_back({.start_ns = 0, .end_ns = 10, .thread = 1, .name = d.strings.intern("a")});
  const fs::path out = dir.path() / "out.crash";
  try {
    export_with_plugin(crashing(), d, out, run_options());
    FAIL("the export succeeded");
  } catch (const TracePluginError& e) {
    const std::string expected = fmt::format(
        "exporter org.test.crashing-importer crashed (SIGSEGV) while writing {}; nothing was written", out.string());
    CHECK(e.what() == expected);
    CHECK(e.failure() == TraceFailure::Crashed);
  }
  CHECK(fs::is_empty(dir.path()));
}

TEST_CASE("slices that do not nest, or that the sink refuses, are not imported") {
  const TracePluginError overlap = import_error("overlap");
  CHECK_THAT(overlap.what(), Catch::Contains("produced a trace the host refuses"));
  CHECK_THAT(overlap.what(), Catch::Contains("overlap without nesting"));
  CHECK(overlap.failure() == TraceFailure::InvalidTrace);

  const TracePluginError utf8 = import_error("badutf8");
  CHECK_THAT(utf8.what(), Catch::Contains("could not read"));
  CHECK_THAT(utf8.what(), Catch::Contains("not UTF-8"));
  CHECK(utf8.failure() == TraceFailure::Refused);

  const TracePluginError silent = import_error("silent");
  CHECK_THAT(silent.what(), Catch::Contains("(invalid input): failed with status 2 and no message"));
}

TEST_CASE("a refused file names the plugin, the file and the plugin's message") {
  TempDir dir;
  const fs::path file = dir.write("bad.folded", "a;b 1\na;;c 2\n");
  try {
    import_with_plugin(folded(), file, run_options());
    FAIL("the import succeeded");
  } catch (const TracePluginError& e) {
    const std::string expected = fmt::format(
        "importer org.rustytorch.folded-stacks could not read {} (invalid input): line 2: frame 2 is empty (a ';' "
        "at the start or the end, or two in a row); nothing was imported",
        file.string());
    CHECK(e.what() == expected);
    CHECK(e.failure() == TraceFailure::Refused);
  }
}

TEST_CASE("limits given to the run hold in the child and the parent") {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 50; ++i) text += fmt::format("f{} 1\n", i);
  TraceRunOptions few = run_options();
  few.limits.max_slices = 10;
  try {
    import_with_plugin(folded(), dir.write("many.folded", text), few);
    FAIL("the import succeeded");
  } catch (const TracePluginError& e) {
    CHECK_THAT(e.what(), Catch::Contains("more than 10 slices"));
  }
}

TEST_CASE("a missing helper, file or library is a clear error") {
  TempDir dir;
  TraceRunOptions nowhere = run_options();
  nowhere.runner = dir.path() / "no-such-runner";
  try {
    import_with_plugin(folded(), dir.write("x.folded", "a 1\n"), nowhere);
    FAIL("the import succeeded");
  } catch (const TracePluginError& e) {
    CHECK_THAT(e.what(), Catch::Contains("could not be started"));
    CHECK(e.failure() == TraceFailure::Unavailable);
  }
  CHECK_THROWS_WITH(import_with_plugin(folded(), dir.path() / "absent.folded", run_options()),
                    Catch::Contains("is not a file"));

  fs::create_directories(dir.path() / "no-library");
  std::ofstream(dir.path() / "no-library" / "plugin.json")
      << R"({"id": "org.test.no-library", "name": "x", "version": "1.0.0", "kinds": ["importer"], "abi": "1.0",
            "library": "missing.so", "formats": [{"name": "x", "extensions": [".x"]}]})";
  const Manifest m = read_manifest(dir.path() / "no-library" / "plugin.json");
  CHECK_THROWS_WITH(import_with_plugin(m, dir.write("y.x", "1"), run_options()),
                    Catch::Contains("missing.so does not exist"));
}

TEST_CASE("detection runs every importer's detect in a child and survives one that crashes") {
  TempDir dir;
  const fs::path file = dir.write("stacks.txt", "main;f 3\nmain;g 2\n");
  std::vector<DetectResult> results;
  const std::optional<Manifest> pick = detect_importer({crashing(), folded()}, file, run_options(), &results);
  REQUIRE(pick);
  CHECK(pick->id == "org.rustytorch.folded-stacks");
  REQUIRE(results.size() == 2);
  CHECK(results[0].confidence == 0);
  CHECK(results[1].confidence == 90);

  const fs::path crashy = dir.write("detect.crash", "detect-segv");
  const DetectResult crashed = detect_with_plugin(crashing(), crashy, run_options());
  CHECK(crashed.confidence == 0);
  CHECK_THAT(crashed.problem, Catch::Contains("crashed (SIGSEGV) while detecting the format of"));

  CHECK(detect_with_plugin(crashing(), dir.write("f.crash", "crash-fixture"), run_options()).confidence == 40);
  CHECK_FALSE(detect_importer({folded()}, dir.write("prose.txt", "hello world, no stacks here\n"), run_options()));
}

TEST_CASE("a failed export leaves no file behind") {
  TempDir dir;
  rt::prof::SessionData d;
  d.ops.push_back({.start_ns = 0, .end_ns = 10, .thread = 1, .name = d.strings.intern("a")});
  d.metadata["sample_period_ns"] = "soon";
  const fs::path out = dir.path() / "out.folded";
  try {
    export_with_plugin(folded(), d, out, run_options());
    FAIL("the export succeeded");
  } catch (const TracePluginError& e) {
    CHECK_THAT(e.what(), Catch::StartsWith("exporter org.rustytorch.folded-stacks could not write " + out.string()));
    CHECK_THAT(e.what(), Catch::EndsWith("nothing was written"));
  }
  CHECK(fs::is_empty(dir.path()));
}

TEST_CASE("find_trace_plugins and find_exporter read manifests only") {
  const std::vector<Manifest> importers =
      find_trace_plugins(Kind::Importer, {fs::path(RT_SHIPPED_PLUGIN_DIR), fs::path(RT_TRACE_FIXTURE_DIR)});
  std::vector<std::string> ids;
  for (const Manifest& m : importers) ids.push_back(m.id);
  CHECK(std::find(ids.begin(), ids.end(), "org.rustytorch.folded-stacks") != ids.end());
  CHECK(std::find(ids.begin(), ids.end(), "org.test.crashing-importer") != ids.end());
  const std::vector<Manifest> exporters = find_trace_plugins(Kind::Exporter, {fs::path(RT_FIXTURE_PLUGIN_DIR)});
  CHECK(exporters.empty());
  const std::vector<Manifest> shipped = find_trace_plugins(Kind::Exporter, {fs::path(RT_SHIPPED_PLUGIN_DIR)});
  CHECK(find_exporter(shipped, "folded-stacks")->id == "org.rustytorch.folded-stacks");
  CHECK(find_exporter(shipped, "org.rustytorch.folded-stacks"));
  CHECK_FALSE(find_exporter(shipped, "pprof"));
}

TEST_CASE("a plugin off by default is left out of detection but runs when named") {
  const fs::path fixtures(RT_FIXTURE_PLUGIN_DIR);
  const std::vector<Manifest> enabled = find_trace_plugins(Kind::Importer, {fixtures});
  const std::vector<Manifest> all = find_trace_plugins(Kind::Importer, {fixtures}, /*include_disabled=*/true);
  auto has = [](const std::vector<Manifest>& list, const std::string& id) {
    return std::any_of(list.begin(), list.end(), [&](const Manifest& m) { return m.id == id; });
  };
  CHECK_FALSE(has(enabled, "org.test.off-by-default"));
  CHECK(has(all, "org.test.off-by-default"));
  CHECK(has(enabled, "org.test.base"));

  TempDir dir;
  const Manifest off = read_manifest(fixtures / "off-by-default" / "plugin.json");
  const fs::path file = dir.write("x.fixture", "FIXTURE");
  CHECK(detect_with_plugin(off, file, run_options()).confidence == 100);  // loaded although off by default
  CHECK_THROWS_WITH(import_with_plugin(off, file, run_options()),
                    Catch::Contains("(unsupported): the fixture importer reads nothing"));
}

TEST_CASE("importer checks find a parser that crashes on truncated files") {
  TempDir dir;
  const fs::path sample = dir.write("sample.crash", "fragile but whole\n");
  ImporterCheckOptions options;
  options.run = run_options();
  options.prefixes = 6;
  options.byte_flips = 0;
  const std::vector<ImporterFinding> findings = check_importer(crashing(), sample, options);
  REQUIRE(findings.size() > 1);
  // Its exporter crashes: the round trip finds that first.
  CHECK(findings[0].check == "round trip");
  CHECK_THAT(findings[0].message, Catch::StartsWith("exporter org.test.crashing-importer crashed (SIGSEGV)"));
  for (size_t i = 1; i < findings.size(); ++i) {
    CHECK(findings[i].check == "truncated");
    CHECK_THAT(findings[i].message, Catch::StartsWith("sample.crash cut to its first"));
    CHECK_THAT(findings[i].message, Catch::Contains("crashed (SIGSEGV)"));
  }

  const std::vector<ImporterFinding> dead = check_importer(crashing(), dir.write("s.crash", "segv\n"), options);
  REQUIRE(dead.size() == 1);
  CHECK(dead[0].check == "import");
}
