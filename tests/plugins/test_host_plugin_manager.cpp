// The plugin host against fixture plugins (tests/plugins/fixtures/): discovery, dependency order, the ABI
// handshake, lifecycle order, and every way a plugin can fail while the host goes on.
#include <catch2/catch.hpp>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "dependency_order.h"
#include "rt/plugin_host/crash_marker.h"
#include "rt/plugin_host/manifest.h"
#include "rt/plugin_host/plugin_manager.h"
#include "rt/plugin_host/plugin_settings.h"

namespace fs = std::filesystem;
using namespace rt::plugin;
using Catch::Matchers::Contains;

namespace {

// A temporary folder holding a chosen set of fixture plugins; the lifecycle log and state folders inside it.
struct PluginFolder {
  fs::path root;
  fs::path search;  // root/plugins: one folder per plugin
  PluginFolder() {
    std::string tmpl = "/tmp/rt-plugin-test-XXXXXX";
    root = ::mkdtemp(tmpl.data());
    search = root / "plugins";
    fs::create_directories(search);
    ::setenv("RT_FIXTURE_LOG", (root / "lifecycle.log").c_str(), 1);
    ::setenv("RT_PLUGIN_STATE_DIR", (root / "state").c_str(), 1);
    ::setenv("XDG_CONFIG_HOME", (root / "config").c_str(), 1);
  }
  ~PluginFolder() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  void add(const std::string& fixture, const fs::path& into = {}) {
    fs::path to = (into.empty() ? search : into) / fixture;
    fs::create_directories(to);
    fs::copy(fs::path(RT_FIXTURE_PLUGIN_DIR) / fixture, to, fs::copy_options::recursive);
  }
  std::vector<std::string> log() const {
    std::ifstream in(root / "lifecycle.log");
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
};

const PluginRecord& record(const PluginManager& pm, const std::string& id) {
  const PluginRecord* r = pm.find(id);
  REQUIRE(r != nullptr);
  return *r;
}

}  // namespace

TEST_CASE("manifests are read and every error names the file and the field") {
  fs::path f = "/plugins/x/plugin.json";
  Manifest m = parse_manifest(R"({"id": "org.example.folded", "name": "Folded", "version": "1.2.3",
      "kinds": ["importer", "exporter"], "abi": "1.0", "library": "libfolded.so",
      "formats": [{"name": "folded-stacks", "extensions": [".folded"]}],
      "dependencies": [{"id": "org.example.base", "version": ">=1.0.0"}],
      "cuda": {"major": 12, "architectures": [80, 90]}, "license": "MIT"})",
                              f);
  CHECK(m.id == "org.example.folded");
  CHECK(m.version == Version{1, 2, 3});
  CHECK(m.has_kind(Kind::Importer));
  CHECK_FALSE(m.has_kind(Kind::Ops));
  CHECK(m.library_path() == "/plugins/x/libfolded.so");
  CHECK(m.formats.at(0).extensions.at(0) == ".folded");
  CHECK(m.dependencies.at(0).accepts(Version{1, 0, 0}));
  CHECK_FALSE(m.dependencies.at(0).accepts(Version{0, 9, 9}));
  CHECK(*m.cuda_major == 12);

  auto error_of = [&](const std::string& json) {
    try {
      parse_manifest(json, f);
    } catch (const ManifestError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string ok_tail = R"("name": "n", "kinds": ["ops"], "abi": "1.0", "library": "l.so")";
  CHECK_THAT(error_of("{"), Contains("/plugins/x/plugin.json: not valid JSON"));
  CHECK_THAT(error_of("[]"), Contains("must hold a JSON object"));
  CHECK_THAT(error_of(R"({"version": "1.0.0", )" + ok_tail + "}"), Contains("\"id\" is missing"));
  CHECK_THAT(error_of(R"({"id": "MyPlugin", "version": "1.0.0", )" + ok_tail + "}"), Contains("reverse-DNS"));
  CHECK_THAT(error_of(R"({"id": "org.a.b", "version": "1.x", )" + ok_tail + "}"),
             Contains("\"version\" must be MAJOR.MINOR.PATCH (got \"1.x\")"));
  CHECK_THAT(error_of(R"({"id": "org.a.b", "version": "1.0.0", "name": "n", "kinds": ["widget"], "library": "l.so"})"),
             Contains("\"kinds\" has \"widget\""));
  CHECK_THAT(error_of(R"({"id": "org.a.b", "version": "1.0.0", "name": "n", "kinds": ["ops"], "library": "l.so"})"),
             Contains("\"abi\" is missing"));
  CHECK_THAT(error_of(R"({"id": "org.a.b", "version": "1.0.0", "name": "n", "kinds": ["ops"], "abi": "1.0",
                          "library": "../../lib/evil.so"})"),
             Contains("\"library\" must be a file name in the plugin's folder"));
  CHECK_THAT(error_of(R"({"id": "org.a.b", "version": "1.0.0", "name": "n", "kinds": ["importer"], "abi": "1.0",
                          "library": "l.so"})"),
             Contains("\"formats\" is missing"));
  CHECK_THAT(error_of(R"({"id": "org.a.b", "version": "1.0.0", )" + ok_tail +
                      R"(, "dependencies": [{"id": "org.a.b"}]})"),
             Contains("depends on itself"));
  CHECK_THAT(error_of(R"({"id": "org.a.b", "version": "1.0.0", )" + ok_tail +
                      R"(, "dependencies": [{"id": "org.c.d", "version": "~1"}]})"),
             Contains("\"version\" must be \"*\", \"X.Y.Z\" or \">=X.Y.Z\""));
  CHECK_THAT(error_of(R"({"id": "org.a.b", "version": "1.0.0", "name": "n", "kinds": ["panel"], "library": "l.so"})"),
             Contains("\"sdk\" is missing"));
}

