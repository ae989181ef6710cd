// The shipped folded-stacks plugin, loaded from build/plugins/folded-stacks: its parser, layout and detect in
// process (many small inputs), and its round trips out of process, the way rtorch runs it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "rt/plugin_host/importer_checks.h"
#include "rt/plugin_host/plugin_manager.h"
#include "rt/plugin_host/trace_plugins.h"

namespace fs = std::filesystem;
using namespace rt::plugin;

namespace {

const fs::path kPluginDir = fs::path(RT_SHIPPED_PLUGIN_DIR) / "folded-stacks";
const fs::path kSample = kPluginDir / "samples" / "pyspy_threads.folded";

Manifest folded() { return read_manifest(kPluginDir / "plugin.json"); }

TraceRunOptions run_options() {
  TraceRunOptions o;
  o.runner = RT_TRACE_RUNNER;
  return o;
}

// The plugin, loaded into this process once.
const RtPluginInfo& plugin() {
  static PluginManager* manager = [] {
    auto* m = new PluginManager();
    m->add(kPluginDir);
    m->load_and_initialize({Kind::Importer, Kind::Exporter});
    return m;
  }();
  const PluginRecord* r = manager->find("org.rustytorch.folded-stacks");
  REQUIRE(r);
  INFO(r->error);
  REQUIRE(r->state == PluginState::Initialized);
  return *r->info;
}

struct Imported {
  RtStatus status;
  std::string message;
  rt::prof::SessionData session;
};

Imported import_text(const std::string& text) {
  TraceSessionBuilder builder;
  RtError error{};
  Imported out;
  out.status = plugin().importer->import_trace(reinterpret_cast<const uint8_t*>(text.data()), text.size(),
                                               builder.sink(), &error);
  out.message = error.message;
  if (out.status == RT_STATUS_OK) out.session = builder.finish();
  return out;
}

std::string export_text(const rt::prof::SessionData& session) {
  const TraceSessionSource source(session);
  std::string out;
  RtError error{};
  const RtStatus s = plugin().exporter->export_trace(
      source.source(),
      [](void* context, const void* data, size_t size) {
        static_cast<std::string*>(context)->append(static_cast<const char*>(data), size);
        return RT_STATUS_OK;
      },
      &out, &error);
  INFO(error.message);
  REQUIRE(s == RT_STATUS_OK);
  return out;
}

int32_t detect(const std::string& head) {
  return plugin().importer->detect(reinterpret_cast<const uint8_t*>(head.data()), head.size());
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> sorted_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

struct Slice {
  std::string name;
  int64_t start, end;
  int32_t depth;
  bool operator==(const Slice&) const = default;
};

std::vector<Slice> slices_of(const rt::prof::SessionData& s, uint64_t thread) {
  std::vector<Slice> out;
  for (const auto& op : s.ops)
    if (op.thread == thread) out.push_back({s.strings.at(op.name), op.start_ns, op.end_ns, op.depth});
  return out;
}

constexpr int64_t kMs = 1'000'000;

}  // namespace

TEST_CASE("folded stacks lay out as a flame chart: sorted, merged, count times the sample period") {
  const Imported r = import_text("a;c 2\na;b 1\na;b 3\nd 1\n");
  INFO(r.message);
  REQUIRE(r.status == RT_STATUS_OK);
  CHECK(r.session.metadata.at("sample_period_ns") == "10000000");
  REQUIRE(r.session.threads.size() == 1);
  CHECK(r.session.strings.at(r.session.threads[0].name).empty());
  CHECK(slices_of(r.session, 1) == std::vector<Slice>{{"a", 0, 60 * kMs, 0},
                                                      {"b", 0, 40 * kMs, 1},  // 1 + 3 merged
                                                      {"c", 40 * kMs, 60 * kMs, 1},
                                                      {"d", 60 * kMs, 70 * kMs, 0}});
  for (const auto& op : r.session.ops) CHECK(op.kind == rt::prof::OpKind::UserRange);
}

TEST_CASE("a stack that is a prefix of another gets self time under its children") {
  const Imported r = import_text("# sample_period_ns=1000\nmain;work 5\nmain 2\nmain;work;inner 3\n");
  REQUIRE(r.status == RT_STATUS_OK);
  CHECK(r.session.metadata.at("sample_period_ns") == "1000");
  CHECK(slices_of(r.session, 1) == std::vector<Slice>{{"main", 0, 10'000, 0},
                                                      {"work", 2000, 10'000, 1},
                                                      {"inner", 7000, 10'000, 2}});
}

TEST_CASE("py-spy's process and thread frames become threads") {
  const Imported r = import_text(read_text(kSample));
  INFO(r.message);
  REQUIRE(r.status == RT_STATUS_OK);
  REQUIRE(r.session.threads.size() == 2);
  CHECK(r.session.strings.at(r.session.threads[0].name) ==
        "process 4242:\"python train.py\";thread (0x7F3A1C2B4740): MainThread");
  CHECK(r.session.strings.at(r.session.threads[1].name) ==
        "process 4242:\"python train.py\";thread (0x7F3A0A3FF640): pin_memory");
  const std::vector<Slice> main = slices_of(r.session, 1);
  REQUIRE(!main.empty());
  CHECK(main[0] == Slice{"<module> (train.py:40)", 0, (37 + 6 + 58 + 11 + 2) * 10 * kMs, 0});
  const std::vector<Slice> pin = slices_of(r.session, 2);
  CHECK(pin[0].name == "_pin_memory_loop (torch/utils/data/_utils/pin_memory.py:49)");
  CHECK(pin[0].end == 120 * 10 * kMs);
}

TEST_CASE("comments, blank lines, tabs and CRLF are accepted") {
  const Imported r = import_text("# written by hand\r\n\r\na;b\t2\r\n   \na;b 1");
  INFO(r.message);
  REQUIRE(r.status == RT_STATUS_OK);
  CHECK(slices_of(r.session, 1) == std::vector<Slice>{{"a", 0, 30 * kMs, 0}, {"b", 0, 30 * kMs, 1}});
}

TEST_CASE("hostile input is refused with RT_STATUS_INVALID_ARGUMENT naming the line") {
  const std::string long_line = std::string((1 << 20) + 1, 'x') + " 1\n";
  std::string deep;
  for (int i = 0; i < 5000; ++i) deep += (i ? ";f" : "f");
  deep += " 1\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a;b 0\n", "line 1: the count is 0"},
      {"ok 1\na;b x\n", "line 2: the count \"x\" is not a whole number"},
      {"a;b -3\n", "line 1: the count \"-3\""},
      {"a;b 1.5\n", "line 1: the count \"1.5\""},
      {"a 99999999999999999999999\n", "line 1: the count \"99999999999999999999999\""},
      {"a;b 1000000000001\n", "line 1: the count"},
      {"a;;b 3\n", "line 1: frame 2 is empty"},
      {";a 3\n", "line 1: frame 1 is empty"},
      {"a; 3\n", "line 1: frame 2 is empty"},
      {"a;b\n", "line 1: no sample count"},
      {std::string("ok 1\n\nbin\0ary 2\n", 15), "line 3: byte 0x00 at column 4 is not text"},
      {"\xff\xfe\x01 1\n", "line 1: byte 0xff at column 1"},
      {"caf\xc3 1\n", "line 1: byte 0xc3 at column 4"},
      {long_line, "line 1: the line is 1048579 bytes long"},
      {deep, "line 1: the stack is deeper than 4096 frames"},
      {"a 1000000000000\n", "line 1: the thread's samples times the sample period"},
      {"a 600000000000\nb 600000000000\n", "line 2: the thread's samples times the sample period"},
      {"# sample_period_ns=0\na 1\n", "line 1: \"# sample_period_ns=\" must be followed by a positive"},
      {"# sample_period_ns=5\na 1\n# sample_period_ns=6\n", "line 3: a second \"# sample_period_ns=\""},
      {"", "the file holds no stack"},
      {"# only a comment\n", "the file holds no stack"},
  };
  for (const auto& [text, message] : cases) {
    INFO(text.substr(0, 80));
    const Imported r = import_text(text);
    CHECK(r.status == RT_STATUS_INVALID_ARGUMENT);
    CHECK_THAT(r.message, Catch::StartsWith(message));
  }
}

TEST_CASE("detect recognises folded stacks by content") {
  CHECK(detect(read_text(kSample)) == 90);
  CHECK(detect("main;f 3\n# comment\n") == 90);
  CHECK(detect("alone 3\nother 4\n") == 50);
  CHECK(detect("main;f 3\nmain;g 4\nmain;h") == 90);  // a last line cut by the window is not held against it
  CHECK(detect("{\"traceEvents\": []}\n") == 0);
  CHECK(detect("[{\"ph\": \"X\"}]") == 0);
  CHECK(detect(std::string("\x1f\x8b\x08\x00\x00", 5)) == 0);
  CHECK(detect("main;f 3\nthis is prose, not a stack\n") == 0);
  CHECK(detect("") == 0);
  CHECK(plugin().importer->detect(nullptr, 0) == 0);
}

TEST_CASE("a recorded session exports with a 1 us unit and thread frames, and imports back") {
  rt::prof::SessionData d;
  d.threads.push_back({.thread = 1, .os_tid = 0, .name = d.strings.intern("main"), .rank = -1});
  d.threads.push_back({.thread = 2, .os_tid = 0, .name = d.strings.intern("autograd;worker"), .rank = -1});
  auto op = [&](uint64_t thread, const char* name, int64_t start, int64_t end) {
    d.ops.push_back({.start_ns = start, .end_ns = end, .thread = thread, .name = d.strings.intern(name)});
  };
  op(1, "step", 0, 10'000);
  op(1, "matmul", 1000, 4000);
  op(1, "matmul", 5000, 8000);  // the same stack again: merged into one line
  op(1, "relu", 8000, 8400);    // 0.4 us: rounds to 0 samples and is left out
  op(2, "AddmmBackward0", 0, 2000);
  const std::string text = export_text(d);
  CHECK(sorted_lines(text) == std::vector<std::string>{"# sample_period_ns=1000", "thread (autograd,worker);AddmmBackward0 2",
                                                       "thread (main);step 4", "thread (main);step;matmul 6"});
  CHECK(text.rfind("# sample_period_ns=1000\n", 0) == 0);
  const Imported back = import_text(text);
  REQUIRE(back.status == RT_STATUS_OK);
  REQUIRE(back.session.threads.size() == 2);
  CHECK(back.session.strings.at(back.session.threads[0].name) == "thread (main)");
  CHECK(slices_of(back.session, 1) == std::vector<Slice>{{"step", 0, 10'000, 0}, {"matmul", 4000, 10'000, 1}});
}

TEST_CASE("names with semicolons or control characters stay one frame") {
  rt::prof::SessionData d;
  d.ops.push_back({.start_ns = 0, .end_ns = 10 * kMs, .thread = 3, .name = d.strings.intern("a;b\nc")});
  d.metadata["sample_period_ns"] = "10000000";
  CHECK(export_text(d) == "a,b c 1\n");
}

TEST_CASE("export refuses a malformed sample period") {
  rt::prof::SessionData d;
  d.ops.push_back({.start_ns = 0, .end_ns = 10, .thread = 1, .name = d.strings.intern("a")});
  d.metadata["sample_period_ns"] = "ten";
  const TraceSessionSource source(d);
  RtError error{};
  const RtStatus s = plugin().exporter->export_trace(
      source.source(), [](void*, const void*, size_t) { return RT_STATUS_OK; }, nullptr, &error);
  CHECK(s == RT_STATUS_INVALID_ARGUMENT);
  CHECK_THAT(std::string(error.message), Catch::Contains("sample_period_ns"));
}

TEST_CASE("out of process: export(import(f)) is f up to line order, and import(export(x)) is x") {
  const TraceImport imported = import_with_plugin(folded(), kSample, run_options());
  CHECK(imported.plugin_id == "org.rustytorch.folded-stacks");
  CHECK(imported.format == "folded-stacks");
  CHECK(imported.session.ops.size() > 10);

  const fs::path dir = fs::temp_directory_path() / ("rt-test-folded-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path out = dir / "again.folded";
  const TraceExport exported = export_with_plugin(folded(), imported.session, out, run_options());
  CHECK(exported.format == "folded-stacks");
  CHECK(exported.slices == imported.session.ops.size());
  CHECK(exported.bytes == fs::file_size(out));
  CHECK(sorted_lines(read_text(out)) == sorted_lines(read_text(kSample)));

  const TraceImport again = import_with_plugin(folded(), out, run_options());
  CHECK(compare_trace_sessions(imported.session, again.session).empty());
  CHECK(again.session.metadata == imported.session.metadata);

  // Duplicate stacks in the input come back merged.
  const fs::path dup = dir / "dup.folded";
  std::ofstream(dup) << "a;b 2\nc 1\na;b 3\n";
  export_with_plugin(folded(), import_with_plugin(folded(), dup, run_options()).session, out, run_options());
  CHECK(sorted_lines(read_text(out)) == std::vector<std::string>{"a;b 5", "c 1"});
  fs::remove_all(dir);
}

TEST_CASE("the shipped plugin passes the importer checks") {
  const std::vector<fs::path> samples = importer_samples(folded());
  REQUIRE(samples == std::vector<fs::path>{kSample});
  ImporterCheckOptions options;
  options.run = run_options();
  options.prefixes = 24;
  options.byte_flips = 24;
  const std::vector<ImporterFinding> findings = check_importer(folded(), kSample, options);
  for (const ImporterFinding& f : findings) INFO(f.check << ": " << f.message);
  CHECK(findings.empty());
}
