// The op observation point (rt/op_observer.h): op observers, module scopes, memory events and categories, cancellation.
#include <catch2/catch.hpp>
#include <map>

#include "testing.h"

using namespace rt;

namespace {
struct OpLog : OpObserver {
  std::vector<OpEvent> starts, ends;
  void on_op_start(const OpEvent& e) override { starts.push_back(e); }
  void on_op_end(const OpEvent& e) override { ends.push_back(e); }
};
struct MemLog : MemoryObserver {
  std::vector<MemoryEvent> events;
  void on_memory_event(const MemoryEvent& e) override { events.push_back(e); }
};
}  // namespace

TEST_CASE("op observers get name, inputs, module, depth and timing in order") {
  auto a = ones({2, 3}), b = ones({3});
  OpLog log;
  add_op_observer(&log);
  {
    ModuleScope m("encoder");
    ModuleScope l("layer0");
    auto c = (a + b).reshape({6});
    (void)c;
  }
  remove_op_observer(&log);
  (void)(a + b);  // not observed any more
  REQUIRE(log.ends.size() >= 3);
  CHECK(std::string(log.starts[0].name) == "add");
  const OpEvent& add = log.ends[0];
  CHECK(std::string(add.name) == "add");
  REQUIRE(add.inputs.size() == 2);
  CHECK(add.inputs[0].shape == Shape{2, 3});
  CHECK(add.inputs[1].shape == Shape{3});
  CHECK(add.inputs[0].dtype == kFloat32);
  CHECK(add.module == "encoder.layer0");
  CHECK(add.end_ns >= add.start_ns);
  CHECK(add.depth == 0);
  // reshape calls view: the inner op ends first and is one level deeper.
  CHECK(std::string(log.ends[1].name) == "view");
  CHECK(log.ends[1].depth == 1);
  CHECK(std::string(log.ends[2].name) == "reshape");
  CHECK(log.ends[2].depth == 0);
  CHECK(log.ends.size() == log.starts.size());
}

TEST_CASE("op events carry the sequence number of the backward node they create") {
  auto x = ones({2}).requires_grad_();
  OpLog log;
  add_op_observer(&log);
  auto y = x * 2;
  remove_op_observer(&log);
  REQUIRE(!log.ends.empty());
  CHECK(uint64_t(log.ends.back().sequence_nr) == y.grad_fn()->sequence_nr());
}

TEST_CASE("memory events carry bytes, category and owning op") {
  MemLog mem;
  add_memory_observer(&mem);
  {
    MemoryCategoryGuard g(MemoryCategory::Parameter);
    auto p = empty({4, 4});
  }
  {
    NoGradGuard ng;
    auto t = ones({8}) + ones({8});
  }
  auto w = ones({3}).requires_grad_();
  (w * 2).sum().backward();
  remove_memory_observer(&mem);
  REQUIRE(mem.events.size() >= 4);
  CHECK(mem.events[0].is_alloc);
  CHECK(mem.events[0].bytes == 64);
  CHECK(mem.events[0].category == MemoryCategory::Parameter);
  CHECK_FALSE(mem.events[1].is_alloc);
  CHECK(mem.events[1].category == MemoryCategory::Parameter);
  std::map<std::string, int> by_op;
  bool saw_gradient = false, saw_temporary_add = false;
  for (const auto& e : mem.events) {
    if (e.is_alloc && e.op) by_op[e.op]++;
    if (e.is_alloc && e.category == MemoryCategory::Gradient && e.bytes == 12) saw_gradient = true;
    if (e.is_alloc && e.category == MemoryCategory::Temporary && e.op && std::string(e.op) == "add") saw_temporary_add = true;
  }
  CHECK(saw_gradient);
  CHECK(saw_temporary_add);
  CHECK(by_op["mul"] >= 1);
  CHECK(std::string(category_name(MemoryCategory::OptimizerState)) == "optimizer_state");
}

TEST_CASE("allocator statistics track current and peak bytes") {
  const size_t base = cpu_memory_allocated();
  reset_cpu_peak_memory();
  {
    auto big = empty({1024});
    CHECK(cpu_memory_allocated() == base + 4096);
  }
  CHECK(cpu_memory_allocated() == base);
  CHECK(cpu_max_memory_allocated() >= base + 4096);
}

TEST_CASE("request_cancel stops the next op with InterruptedError and clears itself") {
  auto a = ones({4});
  request_cancel();
  CHECK_THROWS_AS(a + a, InterruptedError);
  CHECK_FALSE(cancel_requested());
  CHECK_NOTHROW(a + a);
}

TEST_CASE("shape errors carry the module scope") {
  ModuleScope m("net");
  ModuleScope l("fc1");
  try {
    (void)(ones({2, 3}) * ones({4}));
    FAIL("expected ShapeError");
  } catch (const ShapeError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("mul") && Catch::Contains("in module 'net.fc1'"));
  }
}
