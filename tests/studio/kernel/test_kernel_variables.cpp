// Variables snapshots (also while a cell runs) and on-demand tensor statistics.
#include <catch2/catch.hpp>

#include <cstdio>
#include <future>
#include <thread>

#include "kernel_recorder.h"

using namespace rt::studio;
using namespace rt::studio::testing;

namespace {

VariablesSnapshot take_snapshot() {
  std::promise<VariablesSnapshot> done;
  auto result = done.get_future();
  test_kernel().request_variables([&](VariablesSnapshot s) { done.set_value(std::move(s)); });
  REQUIRE(result.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
  return result.get();
}

TensorStats take_stats(const std::string& name) {
  std::promise<TensorStats> done;
  auto result = done.get_future();
  test_kernel().request_tensor_stats(name, [&](TensorStats s) { done.set_value(std::move(s)); });
  REQUIRE(result.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
  return result.get();
}

const VariableInfo* find(const VariablesSnapshot& s, const std::string& name) {
  for (const auto& v : s.variables)
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace

TEST_CASE("a snapshot lists tensors and modules and arrays and scalars and text", "[studio][kernel]") {
  CellRecord r = run_cell(
      "import rustytorch as rt, numpy as np, math\n"
      "from rustytorch import nn\n"
      "w = rt.randn(3, 4, requires_grad=True)\n"
      "ids = rt.arange(10)\n"
      "net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))\n"
      "arr = np.zeros((2, 5), dtype=np.float32)\n"
      "lr = 0.001\n"
      "name = 'digits'\n"
      "items = [1, 2, 3]\n"
      "_private = 1\n"
      "def helper(): pass\n"
      "class Thing: pass\n");
  INFO(r.traceback_text());
  REQUIRE(r.summary->status == ExecutionStatus::ok);
  const VariablesSnapshot s = take_snapshot();
  INFO(s.error);
  REQUIRE(s.error.empty());
  CHECK_FALSE(s.cell_running);
  const VariableInfo* w = find(s, "w");
  REQUIRE(w);
  CHECK(w->kind == VariableKind::tensor);
  CHECK(w->type_name == "Tensor");
  CHECK(w->shape == std::vector<int64_t>{3, 4});
  CHECK(w->dtype == "float32");
  CHECK(w->device == "cpu");
  CHECK(w->bytes == 48);
  CHECK(w->requires_grad);
  const VariableInfo* ids = find(s, "ids");
  REQUIRE(ids);
  CHECK(ids->dtype == "int64");
  CHECK(ids->bytes == 80);
  const VariableInfo* net = find(s, "net");
  REQUIRE(net);
  CHECK(net->kind == VariableKind::module);
  CHECK(net->type_name == "Sequential");
  CHECK(net->parameter_count == 4 * 8 + 8 + 8 * 2 + 2);
  const VariableInfo* arr = find(s, "arr");
  REQUIRE(arr);
  CHECK(arr->kind == VariableKind::array);
  CHECK(arr->shape == std::vector<int64_t>{2, 5});
  CHECK(arr->dtype == "float32");
  CHECK(arr->bytes == 40);
  const VariableInfo* lr = find(s, "lr");
  REQUIRE(lr);
  CHECK(lr->kind == VariableKind::scalar);
  CHECK(lr->value == "0.001");
  CHECK(find(s, "name")->value == "'digits'");
  CHECK(find(s, "name")->kind == VariableKind::text);
  CHECK(find(s, "items")->kind == VariableKind::collection);
  CHECK(find(s, "items")->shape == std::vector<int64_t>{3});
  for (const char* hidden : {"_private", "helper", "Thing", "rt", "np", "math", "nn"}) {
    INFO(hidden);
    CHECK_FALSE(find(s, hidden));
  }
  for (size_t i = 1; i < s.variables.size(); ++i) CHECK(s.variables[i - 1].name < s.variables[i].name);
}

TEST_CASE("snapshots arrive while a cell runs and see its progress", "[studio][kernel]") {
  PythonKernel& k = test_kernel();
  // A Python loop that holds the GIL except at switch intervals, assigning x as it goes.
  const RequestId id = k.execute(
      "import time\n"
      "x = 0\n"
      "print('ready', flush=True)\n"
      "t0 = time.monotonic()\n"
      "while time.monotonic() - t0 < 30:\n"
      "    x += 1\n");
  REQUIRE(test_recorder().wait_stdout(id, "ready"));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto t0 = std::chrono::steady_clock::now();
  const VariablesSnapshot first = take_snapshot();
  const double first_seconds = seconds_since(t0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const VariablesSnapshot second = take_snapshot();
  std::printf("variables snapshot during a running cell: %.4f s\n", first_seconds);
  CHECK(first.cell_running);
  CHECK(first.error.empty());
  const VariableInfo* x1 = find(first, "x");
  const VariableInfo* x2 = find(second, "x");
  REQUIRE(x1);
  REQUIRE(x2);
  CHECK(std::stoll(x1->value) > 0);
  CHECK(std::stoll(x2->value) > std::stoll(x1->value));  // the loop kept running meanwhile
  CHECK(test_recorder().snapshot(id).summary == std::nullopt);
  k.interrupt();
  CHECK(test_recorder().wait_finished(id).summary->status == ExecutionStatus::error);
}

TEST_CASE("a snapshot is answered during a long engine op (GIL released)", "[studio][kernel]") {
  PythonKernel& k = test_kernel();
  REQUIRE(run_cell("import rustytorch as rt\na = rt.randn(500, 160, 160, dtype=rt.float64)").summary);
  const RequestId id = k.execute("print('ready')\nfor _ in range(10000):\n    b = rt.matmul(a, a)\n");
  REQUIRE(test_recorder().wait_stdout(id, "ready"));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const VariablesSnapshot s = take_snapshot();
  CHECK(s.cell_running);
  const VariableInfo* a = find(s, "a");
  REQUIRE(a);
  CHECK(a->shape == std::vector<int64_t>{500, 160, 160});
  CHECK(a->dtype == "float64");
  k.interrupt();
  CHECK(test_recorder().wait_finished(id).summary->status == ExecutionStatus::error);
}

TEST_CASE("tensor stats give min max mean and NaN and Inf counts on demand", "[studio][kernel]") {
  CellRecord r = run_cell(
      "import rustytorch as rt, numpy as np\n"
      "t = rt.tensor([[1.0, -2.0, float('nan')], [4.0, float('inf'), 0.5]], requires_grad=True)\n"
      "i = rt.arange(5)\n"
      "e = rt.zeros(0)\n"
      "arr = np.array([3.0, 5.0])\n"
      "s = 'text'\n");
  INFO(r.traceback_text());
  REQUIRE(r.summary->status == ExecutionStatus::ok);
  const TensorStats t = take_stats("t");
  INFO(t.error);
  REQUIRE(t.error.empty());
  CHECK(t.numel == 6);
  CHECK(t.min == Approx(-2.0));
  CHECK(t.max == Approx(4.0));
  CHECK(t.mean == Approx((1.0 - 2.0 + 4.0 + 0.5) / 4));
  CHECK(t.nan_count == 1);
  CHECK(t.inf_count == 1);
  const TensorStats i = take_stats("i");
  CHECK(i.error.empty());
  CHECK(i.max == Approx(4.0));
  CHECK(i.mean == Approx(2.0));
  CHECK(take_stats("e").numel == 0);
  CHECK(take_stats("arr").mean == Approx(4.0));
  CHECK(take_stats("missing").error.find("no variable named 'missing'") != std::string::npos);
  CHECK(take_stats("s").error.find("not a tensor or array") != std::string::npos);
  // Stats neither record autograd history nor change the tensor.
  CHECK(run_cell("t.grad is None and t.grad_fn is None").result_text() == "True");
}