TEST_CASE("dependency order puts dependencies first and names a cycle by its chain") {
  DependencyOrder o = order_by_dependencies({{"c", {"b"}}, {"b", {"a"}}, {"a", {}}, {"d", {}}});
  CHECK(o.order == std::vector<size_t>{2, 1, 0, 3});
  CHECK(o.cycles.empty());

  DependencyOrder c = order_by_dependencies({{"x", {}}, {"a", {"b"}}, {"b", {"c"}}, {"c", {"a"}}, {"d", {"a"}}});
  CHECK(c.order == std::vector<size_t>{0});
  REQUIRE(c.cycles.size() == 1);
  CHECK(format_chain(c.cycles[0]) == "a -> b -> c -> a");
  CHECK(c.in_cycle.size() == 4);
}

TEST_CASE("plugins load in dependency order and run Qt Creator's lifecycle") {
  PluginFolder dir;
  dir.add("dependent");  // listed first, initialized second
  dir.add("base");
  PluginManager pm;
  pm.discover({dir.search});
  REQUIRE(pm.plugins().size() == 2);
  pm.load_and_initialize();
  pm.extensions_initialized();
  pm.delayed_initialize();
  CHECK(record(pm, "org.test.base").state == PluginState::Running);
  CHECK(record(pm, "org.test.dependent").state == PluginState::Running);
  CHECK(record(pm, "org.test.base").load_ms > 0);
  pm.shutdown();
  CHECK(record(pm, "org.test.base").state == PluginState::Stopped);
  CHECK(dir.log() == std::vector<std::string>{
                         "org.test.base initialize", "org.test.dependent initialize",
                         "org.test.dependent extensions_initialized", "org.test.base extensions_initialized",
                         "org.test.dependent delayed_initialize", "org.test.base delayed_initialize",
                         "org.test.dependent shutdown", "org.test.base shutdown"});
}

