// Chrome-trace export: structure (validator + Python's json), tracks, flows, clamping, escaping, gzip.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "chrome_trace_validator.h"
#include "rt/prof/chrome_trace.h"

using namespace rt::prof;
using nlohmann::json;

namespace {

std::vector<json> events_named(const json& doc, const std::string& name) {
  std::vector<json> out;
  for (const auto& e : doc["traceEvents"])
    if (e.value("name", "") == name) out.push_back(e);
  return out;
}

// Decompresses with the system's gzip, independently of the exporter's zlib use.
std::string gunzip_file(const std::filesystem::path& p) {
  const auto out = p.string() + ".plain";
  REQUIRE(std::system(rt::test::cat("gzip -dc '", p.string(), "' > '", out, "'").c_str()) == 0);
  return rt::test::read_text_file(out);
}

}  // namespace

TEST_CASE("export of a hand-built session passes the validator and Python's json") {
  const auto session = rt::test::make_trace_session();
  const auto path = rt::test::trace_temp_dir() / "unit.json";
  std::vector<TraceProgress> progress;
  const auto stats = export_chrome_trace(session, path, {.progress = [&](const TraceProgress& p) { progress.push_back(p); }});
  const std::string text = rt::test::read_text_file(path);
  const auto problems = rt::test::validate_chrome_trace(text);
  INFO(rt::test::join_lines(problems));
  REQUIRE(problems.empty());
  REQUIRE(rt::test::python_json_loads(path.string()));
  CHECK(stats.bytes == text.size());
  CHECK(stats.clamped_ops == 0);
  REQUIRE(!progress.empty());
  CHECK(progress.back().done == stats.events);
  CHECK(progress.back().phase == "export");
  CHECK(text == chrome_trace_json(session));

  const json doc = json::parse(text);
  CHECK(doc["displayTimeUnit"] == "ns");
  CHECK(doc["baseTimeNanoseconds"] == session.start_ns + session.clock_offset_ns);
  CHECK(doc["metadata"]["device"] == "cpu");
  CHECK(doc["rtSession"]["dropped_records"] == 3);

  // Tracks: CPU process with named threads, a GPU 0 process with a "stream 7" thread.
  bool gpu_process = false, stream_thread = false, main_thread = false;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "M") continue;
    if (e["name"] == "process_name" && e["args"]["name"] == "GPU 0" && e["pid"] == 0) gpu_process = true;
    if (e["name"] == "thread_name" && e["args"]["name"] == "stream 7" && e["pid"] == 0 && e["tid"] == 7) stream_thread = true;
    if (e["name"] == "thread_name" && e["args"]["name"] == "main" && e["tid"] == 4242) main_thread = true;
  }
  CHECK(gpu_process);
  CHECK(stream_thread);
  CHECK(main_thread);

  // Ops: ns precision (3 decimals), PyTorch's arg names.
  const auto addmm = events_named(doc, "aten::addmm");
  REQUIRE(addmm.size() == 1);
  CHECK(addmm[0]["ph"] == "X");
  CHECK(addmm[0]["cat"] == "cpu_op");
  CHECK(addmm[0]["ts"].get<double>() == Approx(1.001));
  CHECK(addmm[0]["dur"].get<double>() == Approx(48.999));
  CHECK(addmm[0]["args"]["Input Dims"] == json::parse("[[10], [64, 784], [784, 10]]"));
  CHECK(addmm[0]["args"]["Input type"] == json::parse(R"(["float32", "float32", "float32"])"));
  CHECK(addmm[0]["args"]["module"] == "net.fc1");
  CHECK(addmm[0]["args"]["External id"] == 102);
  CHECK(events_named(doc, "aten::linear")[0]["args"]["Sequence number"] == 5);
  CHECK(events_named(doc, "AddmmBackward0")[0]["tid"] == 4250);
  CHECK(text.find("\"ts\":1.001,") != std::string::npos);

  // GPU: kernel on the stream track, runtime call on the CPU thread, flows linking them.
  const auto kernel = events_named(doc, "sgemm_128x64");
  REQUIRE(kernel.size() == 1);
  CHECK(kernel[0]["pid"] == 0);
  CHECK(kernel[0]["tid"] == 7);
  CHECK(kernel[0]["cat"] == "kernel");
  CHECK(kernel[0]["args"]["grid"] == json::parse("[2, 1, 1]"));
  CHECK(events_named(doc, "cudaLaunchKernel")[0]["tid"] == 4242);
  int ac2g = 0, fwdbwd = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "s" && e["ph"] != "f") continue;
    if (e["cat"] == "ac2g") {
      ++ac2g;
      if (e["id"] == 7 && e["ph"] == "s") CHECK(e["ts"].get<double>() == Approx(2.0));
      if (e["id"] == 7 && e["ph"] == "f") CHECK(e["ts"].get<double>() == Approx(20.0));
    }
    if (e["cat"] == "fwdbwd") {
      ++fwdbwd;
      CHECK(e["id"] == 5);
    }
  }
  CHECK(ac2g == 4);  // kernel via its runtime launch, memcpy via the op with External id 101
  CHECK(fwdbwd == 2);

  // Memory: PyTorch-style instants plus per-category counters; counters; steps.
  const auto memory = events_named(doc, "[memory]");
  REQUIRE(memory.size() == 3);
  CHECK(memory[0]["args"]["Category"] == "activation");
  CHECK(memory[1]["args"]["Device Type"] == 1);
  const auto cpu_memory = events_named(doc, "Memory (CPU)");
  REQUIRE(cpu_memory.size() == 2);
  CHECK(cpu_memory[0]["args"]["activation"] == 4096);
  CHECK(cpu_memory[1]["args"]["activation"] == 0);
  CHECK(cpu_memory[1]["args"]["total"] == 0);
  CHECK(events_named(doc, "Memory (cuda:0)")[0]["args"]["parameter"] == 1024);
  CHECK(events_named(doc, "loss")[0]["args"]["loss"].get<double>() == Approx(0.6931));
  CHECK(events_named(doc, "ProfilerStep#1").size() == 1);
}

