// Test-side validator for Chrome Trace Event JSON (header-only; the test CMake globs only test_*.cpp).
//
//   auto problems = rt::test::validate_chrome_trace(text);   // empty when valid
//   REQUIRE(problems.empty());
//   REQUIRE(rt::test::python_json_loads(path));
//
// Checks: the top level is an array or an object with a "traceEvents" array; every event is an object
// with a one-letter known "ph" and the fields and types that phase requires; names are non-empty
// strings; "X" slices nest strictly per (pid, tid) (compared in integer nanoseconds); every flow start
// "s" has exactly one finish "f" with the same (cat, id) and "bp":"e"; metadata events carry their args.
// Written independently of the exporter: it parses with nlohmann::json, not our reader.
// Also: make_trace_session(), a small session with every record kind, and temp-file helpers.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "rt/prof/events.h"

namespace rt::test {

// Concatenates its arguments with operator<< (the tests do not link fmt).
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

template <class Range>
std::string join_lines(const Range& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

inline std::vector<std::string> validate_chrome_trace(const std::string& text) {
  using nlohmann::json;
  std::vector<std::string> problems;
  json doc;
  try {
    doc = json::parse(text);
  } catch (const std::exception& e) {
    return {cat("not valid JSON: ", e.what())};
  }
  const json* events = nullptr;
  if (doc.is_array()) events = &doc;
  else if (doc.is_object() && doc.contains("traceEvents") && doc["traceEvents"].is_array()) events = &doc["traceEvents"];
  else return {"top level is neither an array nor an object with a \"traceEvents\" array"};
  if (doc.is_object() && doc.contains("displayTimeUnit") &&
      !(doc["displayTimeUnit"] == "ns" || doc["displayTimeUnit"] == "ms"))
    problems.push_back("displayTimeUnit must be \"ns\" or \"ms\"");

  struct SliceEnd { int64_t start, end; size_t index; };
  std::map<std::pair<std::string, std::string>, std::vector<SliceEnd>> slices;
  std::map<std::pair<std::string, std::string>, std::pair<int, int>> flows;  // (cat, id) -> (#s, #f)
  auto ns = [](const json& v) { return int64_t(std::llround(v.get<double>() * 1000.0)); };
  auto id_text = [](const json& v) { return v.dump(); };
  const std::string known = "XBEiIsCMftbenOPNDR";
  for (size_t i = 0; i < events->size(); ++i) {
    const json& e = (*events)[i];
    auto bad = [&](const std::string& what) { problems.push_back(cat("event ", i, ": ", what, ": ", e.dump().substr(0, 200))); };
    if (!e.is_object()) { bad("not an object"); continue; }
    if (!e.contains("ph") || !e["ph"].is_string() || e["ph"].get<std::string>().size() != 1 ||
        known.find(e["ph"].get<std::string>()[0]) == std::string::npos) { bad("missing or unknown \"ph\""); continue; }
    const char ph = e["ph"].get<std::string>()[0];
    if (!e.contains("name") || !e["name"].is_string() || (e["name"].get<std::string>().empty() && ph != 'E'))
      bad("\"name\" must be a non-empty string");
    if (!e.contains("pid") || !(e["pid"].is_number_integer() || e["pid"].is_string())) bad("\"pid\" must be an integer or string");
    if (e.contains("tid") && !(e["tid"].is_number_integer() || e["tid"].is_string())) bad("\"tid\" must be an integer or string");
    if (ph != 'M') {
      if (!e.contains("ts") || !e["ts"].is_number()) { bad("\"ts\" must be a number"); continue; }
      if (!std::isfinite(e["ts"].get<double>())) bad("\"ts\" is not finite");
    }
    if (e.contains("args") && !e["args"].is_object()) bad("\"args\" must be an object");
    const std::string pid = e.contains("pid") ? e["pid"].dump() : "", tid = e.contains("tid") ? e["tid"].dump() : "";
    switch (ph) {
      case 'X':
        if (!e.contains("tid")) bad("\"X\" needs \"tid\"");
        if (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0) { bad("\"X\" needs \"dur\" >= 0"); break; }
        slices[{pid, tid}].push_back({ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), i});
        break;
      case 'C':
        if (!e.contains("args") || !e["args"].is_object() || e["args"].empty()) { bad("\"C\" needs non-empty \"args\""); break; }
        for (auto& [k, v] : e["args"].items())
          if (!v.is_number()) bad(cat("counter series \"", k, "\" is not a number"));
        break;
      case 'M':
        if (!e.contains("args") || !e["args"].is_object()) { bad("\"M\" needs \"args\""); break; }
        if ((e["name"] == "process_name" || e["name"] == "thread_name") && !(e["args"].contains("name") && e["args"]["name"].is_string()))
          bad("process_name/thread_name need a string args.name");
        if ((e["name"] == "process_sort_index" || e["name"] == "thread_sort_index") &&
            !(e["args"].contains("sort_index") && e["args"]["sort_index"].is_number_integer()))
          bad("sort index events need an integer args.sort_index");
        break;
      case 'i': case 'I':
        if (e.contains("s") && !(e["s"] == "g" || e["s"] == "p" || e["s"] == "t")) bad("instant scope \"s\" must be g, p or t");
        break;
      case 's': case 'f': case 't': {
        if (!e.contains("id") || !(e["id"].is_number_integer() || e["id"].is_string())) { bad("flow needs \"id\""); break; }
        if (!e.contains("cat") || !e["cat"].is_string()) { bad("flow needs \"cat\""); break; }
        auto& count = flows[{e["cat"].get<std::string>(), id_text(e["id"])}];
        if (ph == 's') ++count.first;
        if (ph == 'f') {
          ++count.second;
          if (!e.contains("bp") || e["bp"] != "e") bad("flow end needs \"bp\":\"e\"");
        }
        break;
      }
      default: break;
    }
  }
  for (auto& [track, list] : slices) {
    std::sort(list.begin(), list.end(), [](const SliceEnd& a, const SliceEnd& b) {
      return a.start != b.start ? a.start < b.start : a.end > b.end;
    });
    std::vector<SliceEnd> open;
    for (const auto& s : list) {
      while (!open.empty() && open.back().end <= s.start) open.pop_back();
      if (!open.empty() && s.end > open.back().end)
        problems.push_back(cat("pid ", track.first, " tid ", track.second, ": event ", s.index, " [", s.start, ", ",
                               s.end, "] ns overlaps its parent event ", open.back().index, " [", open.back().start,
                               ", ", open.back().end, "] ns"));
      open.push_back(s);
    }
  }
  for (auto& [key, count] : flows)
    if (count.first != 1 || count.second != 1)
      problems.push_back(cat("flow cat ", key.first, " id ", key.second, ": ", count.first, " start(s) and ",
                             count.second, " finish(es), expected one each"));
  return problems;
}

// True when /usr/bin/python3's json module loads the file (gzip when it ends in .gz) and it holds no
// NaN/Infinity (which Python accepts by default but JSON forbids).
inline bool python_json_loads(const std::string& path) {
  const std::string cmd = cat(
      "/usr/bin/python3 -c 'import gzip,json,sys; p=sys.argv[1]; ",
      "f=gzip.open(p,\"rt\",encoding=\"utf-8\") if p.endswith(\".gz\") else open(p,encoding=\"utf-8\"); ",
      "json.load(f, parse_constant=lambda c: sys.exit(\"non-JSON constant \"+c))' '", path, "'");
  return std::system(cmd.c_str()) == 0;
}

// ---- fixtures shared by the Chrome-trace tests ----

inline rt::prof::SessionData make_trace_session() {
  using namespace rt::prof;
  SessionData s;
  s.name = "unit session";
  s.clock_offset_ns = 1'700'000'000'000'000'000;
  s.start_ns = 5'000'000;
  s.end_ns = 9'000'000;
  s.complete = true;
  s.dropped_records = 3;
  s.metadata["device"] = "cpu";
  s.metadata["rt_version"] = "0.1.0";
  auto id = [&](const char* text) { return s.strings.intern(text); };
  s.threads.push_back({1, 4242, id("main")});
  s.threads.push_back({2, 4250, id("autograd")});
  const int64_t t0 = 5'000'000;
  s.ops.push_back({.start_ns = t0 + 100, .end_ns = t0 + 900'000, .thread = 1, .name = id("train_step"), .depth = 0, .kind = OpKind::UserRange});
  s.ops.push_back({.start_ns = t0 + 1'000, .end_ns = t0 + 50'001, .thread = 1, .name = id("aten::linear"), .module = id("net.fc1"),
                   .input_shapes = id("[[64, 784], [10, 784], [10]]"), .input_dtypes = id("[float32, float32, float32]"),
                   .sequence_nr = 5, .correlation_id = 101, .depth = 1});
  s.ops.push_back({.start_ns = t0 + 1'001, .end_ns = t0 + 50'000, .thread = 1, .name = id("aten::addmm"), .module = id("net.fc1"),
                   .input_shapes = id("[[10], [64, 784], [784, 10]]"), .input_dtypes = id("[float32, float32, float32]"),
                   .correlation_id = 102, .depth = 2});
  s.ops.push_back({.start_ns = t0 + 600'000, .end_ns = t0 + 700'000, .thread = 2, .name = id("AddmmBackward0"),
                   .sequence_nr = 5, .depth = 0, .kind = OpKind::BackwardNode});
  s.ops.push_back({.start_ns = t0 + 600'010, .end_ns = t0 + 690'000, .thread = 2, .name = id("aten::mm"),
                   .input_shapes = id("[[64, 10], [10, 784]]"), .depth = 1});
  GpuActivityRecord launch{.start_ns = t0 + 2'000, .end_ns = t0 + 7'000, .kind = GpuActivityKind::Runtime, .thread = 1,
                           .name = id("cudaLaunchKernel"), .correlation_id = 7, .external_id = 102};
  GpuActivityRecord kernel{.start_ns = t0 + 20'000, .end_ns = t0 + 45'000, .kind = GpuActivityKind::Kernel, .device = 0,
                           .stream = 7, .name = id("sgemm_128x64"), .correlation_id = 7, .external_id = 102,
                           .grid = {2, 1, 1}, .block = {256, 1, 1}, .registers = 64, .shared_memory = 4096};
  GpuActivityRecord copy{.start_ns = t0 + 46'000, .end_ns = t0 + 47'000, .kind = GpuActivityKind::Memcpy, .device = 0,
                         .stream = 7, .name = id("Memcpy HtoD"), .correlation_id = 8, .external_id = 101, .bytes = 4096,
                         .copy_kind = 1};
  s.gpu = {launch, kernel, copy};
  s.memory.push_back({.time_ns = t0 + 1'500, .thread = 1, .address = 0x7f00, .bytes = 4096, .total_allocated = 4096,
                      .device = -1, .category = MemoryCategoryId::Activation, .op = id("aten::addmm")});
  s.memory.push_back({.time_ns = t0 + 2'500, .thread = 1, .address = 0x9f00, .bytes = 1024, .total_allocated = 1024,
                      .device = 0, .category = MemoryCategoryId::Parameter, .op = 0});
  s.memory.push_back({.time_ns = t0 + 800'000, .thread = 2, .address = 0x7f00, .bytes = -4096, .total_allocated = 0,
                      .device = -1, .category = MemoryCategoryId::Activation, .op = id("aten::addmm")});
  s.counters.push_back({t0 + 890'000, id("loss"), 0.6931});
  s.counters.push_back({t0 + 890'000, id("lr"), 1e-3});
  s.steps.push_back({0, t0 + 50, t0 + 910'000});
  s.steps.push_back({1, t0 + 910'000, t0 + 1'500'000});
  return s;
}

inline std::filesystem::path trace_temp_dir() {
  auto dir = std::filesystem::temp_directory_path() / ("rt_trace_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string read_text_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace rt::test
