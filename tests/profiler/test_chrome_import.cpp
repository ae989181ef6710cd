// Chrome-trace import: round trips, PyTorch/Kineto traces and their imperfections, chunked streaming,
// and every corrupt-input case (errors name the byte offset).
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>

#include "chrome_trace_validator.h"
#include "rt/prof/chrome_trace.h"
#include "rt/prof/nesting.h"

using namespace rt::prof;
using nlohmann::json;

namespace {

const std::string kDataDir = std::string(RT_SOURCE_DIR) + "/tests/profiler/data";

// Ops on each thread nest strictly and depth counts the enclosing ops.
void check_nesting(const SessionData& s) {
  std::map<uint64_t, std::vector<const OpRecord*>> per_thread;
  for (const auto& op : s.ops) per_thread[op.thread].push_back(&op);
  for (auto& [thread, ops] : per_thread) {
    std::vector<const OpRecord*> open;
    for (const OpRecord* op : ops) {  // import sorts by start, parents first
      while (!open.empty() && open.back()->end_ns <= op->start_ns) open.pop_back();
      if (!open.empty()) {
        INFO(s.strings.at(op->name) << " inside " << s.strings.at(open.back()->name));
        CHECK(op->end_ns <= open.back()->end_ns);
      }
      CHECK(op->depth == int32_t(open.size()));
      open.push_back(op);
    }
  }
}

const OpRecord* find_op(const SessionData& s, std::string_view name) {
  for (const auto& op : s.ops)
    if (s.strings.at(op.name) == name) return &op;
  return nullptr;
}

}  // namespace