TEST_CASE("gzip export reads back to the same JSON") {
  const auto session = rt::test::make_trace_session();
  const auto path = rt::test::trace_temp_dir() / "unit.json.gz";
  export_chrome_trace(session, path, {.gzip_level = 1, .progress = {}});
  const std::string raw = rt::test::read_text_file(path);
  REQUIRE(raw.size() > 2);
  CHECK(uint8_t(raw[0]) == 0x1f);
  CHECK(uint8_t(raw[1]) == 0x8b);
  CHECK(gunzip_file(path) == chrome_trace_json(session));
  CHECK(rt::test::python_json_loads(path.string()));
  CHECK_THROWS_WITH(export_chrome_trace(session, path, {.gzip_level = 12, .progress = {}}), Catch::Contains("gzip level 12"));
}

TEST_CASE("children that outlive their parent are clamped so slices nest strictly") {
  SessionData s;
  const auto name = s.strings.intern("op");
  s.start_ns = 0;
  // Child ends 1 ns after its parent (clock read order), a grandchild overlaps both, and a
  // sibling starts before its predecessor ends; plus siblings 1 ns apart that rounding to us would merge.
  s.ops.push_back({.start_ns = 1000, .end_ns = 2000, .thread = 1, .name = name, .depth = 0});
  s.ops.push_back({.start_ns = 1500, .end_ns = 2001, .thread = 1, .name = name, .depth = 1});
  s.ops.push_back({.start_ns = 1900, .end_ns = 2600, .thread = 1, .name = name, .depth = 2});
  s.ops.push_back({.start_ns = 2500, .end_ns = 3000, .thread = 1, .name = name, .depth = 0});
  s.ops.push_back({.start_ns = 3000, .end_ns = 3001, .thread = 1, .name = name, .depth = 0});
  s.ops.push_back({.start_ns = 3001, .end_ns = 3002, .thread = 1, .name = name, .depth = 0});
  s.ops.push_back({.start_ns = 3500, .end_ns = 4000, .thread = 1, .name = name, .depth = 0});
  s.ops.push_back({.start_ns = 3800, .end_ns = 4200, .thread = 1, .name = name, .depth = 0});
  ChromeExportStats stats;
  const std::string text = chrome_trace_json(s, &stats);
  const auto problems = rt::test::validate_chrome_trace(text);
  INFO(rt::test::join_lines(problems));
  CHECK(problems.empty());
  CHECK(stats.clamped_ops == 3);
  CHECK(text.find("\"ts\":1.500,\"dur\":0.500") != std::string::npos);  // 1500..2001 -> 1500..2000
  CHECK(text.find("\"ts\":1.900,\"dur\":0.100") != std::string::npos);  // 1900..2600 -> 1900..2000
  CHECK(text.find("\"ts\":3.001,\"dur\":0.001") != std::string::npos);
  CHECK(text.find("\"ts\":3.800,\"dur\":0.200") != std::string::npos);  // 3800..4200 -> 3800..4000

  // The validator itself catches an unclamped overlap.
  const std::string bad = R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2},{"ph":"X","name":"b","pid":1,"tid":1,"ts":2,"dur":2}])";
  CHECK(rt::test::validate_chrome_trace(bad).size() == 1);
}