TEST_CASE("a plugin that fails to initialize is disabled with its dependents, and the others go on") {
  PluginFolder dir;
  dir.add("init-fails");
  dir.add("after-init-fails");
  dir.add("init-throws");
  dir.add("base");
  PluginManager pm;
  pm.discover({dir.search});
  pm.load_and_initialize();
  pm.extensions_initialized();
  const PluginRecord& failed = record(pm, "org.test.init-fails");
  CHECK(failed.state == PluginState::Failed);
  CHECK_THAT(failed.error, Contains("initialize failed: the fixture refuses to initialize"));
  const PluginRecord& dependent = record(pm, "org.test.after-init-fails");
  CHECK(dependent.state == PluginState::Disabled);
  CHECK_THAT(dependent.error, Contains("depends on org.test.init-fails, which failed"));
  const PluginRecord& threw = record(pm, "org.test.init-throws");
  CHECK(threw.state == PluginState::Failed);
  CHECK_THAT(threw.error, Contains("initialize threw a C++ exception across the C boundary (the fixture's "
                                   "initialize threw instead of returning a status)"));
  CHECK(record(pm, "org.test.base").state == PluginState::Running);
  pm.shutdown();
  for (const std::string& line : dir.log()) CHECK(line.rfind("org.test.after-init-fails", 0) != 0);
}

TEST_CASE("the ABI handshake refuses what this host cannot serve, naming both versions") {
  PluginFolder dir;
  for (const char* f : {"abi-major", "newer-minor", "no-entry", "no-importer", "wrong-version"}) dir.add(f);
  PluginManager pm;
  pm.discover({dir.search});
  pm.load_and_initialize();
  CHECK_THAT(record(pm, "org.test.abi-major").error,
             Contains("built for plugin ABI 2.0, this RustyTorch++ speaks 1.0; rebuild the plugin"));
  CHECK_THAT(record(pm, "org.test.newer-minor").error, Contains("built for plugin ABI 1.99, newer than"));
  CHECK_THAT(record(pm, "org.test.no-entry").error, Contains("exports no rt_plugin_entry function"));
  CHECK_THAT(record(pm, "org.test.no-importer").error,
             Contains("plugin.json lists kind \"importer\" but RtPluginInfo.importer is NULL"));
  CHECK_THAT(record(pm, "org.test.wrong-version").error,
             Contains("the library is version \"1.0.0\" but plugin.json says \"2.0.0\""));
  for (const PluginRecord& r : pm.plugins()) CHECK(r.state == PluginState::Failed);
  CHECK(dir.log().empty());  // none was initialized
}

TEST_CASE("dependency problems are named: cycles by their chain, missing and too old dependencies") {
  PluginFolder dir;
  for (const char* f : {"cycle-a", "cycle-b", "missing-dependency", "old-dependency", "base"}) dir.add(f);
  PluginManager pm;
  pm.discover({dir.search});
  pm.load_and_initialize();
  CHECK_THAT(record(pm, "org.test.cycle-a").error,
             Contains("dependency cycle: org.test.cycle-a -> org.test.cycle-b -> org.test.cycle-a"));
  CHECK(record(pm, "org.test.cycle-b").state == PluginState::Failed);
  CHECK_THAT(record(pm, "org.test.missing-dependency").error,
             Contains("requires org.test.not-installed (>=2.0.0), which is not installed"));
  CHECK_THAT(record(pm, "org.test.old-dependency").error,
             Contains("requires org.test.base >=3.0.0, but version 1.0.0 is installed"));
  CHECK(record(pm, "org.test.base").state == PluginState::Initialized);
}

