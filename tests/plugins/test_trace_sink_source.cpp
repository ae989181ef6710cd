// TraceSessionBuilder (the RtTraceSink importers fill) and TraceSessionSource (the RtTraceSource exporters
// read), in process: every refusal, the nesting check, depth, and the walk order.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "rt/plugin_host/trace_plugins.h"

using rt::plugin::TraceLimits;
using rt::plugin::TracePluginError;
using rt::plugin::TraceSessionBuilder;
using rt::plugin::TraceSessionSource;

namespace {

RtTraceSlice slice(uint64_t thread, const char* name, int64_t start, int64_t end, const char* thread_name = "t",
                   const char* category = "user") {
  return {.struct_size = sizeof(RtTraceSlice), .thread = thread, .thread_name = thread_name, .name = name,
          .category = category, .start_ns = start, .end_ns = end, .depth = 0};
}

RtStatus add(TraceSessionBuilder& b, const RtTraceSlice& s) { return b.sink()->add_slice(b.sink()->context, &s); }

struct Seen {
  uint64_t thread;
  std::string name, category, thread_name;
  int64_t start, end;
  int32_t depth;
};

std::vector<Seen> walk(const TraceSessionSource& source) {
  std::vector<Seen> seen;
  const RtTraceSource* s = source.source();
  const RtStatus status = s->for_each_slice(
      s->context,
      [](void* context, const RtTraceSlice* x) {
        static_cast<std::vector<Seen>*>(context)->push_back(
            {x->thread, x->name, x->category, x->thread_name, x->start_ns, x->end_ns, x->depth});
        return RT_STATUS_OK;
      },
      &seen);
  REQUIRE(status == RT_STATUS_OK);
  return seen;
}

}  // namespace

TEST_CASE("the sink builds a session with depth computed, ops sorted and threads named") {
  TraceSessionBuilder b;
  REQUIRE(b.sink()->set_metadata(b.sink()->context, "sample_period_ns", "10") == RT_STATUS_OK);
  // Children before parents and threads interleaved: the builder orders them.
  REQUIRE(add(b, slice(2, "leaf", 20, 30, "worker")) == RT_STATUS_OK);
  REQUIRE(add(b, slice(1, "child", 10, 20, "main", "op")) == RT_STATUS_OK);
  REQUIRE(add(b, slice(1, "root", 0, 40, "main", "backward")) == RT_STATUS_OK);
  REQUIRE(add(b, slice(2, "top", 20, 50, "")) == RT_STATUS_OK);
  REQUIRE(add(b, slice(1, "zero", 40, 40, "main")) == RT_STATUS_OK);  // at the parent's end: a sibling
  const rt::prof::SessionData s = b.finish();
  REQUIRE(s.ops.size() == 5);
  REQUIRE(s.metadata.at("sample_period_ns") == "10");
  REQUIRE(s.threads.size() == 2);
  CHECK(s.strings.at(s.threads[0].name) == "worker");
  CHECK(s.strings.at(s.threads[1].name) == "main");
  CHECK(s.start_ns == 0);
  CHECK(s.end_ns == 50);
  CHECK(s.complete);
  std::vector<std::tuple<std::string, int32_t>> order;
  for (const auto& op : s.ops) order.emplace_back(s.strings.at(op.name), op.depth);
  CHECK(order == std::vector<std::tuple<std::string, int32_t>>{
                     {"root", 0}, {"child", 1}, {"top", 0}, {"leaf", 1}, {"zero", 0}});
  CHECK(s.ops[0].kind == rt::prof::OpKind::BackwardNode);
  CHECK(s.ops[1].kind == rt::prof::OpKind::Op);
  CHECK(s.ops[2].kind == rt::prof::OpKind::UserRange);
}

TEST_CASE("equal intervals nest in the order the importer gave them") {
  TraceSessionBuilder b;
  REQUIRE(add(b, slice(1, "outer", 0, 10)) == RT_STATUS_OK);
  REQUIRE(add(b, slice(1, "inner", 0, 10)) == RT_STATUS_OK);
  const auto s = b.finish();
  CHECK(s.strings.at(s.ops[0].name) == "outer");
  CHECK(s.ops[0].depth == 0);
  CHECK(s.ops[1].depth == 1);
}