TEST_CASE("every string is escaped and invalid UTF-8 is replaced") {
  SessionData s;
  const std::string nasty = std::string("q\"uote back\\slash nl\n tab\t ctl\x01\x1f del\x7f ") + "bad\xff\xfe" +
                            " trunc\xe2\x82" + " ok:\xc2\xb5s \xe6\x97\xa5 \xf0\x9f\x98\x80" + std::string(1, '\0') + "end";
  const auto name = s.strings.intern(nasty);
  s.threads.push_back({1, 0, s.strings.intern("thread \"x\"")});
  s.ops.push_back({.start_ns = 0, .end_ns = 10, .thread = 1, .name = name, .module = s.strings.intern("m\\\"")});
  s.counters.push_back({5, s.strings.intern("nan loss"), std::numeric_limits<double>::quiet_NaN()});
  s.counters.push_back({6, s.strings.intern("inf loss"), std::numeric_limits<double>::infinity()});
  s.metadata["key\n"] = "value\x02";
  const auto path = rt::test::trace_temp_dir() / "escape.json";
  export_chrome_trace(s, path);
  const std::string text = rt::test::read_text_file(path);
  CHECK(rt::test::validate_chrome_trace(text).empty());
  REQUIRE(rt::test::python_json_loads(path.string()));
  CHECK(text.find("NaN") == std::string::npos);
  CHECK(text.find("Infinity") == std::string::npos);
  const json doc = json::parse(text);
  const std::string expected = std::string("q\"uote back\\slash nl\n tab\t ctl\x01\x1f del\x7f ") +
                               "bad\xEF\xBF\xBD\xEF\xBF\xBD trunc\xEF\xBF\xBD\xEF\xBF\xBD ok:\xc2\xb5s \xe6\x97\xa5 \xf0\x9f\x98\x80" +
                               std::string(1, '\0') + "end";
  bool found = false;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "X") { CHECK(e["name"].get<std::string>() == expected); found = true; }
  CHECK(found);
  CHECK(text.find("ctl\\u0001\\u001f") != std::string::npos);
  CHECK(doc["metadata"]["key\n"] == "value\x02");

  // Non-finite counters become instants that name the value, and come back on import.
  const auto back = import_chrome_trace(path).session;
  REQUIRE(back.counters.size() == 2);
  CHECK(std::isnan(back.counters[0].value));
  CHECK(std::isinf(back.counters[1].value));
}

TEST_CASE("an empty session exports a valid trace, unwritable paths give a clear error") {
  SessionData s;
  const std::string text = chrome_trace_json(s);
  CHECK(rt::test::validate_chrome_trace(text).empty());
  CHECK(json::parse(text)["traceEvents"].size() == 2);  // process name and sort index
  try {
    export_chrome_trace(s, "/nonexistent-dir/x/trace.json");
    FAIL("expected TraceError");
  } catch (const TraceError& e) {
    CHECK(std::string(e.what()).find("/nonexistent-dir/x/trace.json: cannot open for writing") != std::string::npos);
    CHECK(e.byte_offset() == -1);
  }
}