TEST_CASE("duplicate ids, invalid manifests, safe mode, --noload and off-by-default plugins load nothing") {
  PluginFolder dir;
  fs::path second = dir.root / "more";
  dir.add("base");
  dir.add("base", second);
  dir.add("off-by-default");
  fs::create_directories(dir.search / "broken");
  std::ofstream(dir.search / "broken" / "plugin.json") << "{\"id\": \"org.test.broken\"";
  {
    PluginManager pm;
    pm.discover({dir.search, second});
    pm.load_and_initialize();
    size_t duplicates = 0;
    for (const PluginRecord& r : pm.plugins())
      if (r.manifest.id == "org.test.base") {
        CHECK(r.state == PluginState::Invalid);
        CHECK_THAT(r.error, Contains("duplicate id org.test.base: also in"));
        ++duplicates;
      }
    CHECK(duplicates == 2);
    CHECK_THAT(record(pm, "broken").error, Contains("broken/plugin.json: not valid JSON"));
    CHECK(record(pm, "org.test.off-by-default").state == PluginState::Disabled);
    CHECK_THAT(record(pm, "org.test.off-by-default").error, Contains("off by default"));
  }
  fs::remove_all(second);
  {
    ManagerOptions o;
    o.enabled = {"org.test.off-by-default"};
    o.noload = {"org.test.base"};
    PluginManager pm(o);
    pm.discover({dir.search});
    pm.load_and_initialize();
    CHECK(record(pm, "org.test.off-by-default").state == PluginState::Initialized);
    CHECK_THAT(record(pm, "org.test.base").error, Contains("--noload org.test.base"));
  }
  {
    ManagerOptions o;
    o.safe_mode = true;
    PluginManager pm(o);
    pm.discover({dir.search});
    pm.load_and_initialize();
    for (const PluginRecord& r : pm.plugins())
      if (r.manifest.id != "broken") CHECK_THAT(r.error, Contains("safe mode"));
  }
  CHECK(dir.log() == std::vector<std::string>{"org.test.off-by-default initialize"});
}

TEST_CASE("a plugin that crashes while initializing is named by the crash marker on the next start") {
  PluginFolder dir;
  dir.add("init-crashes");
  CHECK(crashes_left_behind("crashprobe").empty());
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    restore_default_crash_signals();  // Catch's (and a sanitizer's) handler would turn the crash into an exit
    ManagerOptions o;
    o.app = "crashprobe";
    PluginManager pm(o);
    pm.discover({dir.search});
    pm.load_and_initialize();  // SIGSEGV inside the fixture's initialize
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGSEGV);
  std::vector<CrashRecord> crashes = crashes_left_behind("crashprobe");
  REQUIRE(crashes.size() == 1);
  CHECK(crashes[0].plugin_id == "org.test.init-crashes");
  CHECK(crashes[0].phase == "initialize");
  CHECK(crashes[0].pid == child);
  forget_crash(crashes[0]);
  CHECK(crashes_left_behind("crashprobe").empty());
  // A marker of a running process is not a crash.
  CrashMarker mine("crashprobe", "org.test.base", "load");
  CHECK(crashes_left_behind("crashprobe").empty());
}

TEST_CASE("settings keep the user's choices and refuse a malformed file") {
  PluginFolder dir;
  PluginSettings s;
  s.disable("org.test.base");
  s.enable("org.test.off-by-default");
  s.save();
  PluginSettings back = PluginSettings::load();
  CHECK(back.disabled == std::set<std::string>{"org.test.base"});
  CHECK(back.enabled == std::set<std::string>{"org.test.off-by-default"});
  CHECK(back.manager_options().disabled.count("org.test.base"));
  std::ofstream(PluginSettings::file()) << R"({"disabled": "org.test.base"})";
  CHECK_THROWS_WITH(PluginSettings::load(), Contains("\"disabled\" must be a list of plugin ids"));
}

TEST_CASE("load_plugin takes a folder, a plugin.json or the library, once") {
  PluginFolder dir;
  dir.add("base");
  const PluginRecord& a = load_plugin(dir.search / "base" / "fixture.so");
  CHECK(a.state == PluginState::Running);
  const PluginRecord& b = load_plugin(dir.search / "base");
  CHECK(&a == &b);
  dir.add("init-fails");
  CHECK_THROWS_WITH(load_plugin(dir.search / "init-fails" / "plugin.json"), Contains("refuses to initialize"));
  CHECK_THROWS_WITH(load_plugin(dir.root / "nowhere"), Contains("cannot be read"));
  CHECK(dir.log() == std::vector<std::string>{"org.test.base initialize", "org.test.base extensions_initialized",
                                              "org.test.base delayed_initialize", "org.test.init-fails initialize"});
}