TEST_CASE("export -> import -> export round-trips every event") {
  const auto session = rt::test::make_trace_session();
  const std::string first = chrome_trace_json(session);
  const auto imported = import_chrome_trace_text(first, "first.json");
  const SessionData& back = imported.session;
  CHECK(back.ops.size() == session.ops.size());
  CHECK(back.gpu.size() == session.gpu.size());
  CHECK(back.memory.size() == session.memory.size());
  CHECK(back.counters.size() == session.counters.size());
  CHECK(back.steps.size() == session.steps.size());
  CHECK(back.threads.size() == session.threads.size());
  CHECK(back.name == session.name);
  CHECK(back.dropped_records == 3);
  CHECK(back.end_ns - back.start_ns == session.end_ns - session.start_ns);
  CHECK(back.start_ns + back.clock_offset_ns == session.start_ns + session.clock_offset_ns);
  CHECK(imported.report.skipped == 0);
  CHECK(imported.report.clamped_slices == 0);
  check_nesting(back);
  const OpRecord* addmm = find_op(back, "aten::addmm");
  REQUIRE(addmm != nullptr);
  CHECK(back.strings.at(addmm->input_shapes) == "[[10], [64, 784], [784, 10]]");
  CHECK(back.strings.at(addmm->input_dtypes) == "[float32, float32, float32]");
  CHECK(back.strings.at(addmm->module) == "net.fc1");
  CHECK(addmm->correlation_id == 102);
  CHECK(addmm->depth == 2);
  CHECK(addmm->end_ns - addmm->start_ns == 48'999);
  CHECK(find_op(back, "AddmmBackward0")->kind == OpKind::BackwardNode);
  CHECK(find_op(back, "train_step")->kind == OpKind::UserRange);

  const std::string second = chrome_trace_json(back);
  CHECK(second == first);

  // The same through a .json.gz file, read in small chunks.
  const auto path = rt::test::trace_temp_dir() / "roundtrip.json.gz";
  export_chrome_trace(session, path);
  std::vector<TraceProgress> progress;
  const auto from_file = import_chrome_trace(path, {.progress = [&](const TraceProgress& p) { progress.push_back(p); },
                                                    .chunk_bytes = 4096});
  CHECK(chrome_trace_json(from_file.session) == first);
  REQUIRE(!progress.empty());
  CHECK(progress.back().phase == "import");
  CHECK(progress.back().done == progress.back().total);
}

TEST_CASE("streaming in small chunks gives the same result, including events larger than a chunk") {
  SessionData s;
  s.threads.push_back({1, 0, s.strings.intern("main")});
  for (int i = 0; i < 2000; ++i) {
    const std::string name = i == 777 ? std::string(20000, 'x') : "op" + std::to_string(i % 17);
    s.ops.push_back({.start_ns = i * 100, .end_ns = i * 100 + 50, .thread = 1, .name = s.strings.intern(name)});
  }
  const std::string text = chrome_trace_json(s);
  REQUIRE(text.size() > 100'000);
  const auto whole = import_chrome_trace_text(text, "t", {.progress = {}, .chunk_bytes = size_t(64) << 20});
  const auto chunked = import_chrome_trace_text(text, "t", {.progress = {}, .chunk_bytes = 4096});
  CHECK(chunked.session.ops.size() == 2000);
  CHECK(chrome_trace_json(chunked.session) == chrome_trace_json(whole.session));
  CHECK(chrome_trace_json(chunked.session) == text);
}

TEST_CASE("a Kineto-style PyTorch trace imports with its imperfections repaired") {
  const auto result = import_chrome_trace(kDataDir + "/kineto_small.json");
  const SessionData& s = result.session;
  CHECK(s.name == "kineto_small");
  CHECK(s.metadata.at("schemaVersion") == "1");
  CHECK(s.metadata.at("pid") == "4242");
  CHECK(s.metadata.at("deviceProperties").find("H100") != std::string::npos);
  CHECK(s.ops.size() == 8);
  CHECK(s.gpu.size() == 3);
  CHECK(s.memory.size() == 1);
  CHECK(s.counters.size() == 1);
  REQUIRE(s.steps.size() == 1);
  CHECK(s.steps[0].step == 3);
  CHECK(s.steps[0].end_ns - s.steps[0].start_ns == 300'000);
  CHECK(result.report.skipped == 2);         // the "P" sample and the profiler's own "Trace" span
  CHECK(result.report.missing_dur == 1);     // aten::empty
  CHECK(result.report.clamped_slices == 2);  // aten::mm outlives aten::addmm, aten::t its backward node
  CHECK(result.report.unclosed_begin == 0);
  check_nesting(s);

  const OpRecord* addmm = find_op(s, "aten::addmm");
  REQUIRE(addmm);
  CHECK(s.strings.at(addmm->input_shapes) == "[[3, 8], [4, 8], [8, 4]]");
  CHECK(s.strings.at(addmm->input_dtypes) == "[float, float, float]");
  CHECK(addmm->sequence_nr == 9);
  CHECK(addmm->correlation_id == 12);
  CHECK(addmm->depth == 2);  // python function > linear > addmm (the step became a StepRecord)
  const OpRecord* mm = find_op(s, "aten::mm");
  REQUIRE(mm);
  CHECK(mm->start_ns == addmm->start_ns + 35'500);  // "ts" given as a string with a fraction
  CHECK(mm->end_ns == addmm->end_ns);
  CHECK(find_op(s, "autograd::engine::evaluate_function: AddmmBackward0")->kind == OpKind::BackwardNode);
  CHECK(find_op(s, "train.py(12): step")->kind == OpKind::UserRange);
  const OpRecord* opt = find_op(s, "optimizer.step");
  REQUIRE(opt);
  CHECK(opt->end_ns - opt->start_ns == 30'000);
  CHECK(s.threads.size() == 2);
  CHECK(s.strings.at(s.threads[0].name) == "thread 4243 (python3)");

  const GpuActivityRecord* kernel = nullptr;
  for (const auto& g : s.gpu)
    if (g.kind == GpuActivityKind::Kernel) kernel = &g;
  REQUIRE(kernel);
  CHECK(kernel->stream == 7);
  CHECK(kernel->correlation_id == 77);
  CHECK(kernel->external_id == 12);
  CHECK(kernel->grid[0] == 2);
  CHECK(kernel->block[0] == 256);
  CHECK(kernel->end_ns - kernel->start_ns == 3'125);
  CHECK(s.memory[0].device == 0);
  CHECK(s.memory[0].bytes == 512);

  // Re-exported, it passes the validator with the ac2g flow rebuilt.
  const std::string text = chrome_trace_json(s);
  const auto problems = rt::test::validate_chrome_trace(text);
  INFO(rt::test::join_lines(problems));
  CHECK(problems.empty());
  CHECK(text.find("\"ph\":\"s\",\"cat\":\"ac2g\"") != std::string::npos);
}

TEST_CASE("B/E pairs, unsorted events and the JSON-array form") {
  const std::string text = R"([
    {"ph":"E","pid":1,"tid":1,"ts":5},
    {"ph":"B","name":"outer","pid":1,"tid":1,"ts":10},
    {"ph":"X","name":"late","pid":1,"tid":1,"ts":30,"dur":1},
    {"ph":"B","name":"inner","pid":1,"tid":1,"ts":12},
    {"ph":"E","pid":1,"tid":1,"ts":20},
    {"ph":"E","pid":1,"tid":1,"ts":40},
    {"ph":"B","name":"never closed","pid":1,"tid":2,"ts":41}
  ])";
  const auto r = import_chrome_trace_text(text);
  CHECK(r.report.unmatched_end == 1);
  CHECK(r.report.unclosed_begin == 1);
  REQUIRE(r.session.ops.size() == 4);
  CHECK(r.session.strings.at(r.session.ops[0].name) == "outer");
  CHECK(r.session.ops[0].end_ns == 40'000);
  CHECK(r.session.strings.at(r.session.ops[1].name) == "inner");
  CHECK(r.session.ops[1].depth == 1);
  CHECK(r.session.ops[3].end_ns == r.session.ops[3].start_ns);  // closed at the last timestamp seen
  check_nesting(r.session);
}

TEST_CASE("a trace written by Debian's python3-torch profiler imports") {
  if (std::system("/usr/bin/python3 -c 'import torch' 2>/dev/null") != 0) {
    WARN("SKIPPED: /usr/bin/python3 has no torch (install python3-torch) - PyTorch trace import not tested");
    return;
  }
  const auto dir = rt::test::trace_temp_dir();
  const auto script = dir / "torch_trace.py";
  const auto out = dir / "torch_trace.json";
  {
    std::ofstream py(script);
    py << "import sys, torch\n"
          "from torch.profiler import profile, ProfilerActivity, record_function\n"
          "torch.manual_seed(0)\n"
          "m = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))\n"
          "x = torch.randn(3, 8)\n"
          "with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as p:\n"
          "    for i in range(2):\n"
          "        with record_function('train_step'):\n"
          "            m(x).sum().backward()\n"
          "        p.step()\n"
          "p.export_chrome_trace(sys.argv[1])\n";
  }
  REQUIRE(std::system(rt::test::cat("/usr/bin/python3 '", script.string(), "' '", out.string(), "'").c_str()) == 0);
  const json reference = json::parse(rt::test::read_text_file(out));
  const json& ref_events = reference.is_array() ? reference : reference["traceEvents"];
  size_t slices = 0, steps = 0;
  std::map<std::string, int> ref_names;
  for (const auto& e : ref_events)
    if (e.value("ph", "") == "X") {
      const std::string name = e["name"];
      if (name.rfind("ProfilerStep#", 0) == 0) ++steps;
      else { ++slices; ++ref_names[name]; }
    }

  const auto r = import_chrome_trace(out);
  const SessionData& s = r.session;
  CHECK(s.ops.size() == slices);
  CHECK(s.steps.size() == steps);
  std::map<std::string, int> names;
  for (const auto& op : s.ops) ++names[s.strings.at(op.name)];
  CHECK(names == ref_names);
  CHECK(names["aten::linear"] == 4);
  CHECK(names["train_step"] == 2);
  CHECK(names["autograd::engine::evaluate_function: AddmmBackward0"] == 4);
  check_nesting(s);
  int backward_nodes = 0;
  for (const auto& op : s.ops) backward_nodes += op.kind == OpKind::BackwardNode;
  CHECK(backward_nodes > 0);
  const OpRecord* linear = find_op(s, "aten::linear");
  REQUIRE(linear);
  CHECK(linear->depth >= 1);  // inside train_step
  // Its integer-microsecond slices overlap after rounding; re-exported, they nest.
  const std::string text = chrome_trace_json(s);
  const auto problems = rt::test::validate_chrome_trace(text);
  INFO(rt::test::join_lines(problems));
  CHECK(problems.empty());
}

TEST_CASE("corrupt or truncated input gives an error with the byte offset") {
  struct Case {
    std::string name, text, message;
    int64_t offset;
  };
  const std::string ev = R"({"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1})";
  const std::vector<Case> cases = {
      {"empty", "", "empty input", 0},
      {"whitespace only", " \n\t ", "empty input", 0},
      {"not JSON", "hello", "not a Chrome trace: expected '[' or '{' but found 'h'", 0},
      {"binary", std::string("\x00\x01\x02", 3), "found byte 0x00", 0},
      {"truncated inside an event", "[" + ev + ",{\"ph\":\"X\",\"na", "the trace event that starts here is not complete",
       int64_t(ev.size()) + 2},
      {"truncated after an event", "[" + ev + ",", "traceEvents array is not closed", int64_t(ev.size()) + 2},
      {"truncated object form", "{\"traceEvents\":[" + ev + "]", "top-level object is not closed", int64_t(ev.size()) + 17},
      {"truncated string", "[{\"ph\":\"X\",\"name\":\"abc", "not complete", 1},
      {"no traceEvents", "{\"foo\": 1}", "no \"traceEvents\" array", 10},
      {"traceEvents not an array", "{\"traceEvents\": 5}", "\"traceEvents\" must be an array, found '5'", 16},
      {"event not an object", "[1, 2]", "a trace event must be a JSON object, found '1'", 1},
      {"missing comma", "[" + ev + " " + ev + "]", "expected ',' or ']' after a trace event, found '{'", int64_t(ev.size()) + 2},
      {"trailing data", "[] x", "unexpected data after the end of the trace", 3},
      {"invalid JSON inside an event", "[{\"ph\":\"X\",,\"ts\":1}]", "invalid JSON at byte", -2},
      {"name of the wrong type", "[{\"ph\":\"X\",\"name\":5,\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1}]", "\"name\" has the wrong type", -2},
      {"ts of the wrong type", "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":true}]", "\"ts\" must be a number of microseconds", -2},
      {"ts not numeric text", "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":\"soon\"}]", "\"ts\" is not a finite number", -2},
      {"pid of the wrong type", "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"pid\":[1]}]", "\"pid\" must be a number or a string", -2},
      {"args not an object", "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"args\":3}]", "\"args\" has the wrong type", -2},
      {"huge ts exponent", "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1e400}]", "\"ts\" is not a finite number", -2},
      {"huge ts digits", "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":123456789012345678901234567890}]", "\"ts\" is not a finite number", -2},
      {"huge sequence number", "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"args\":{\"Sequence number\":1e30}}]",
       "args \"Sequence number\" must be an integer", -2},
      {"missing ph", "[{\"name\":\"a\",\"ts\":1}]", "no \"ph\"", -2},
      {"missing ts", "[{\"ph\":\"X\",\"name\":\"a\",\"dur\":1,\"pid\":1,\"tid\":1}]", "the \"X\" event has no \"ts\"", -2},
      {"invalid UTF-8", "[{\"ph\":\"X\",\"name\":\"\xff\",\"ts\":1}]", "not valid UTF-8", -2},
      {"mismatched brackets", "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1]}]", "invalid JSON at byte", -2},
      {"deep nesting", "[{\"ph\":\"X\",\"args\":{\"x\":" + std::string(5000, '[') + std::string(5000, ']') + "}}]",
       "invalid JSON at byte", -2},
  };
  for (const auto& c : cases) {
    INFO("case: " << c.name);
    try {
      import_chrome_trace_text(c.text, "trace.json");
      FAIL("no error for " << c.name);
    } catch (const TraceError& e) {
      const std::string what = e.what();
      INFO(what);
      CHECK(what.rfind("trace.json: ", 0) == 0);
      CHECK(what.find(c.message) != std::string::npos);
      if (c.offset >= 0) CHECK(e.byte_offset() == c.offset);
      if (c.offset == -2) CHECK(e.byte_offset() >= 1);  // inside the first event
      CHECK(what.find("at byte " + std::to_string(e.byte_offset())) != std::string::npos);
    }
  }
}

