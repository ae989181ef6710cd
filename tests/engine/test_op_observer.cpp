// The op observation point (rt/op_observer.h): op observers, module scopes, memory events and categories,
// cancellation; and thread names for tools (rt/thread_name.h).
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "rt/thread_name.h"
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

TEST_CASE("CPU kernels run no engine ops: a reduction or product of strided views reports only itself") {
  const Tensor x = ones({4, 5, 6});
  const Tensor xt = x.transpose(0, 2);                  // reduced dim not last: the kernel's rows need a copy
  const Tensor a = ones({3, 5, 16}).slice(2, 0, 16, 2);  // stride 2: BLAS cannot read it in place
  const Tensor b = ones({7, 8}).t();                     // column-contiguous: read in place
  const Tensor h = ones({5, 8}, kFloat16);               // float16 runs through float32 buffers
  const Tensor ht = h.t();
  OpLog sum_log, matmul_log;
  add_op_observer(&sum_log);
  const Tensor s = rt::sum(xt, {1});
  remove_op_observer(&sum_log);
  add_op_observer(&matmul_log);
  const Tensor m = rt::matmul(a, b);
  const Tensor mh = rt::matmul(h, ht);
  remove_op_observer(&matmul_log);
  // Before the kernels took plain views, sum recorded permute and contiguous inside it.
  REQUIRE(sum_log.ends.size() == 1);
  CHECK(std::string(sum_log.ends[0].name) == "sum");
  for (const OpEvent& e : matmul_log.ends) {
    INFO(e.name << " at depth " << e.depth);
    for (const char* copy : {"contiguous", "clone", "to", "copy_", "permute"}) CHECK(std::string(e.name) != copy);
  }
  CHECK(s.sizes() == Shape{6, 4});
  CHECK(s.to_vector<float>() == std::vector<float>(24, 5.0f));
  CHECK(m.to_vector<float>() == std::vector<float>(3 * 5 * 7, 8.0f));
  CHECK(mh.to_vector<float>() == std::vector<float>(25, 8.0f));
}

TEST_CASE("rt::set_this_thread_name names the calling thread only, and the OS sees its first 15 bytes") {
  std::string seen, os_name, main_name;
  std::thread t([&] {
    rt::set_this_thread_name("gloo 'default' worker 1");
    seen = rt::this_thread_name();
    std::ifstream comm("/proc/thread-self/comm");
    std::getline(comm, os_name);
  });
  t.join();
  CHECK(seen == "gloo 'default' worker 1");
  CHECK(os_name == "gloo 'default' ");
  CHECK(rt::this_thread_name().empty());  // this thread was never named
}