TEST_CASE("the sink refuses bad slices with a message, and everything after the first refusal") {
  auto refused = [](RtTraceSlice s, const std::string& words, TraceLimits limits = {}) {
    TraceSessionBuilder b(limits);
    REQUIRE(add(b, s) == RT_STATUS_INVALID_ARGUMENT);
    INFO(b.error());
    CHECK(b.error().find(words) != std::string::npos);
    CHECK(add(b, slice(1, "fine", 0, 1)) == RT_STATUS_INVALID_ARGUMENT);
    CHECK_THROWS_AS(b.finish(), TracePluginError);
  };
  refused(slice(1, "backwards", 10, 5), "ends before it starts");
  refused(slice(1, nullptr, 0, 5), "name is NULL");
  refused(slice(1, "", 0, 5), "name is empty");
  refused(slice(1, "bad \xff", 0, 5), "not UTF-8");
  refused(slice(1, "x", 0, 5, "thread \xc0\x80"), "not UTF-8");
  const std::string long_name(100, 'a');
  refused(slice(1, long_name.c_str(), 0, 5), "longer than 64 bytes",
          TraceLimits{.max_slices = 10, .max_bytes = 1 << 20, .max_string_bytes = 64, .max_metadata = 4});
  RtTraceSlice small = slice(1, "x", 0, 5);
  small.struct_size = 8;
  refused(small, "struct_size is 8");

  TraceSessionBuilder b;
  REQUIRE(b.sink()->add_slice(b.sink()->context, nullptr) == RT_STATUS_INVALID_ARGUMENT);
  CHECK(b.error().find("NULL slice") != std::string::npos);
}

TEST_CASE("a thread has one name") {
  TraceSessionBuilder b;
  REQUIRE(add(b, slice(7, "a", 0, 1, "one")) == RT_STATUS_OK);
  REQUIRE(add(b, slice(7, "b", 1, 2, "")) == RT_STATUS_OK);
  REQUIRE(add(b, slice(7, "c", 2, 3, "two")) == RT_STATUS_INVALID_ARGUMENT);
  CHECK(b.error().find("thread 7 is named both \"one\" and \"two\"") != std::string::npos);
}

TEST_CASE("the sink caps slices, bytes and metadata") {
  TraceSessionBuilder few({.max_slices = 2, .max_bytes = 1 << 20, .max_string_bytes = 1024, .max_metadata = 1});
  REQUIRE(add(few, slice(1, "a", 0, 1)) == RT_STATUS_OK);
  REQUIRE(add(few, slice(1, "b", 1, 2)) == RT_STATUS_OK);
  REQUIRE(add(few, slice(1, "c", 2, 3)) == RT_STATUS_INVALID_ARGUMENT);
  CHECK(few.error().find("more than 2 slices") != std::string::npos);

  TraceSessionBuilder small({.max_slices = 100, .max_bytes = 200, .max_string_bytes = 1024, .max_metadata = 8});
  RtStatus s = RT_STATUS_OK;
  for (int i = 0; i < 10 && s == RT_STATUS_OK; ++i) s = add(small, slice(1, "name", i, i + 1));
  REQUIRE(s == RT_STATUS_INVALID_ARGUMENT);
  CHECK(small.error().find("larger than the 200 bytes") != std::string::npos);

  TraceSessionBuilder meta({.max_slices = 100, .max_bytes = 1 << 20, .max_string_bytes = 1024, .max_metadata = 1});
  const RtTraceSink* sink = meta.sink();
  REQUIRE(sink->set_metadata(sink->context, "a", "1") == RT_STATUS_OK);
  REQUIRE(sink->set_metadata(sink->context, "a", "2") == RT_STATUS_OK);  // replacing is not adding
  REQUIRE(sink->set_metadata(sink->context, "b", "1") == RT_STATUS_INVALID_ARGUMENT);
  CHECK(meta.error().find("more than 1 metadata entries") != std::string::npos);
}

TEST_CASE("slices that overlap without nesting are refused at finish, naming both") {
  TraceSessionBuilder b;
  REQUIRE(add(b, slice(3, "first", 0, 10)) == RT_STATUS_OK);
  REQUIRE(add(b, slice(3, "second", 5, 15)) == RT_STATUS_OK);
  try {
    b.finish();
    FAIL("finish accepted overlapping slices");
  } catch (const TracePluginError& e) {
    const std::string what = e.what();
    CHECK(what.find("slices on thread 3 overlap without nesting") != std::string::npos);
    CHECK(what.find("\"second\" [5, 15]") != std::string::npos);
    CHECK(what.find("\"first\" [0, 10]") != std::string::npos);
    CHECK(e.failure() == rt::plugin::TraceFailure::InvalidTrace);
  }
}