TEST_CASE("unreadable, corrupt and truncated files give clear errors") {
  const auto dir = rt::test::trace_temp_dir();
  CHECK_THROWS_WITH(import_chrome_trace(dir / "does-not-exist.json"), Catch::Contains("does-not-exist.json: cannot open"));
  CHECK_THROWS_WITH(import_chrome_trace(dir), Catch::Contains("is a directory"));

  const auto garbage = dir / "garbage.json.gz";
  {
    std::ofstream f(garbage, std::ios::binary);
    f << std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10) << std::string(200, '\x55');
  }
  CHECK_THROWS_WITH(import_chrome_trace(garbage), Catch::Contains("gzip data"));

  const auto session = rt::test::make_trace_session();
  const auto full = dir / "full.json.gz";
  export_chrome_trace(session, full);
  const std::string bytes = rt::test::read_text_file(full);
  const auto cut = dir / "cut.json.gz";
  {
    std::ofstream f(cut, std::ios::binary);
    f << bytes.substr(0, bytes.size() / 2);
  }
  try {
    import_chrome_trace(cut);
    FAIL("no error for a truncated .gz");
  } catch (const TraceError& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find("truncated") != std::string::npos);
    CHECK(e.byte_offset() > 0);
  }
}

TEST_CASE("Slices with a negative duration are repaired to zero length and counted") {
  const std::string text = R"({"traceEvents":[
    {"ph":"X","name":"backwards","pid":1,"tid":1,"ts":100,"dur":-5},
    {"ph":"X","name":"fine","pid":1,"tid":1,"ts":200,"dur":10},
    {"ph":"B","name":"reversed","pid":1,"tid":2,"ts":50},
    {"ph":"E","pid":1,"tid":2,"ts":40}
  ]})";
  const auto r = import_chrome_trace_text(text);
  CHECK(r.report.negative_dur == 2);
  REQUIRE(r.session.ops.size() == 3);
  for (const auto& op : r.session.ops) CHECK(op.end_ns >= op.start_ns);
  const auto backwards = std::find_if(r.session.ops.begin(), r.session.ops.end(),
                                      [&](const OpRecord& op) { return r.session.strings.at(op.name) == "backwards"; });
  REQUIRE(backwards != r.session.ops.end());
  CHECK(backwards->end_ns == backwards->start_ns);
}

TEST_CASE("collectives export on lane threads named \"collectives\" and import back record for record") {
  SessionData s;
  s.name = "ddp rank 0";
  s.start_ns = 1'000'000;
  s.end_ns = 2'000'000;
  s.threads.push_back({1, 4242, s.strings.intern("main")});
  s.ops.push_back({.start_ns = 1'000'100, .end_ns = 1'000'300, .thread = 1, .name = s.strings.intern("all_reduce")});
  auto collective = [&](const char* op, uint64_t seq, int64_t enqueue, int64_t start, int64_t end, int32_t peer) {
    CollectiveRecord c;
    c.enqueue_ns = enqueue;
    c.start_ns = start;
    c.end_ns = end;
    c.thread = 1;
    c.name = s.strings.intern(op);
    c.group = s.strings.intern("default");
    c.shape = s.strings.intern("[256, 256]");
    c.dtype = s.strings.intern("float32");
    c.call_site = s.strings.intern("train.py:91");
    c.seq = seq;
    c.numel = 65536;
    c.bytes = 262144;
    c.peer = peer;
    c.point_to_point = std::string_view(op) == "send";
    s.collectives.push_back(c);
  };
  // Two in flight together (lanes 1 and 2), then one after both: back on the first lane.
  collective("all_reduce", 1, 1'000'100, 1'000'150, 1'400'000, -1);
  collective("broadcast", 2, 1'000'200, 1'000'250, 1'500'000, 0);
  collective("send", 1, 1'600'000, 1'600'000, 1'700'000, 1);

  const std::string text = chrome_trace_json(s);
  const auto problems = rt::test::validate_chrome_trace(text);
  INFO(rt::test::join_lines(problems));
  REQUIRE(problems.empty());
  const json doc = json::parse(text);
  std::map<int64_t, std::string> lane_names;
  std::map<int64_t, int> per_lane;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") lane_names[e["tid"].get<int64_t>()] = e["args"]["name"];
    if (e["cat"] == "collective") {
      ++per_lane[e["tid"].get<int64_t>()];
      if (e["name"] == "broadcast") {
        CHECK(e["args"]["Process Group Name"] == "default");
        CHECK(e["args"]["seq"] == 2);
        CHECK(e["args"]["bytes"] == 262144);
        CHECK(e["args"]["peer"] == 0);
        CHECK(e["args"]["call site"] == "train.py:91");
        CHECK(e["args"]["queued ns"] == 50);
        CHECK(e["args"]["issuing tid"] == 4242);
      }
    }
  }
  REQUIRE(per_lane.size() == 2);
  CHECK(per_lane.begin()->second == 2);  // all_reduce, then send on the same lane
  CHECK(lane_names.at(per_lane.begin()->first) == "collectives");
  CHECK(lane_names.at(std::next(per_lane.begin())->first) == "collectives 2");

  const auto imported = import_chrome_trace_text(text, "collectives.json");
  const SessionData& back = imported.session;
  CHECK(imported.report.skipped == 0);
  CHECK(back.threads.size() == 1);  // the lanes are not threads
  REQUIRE(back.collectives.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    const CollectiveRecord &a = s.collectives[i], &b = back.collectives[i];
    CHECK(b.enqueue_ns - back.start_ns == a.enqueue_ns - s.start_ns);
    CHECK(b.start_ns - b.enqueue_ns == a.start_ns - a.enqueue_ns);
    CHECK(b.end_ns - b.start_ns == a.end_ns - a.start_ns);
    CHECK(back.strings.at(b.name) == s.strings.at(a.name));
    CHECK(back.strings.at(b.group) == "default");
    CHECK(back.strings.at(b.shape) == "[256, 256]");
    CHECK(back.strings.at(b.dtype) == "float32");
    CHECK(back.strings.at(b.call_site) == "train.py:91");
    CHECK(b.seq == a.seq);
    CHECK(b.numel == a.numel);
    CHECK(b.bytes == a.bytes);
    CHECK(b.peer == a.peer);
    CHECK(b.point_to_point == a.point_to_point);
    CHECK(b.thread == back.threads[0].thread);
  }
  CHECK(chrome_trace_json(back) == text);
}

TEST_CASE("pack_collective_lanes: first free lane in start order, touching intervals share a lane") {
  std::vector<CollectiveRecord> c(5);
  const int64_t spans[5][2] = {{0, 10}, {5, 20}, {10, 15}, {12, 12}, {30, 40}};
  for (size_t i = 0; i < 5; ++i) c[i].start_ns = spans[i][0], c[i].end_ns = spans[i][1];
  CHECK(pack_collective_lanes(c) == std::vector<uint32_t>{0, 1, 0, 2, 0});
  std::swap(c[0], c[4]);  // input order does not matter, start order does
  CHECK(pack_collective_lanes(c) == std::vector<uint32_t>{0, 1, 0, 2, 0});
  CHECK(pack_collective_lanes({}).empty());
}