TEST_CASE("the source walks thread by thread, parents first, with depth, clamped ends and categories") {
  rt::prof::SessionData d;
  d.name = "recorded";
  d.metadata["device"] = "cpu";
  d.threads.push_back({.thread = 5, .os_tid = 0, .name = d.strings.intern("main"), .rank = -1});
  auto op = [&](uint64_t thread, const char* name, int64_t start, int64_t end, rt::prof::OpKind kind) {
    d.ops.push_back({.start_ns = start, .end_ns = end, .thread = thread, .name = d.strings.intern(name), .kind = kind});
  };
  op(9, "other", 1, 2, rt::prof::OpKind::Op);  // a thread without a ThreadRecord comes after the recorded ones
  op(5, "child", 2, 12, rt::prof::OpKind::Op);  // ends after its parent: clamped to 10
  op(5, "parent", 0, 10, rt::prof::OpKind::UserRange);
  op(5, "node", 20, 30, rt::prof::OpKind::BackwardNode);

  const TraceSessionSource source(d);
  REQUIRE(source.slice_count() == 4);
  const std::vector<Seen> seen = walk(source);
  REQUIRE(seen.size() == 4);
  CHECK(seen[0].name == "parent");
  CHECK(seen[0].category == "user");
  CHECK(seen[0].thread_name == "main");
  CHECK(seen[0].depth == 0);
  CHECK(seen[1].name == "child");
  CHECK(seen[1].depth == 1);
  CHECK(seen[1].end == 10);
  CHECK(seen[1].category == "op");
  CHECK(seen[2].name == "node");
  CHECK(seen[2].category == "backward");
  CHECK(seen[3].name == "other");
  CHECK(seen[3].thread == 9);
  CHECK(seen[3].thread_name.empty());

  const RtTraceSource* s = source.source();
  CHECK(std::string(s->metadata(s->context, "device")) == "cpu");
  CHECK(std::string(s->metadata(s->context, "name")) == "recorded");
  CHECK(s->metadata(s->context, "absent") == nullptr);
}

TEST_CASE("a visitor's failure stops the walk and is returned") {
  rt::prof::SessionData d;
  for (int i = 0; i < 5; ++i)
    d.ops.push_back({.start_ns = i, .end_ns = i + 1, .thread = 1, .name = d.strings.intern("x")});
  const TraceSessionSource source(d);
  int calls = 0;
  const RtStatus s = source.for_each(
      [](void* context, const RtTraceSlice*) {
        return ++*static_cast<int*>(context) == 2 ? RT_STATUS_UNSUPPORTED : RT_STATUS_OK;
      },
      &calls);
  CHECK(s == RT_STATUS_UNSUPPORTED);
  CHECK(calls == 2);
}

TEST_CASE("a session survives source -> sink unchanged") {
  TraceSessionBuilder first;
  REQUIRE(add(first, slice(1, "a", 0, 100, "main", "op")) == RT_STATUS_OK);
  REQUIRE(add(first, slice(1, "b", 10, 50, "main", "backward")) == RT_STATUS_OK);
  REQUIRE(add(first, slice(1, "c", 20, 30, "main", "user")) == RT_STATUS_OK);
  REQUIRE(add(first, slice(4, "d", 5, 6, "side")) == RT_STATUS_OK);
  const rt::prof::SessionData original = first.finish();

  TraceSessionBuilder second;
  const TraceSessionSource source(original);
  REQUIRE(source.for_each(
              [](void* context, const RtTraceSlice* s) { return static_cast<TraceSessionBuilder*>(context)->add_slice(s); },
              &second) == RT_STATUS_OK);
  const rt::prof::SessionData copy = second.finish();
  REQUIRE(copy.ops.size() == original.ops.size());
  for (size_t i = 0; i < copy.ops.size(); ++i) {
    CHECK(copy.strings.at(copy.ops[i].name) == original.strings.at(original.ops[i].name));
    CHECK(copy.ops[i].start_ns == original.ops[i].start_ns);
    CHECK(copy.ops[i].end_ns == original.ops[i].end_ns);
    CHECK(copy.ops[i].depth == original.ops[i].depth);
    CHECK(copy.ops[i].kind == original.ops[i].kind);
    CHECK(copy.ops[i].thread == original.ops[i].thread);
  }
}
