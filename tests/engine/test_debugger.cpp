// BackwardDebugger: pause order, bit-identical gradients, breakpoints, step over, stop, and
// controls from a second thread.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#include "rt/debug/backward_debugger.h"
#include "rt/rt.h"
#include "testing.h"

using namespace rt;
using debug::Action;
using debug::BackwardDebugger;
using debug::NodeTarget;
using debug::PausedState;
using debug::PausePhase;
using debug::PauseReason;

namespace {

constexpr auto kWait = std::chrono::seconds(60);

// Records what the engine runs, for comparison with what the debugger shows.
struct OrderRecorder : autograd::AutogradObserver {
  std::vector<uint64_t> ids;
  std::vector<std::string> names;
  void on_backward_start(size_t) override {
    ids.clear();
    names.clear();
  }
  void before_node(const autograd::NodeEvent& e) override {
    ids.push_back(reinterpret_cast<uint64_t>(e.node));
    names.push_back(e.node->name());
  }
};

struct Attach {
  autograd::AutogradObserver* o;
  explicit Attach(autograd::AutogradObserver* obs) : o(obs) { autograd::add_autograd_observer(o); }
  ~Attach() { autograd::remove_autograd_observer(o); }
};

struct Mlp : nn::Module {
  std::shared_ptr<nn::Linear> fc1, fc2;
  std::shared_ptr<nn::ReLU> act;
  Mlp() : Module("Mlp") {
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(6, 12));
    act = register_module("act", std::make_shared<nn::ReLU>());
    fc2 = register_module("fc2", std::make_shared<nn::Linear>(12, 3));
  }
  Tensor forward(const Tensor& x) override { return (*fc2)((*act)((*fc1)(x))); }
};

struct ConvNet : nn::Module {
  std::shared_ptr<nn::Conv2d> conv;
  std::shared_ptr<nn::Linear> head;
  ConvNet() : Module("ConvNet") {
    conv = register_module("conv", std::make_shared<nn::Conv2d>(2, 4, 3));
    head = register_module("head", std::make_shared<nn::Linear>(4 * 4 * 4, 3));
  }
  Tensor forward(const Tensor& x) override { return (*head)(rt::flatten(rt::relu((*conv)(x)), 1)); }
};

struct AttentionNet : nn::Module {
  std::shared_ptr<nn::MultiheadAttention> attn;
  std::shared_ptr<nn::Linear> head;
  AttentionNet() : Module("AttentionNet") {
    attn = register_module("attn", std::make_shared<nn::MultiheadAttention>(8, 2));
    head = register_module("head", std::make_shared<nn::Linear>(8, 3));
  }
  Tensor forward(const Tensor& x) override { return (*head)((*attn)(x, x, x).first); }
};

// Every parameter's gradient, as raw bytes.
std::vector<std::vector<char>> grad_bytes(const nn::Module& m) {
  std::vector<std::vector<char>> out;
  for (const auto& [name, p] : m.named_parameters()) {
    Tensor g = p.grad().contiguous();
    const char* b = static_cast<const char*>(g.raw_data());
    out.emplace_back(b, b + g.nbytes());
  }
  return out;
}

Tensor mlp_loss(Mlp& net) {
  Tensor x = testing::random({5, 6}, kFloat32, -1, 1, 7);
  return rt::mse_loss(net(x), testing::random({5, 3}, kFloat32, -1, 1, 8));
}

// Runs `loss.backward()` on a second thread while this thread steps through every node.
std::vector<PausedState> step_through_on_thread(BackwardDebugger& dbg, const Tensor& loss, bool retain = false) {
  dbg.set_pause_at_start(true);
  std::exception_ptr error;
  std::thread bw([&] {
    try {
      loss.backward({}, retain);
    } catch (...) {
      error = std::current_exception();
    }
  });
  std::vector<PausedState> pauses;
  while (auto s = dbg.wait_for_pause(kWait)) {
    pauses.push_back(*s);
    REQUIRE(dbg.paused_state().has_value());
    REQUIRE(dbg.step());
  }
  bw.join();
  dbg.set_pause_at_start(false);
  if (error) std::rethrow_exception(error);
  return pauses;
}

// The identity whose backward turns element 0 of the gradient into NaN.
Tensor plant_nan(const Tensor& x) {
  Tensor out = rt::clone(x.detach());
  autograd::record("PlantNaNBackward", {x}, {out}, [](const TensorList& g) {
    Tensor r = rt::clone(g[0]).contiguous();
    r.data_ptr<float>()[0] = NAN;
    return TensorList{r};
  });
  return out;
}

std::vector<PausedState> collect_continue(BackwardDebugger& dbg, const Tensor& loss, bool retain = false) {
  std::vector<PausedState> pauses;
  dbg.on_break([&](const PausedState& s) {
    pauses.push_back(s);
    return Action::resume();
  });
  loss.backward({}, retain);
  dbg.on_break(nullptr);
  return pauses;
}

}  // namespace

TEST_CASE("the debugger pauses at every node in the engine's backward order") {
  manual_seed(0);
  Mlp net;
  BackwardDebugger dbg;
  dbg.attach();
  Tensor loss = mlp_loss(net);
  OrderRecorder rec;
  Attach a(&rec);
  std::vector<uint64_t> paused_ids;
  std::vector<size_t> indices;
  dbg.set_pause_at_start(true);
  dbg.on_break([&](const PausedState& s) {
    CHECK(s.phase == PausePhase::BeforeNode);
    CHECK(s.order.back() == s.node.id);
    CHECK(s.order.size() == s.index + 1);
    paused_ids.push_back(s.node.id);
    indices.push_back(s.index);
    return Action::step();
  });
  loss.backward();
  REQUIRE(rec.ids.size() >= 8);  // MseLoss, Addmm(fc2), Relu, Addmm(fc1), 4 AccumulateGrad
  CHECK(paused_ids == rec.ids);
  CHECK(dbg.execution_order() == rec.ids);
  for (size_t i = 0; i < indices.size(); ++i) CHECK(indices[i] == i);
  CHECK_FALSE(dbg.running());
  CHECK(dbg.backward_count() == 1);
}

TEST_CASE("stepping through every node from another thread gives bit-identical gradients") {
  auto check_model = [](nn::Module& net, const std::function<Tensor()>& make_loss) {
    make_loss().backward();
    const auto reference = grad_bytes(net);
    net.zero_grad();

    BackwardDebugger dbg;
    dbg.attach();
    Tensor loss = make_loss();
    OrderRecorder rec;
    Attach a(&rec);
    const auto pauses = step_through_on_thread(dbg, loss);
    std::vector<uint64_t> paused_ids;
    for (const auto& p : pauses) paused_ids.push_back(p.node.id);
    CHECK(paused_ids == rec.ids);
    CHECK(pauses.front().reason == PauseReason::Start);
    CHECK(pauses.back().reason == PauseReason::Step);
    CHECK(grad_bytes(net) == reference);
  };
  SECTION("MLP") {
    manual_seed(1);
    Mlp net;
    check_model(net, [&] { return mlp_loss(net); });
  }
  SECTION("conv") {
    manual_seed(2);
    ConvNet net;
    Tensor x = testing::random({2, 2, 6, 6}, kFloat32, -1, 1, 3);
    check_model(net, [&] { return rt::cross_entropy(net(x), tensor({int64_t(0), int64_t(2)})); });
  }
  SECTION("attention") {
    manual_seed(3);
    AttentionNet net;
    Tensor x = testing::random({4, 2, 8}, kFloat32, -1, 1, 4);
    check_model(net, [&] { return net(x).pow(2).mean(); });
  }
}

TEST_CASE("a NaN planted in a node's backward stops the debugger at exactly that node") {
  manual_seed(4);
  Mlp net;
  BackwardDebugger dbg;
  dbg.break_on_non_finite();
  dbg.attach();
  Tensor x = testing::random({5, 6}, kFloat32, -1, 1, 7);
  Tensor h = plant_nan(rt::relu((*net.fc1)(x)));
  const uint64_t planted = reinterpret_cast<uint64_t>(h.grad_fn().get());
  Tensor loss = (*net.fc2)(h).sum();
  const auto pauses = collect_continue(dbg, loss);
  REQUIRE(pauses.size() == 1);  // nodes that pass the NaN along do not fire again
  const PausedState& s = pauses[0];
  CHECK(s.node.id == planted);
  CHECK(s.node.name == "PlantNaNBackward");
  CHECK(s.phase == PausePhase::AfterNode);
  CHECK(s.reason == PauseReason::Breakpoint);
  REQUIRE(s.grad_inputs.size() == 1);
  CHECK(s.grad_inputs[0].nan_count == 1);
  CHECK(s.grad_outputs[0].nan_count == 0);
  CHECK_THAT(s.description, Catch::Contains("NaN/Inf") && Catch::Contains("grad_inputs[0] has 1 NaN"));
  CHECK(dbg.breakpoints()[0].hits == 1);
}

TEST_CASE("a log of a negative value stops the NaN breakpoint at the node that multiplies by it") {
  BackwardDebugger dbg;
  dbg.break_on_non_finite();
  dbg.attach();
  Tensor w = tensor({1.0f, 2.0f, 3.0f}).requires_grad_();
  Tensor y = rt::log(tensor({1.0f, -1.0f, 2.0f}));  // NaN in the middle; needs no grad
  Tensor prod = w * y;                                 // MulBackward0: grad for w is g * y
  Tensor loss = prod.sum();
  const auto pauses = collect_continue(dbg, loss);
  REQUIRE(pauses.size() == 1);
  CHECK(pauses[0].node.id == reinterpret_cast<uint64_t>(prod.grad_fn().get()));
  CHECK(pauses[0].phase == PausePhase::AfterNode);
  CHECK(pauses[0].grad_inputs[0].nan_count == 1);
  CHECK(std::isnan(w.grad().to_vector<float>()[1]));
}

TEST_CASE("op, module and grad-norm breakpoints stop where they should") {
  manual_seed(5);
  Mlp net;
  BackwardDebugger dbg;
  dbg.attach();
  Tensor loss = mlp_loss(net);
  const auto& fc2_node = loss.grad_fn()->next_edges()[0].function;  // MseLoss <- Addmm(fc2)
  REQUIRE(fc2_node->name() == "AddmmBackward0");

  SECTION("op by forward op and by node name") {
    const int id = dbg.break_on_op("linear");
    auto pauses = collect_continue(dbg, loss, true);
    REQUIRE(pauses.size() == 2);
    for (const auto& p : pauses) {
      CHECK(p.node.forward_op == "linear");
      CHECK(p.breakpoints == std::vector<int>{id});
    }
    CHECK(pauses[0].node.module == "fc2");
    CHECK(pauses[1].node.module == "fc1");
    dbg.remove_breakpoint(id);
    dbg.break_on_op("ReluBackward0");
    pauses = collect_continue(dbg, loss, true);
    REQUIRE(pauses.size() == 1);
    CHECK(pauses[0].node.module == "act");
  }
  SECTION("module prefix, including the module's parameters") {
    dbg.break_on_module("fc2");
    const auto pauses = collect_continue(dbg, loss, true);
    std::vector<uint64_t> expected{reinterpret_cast<uint64_t>(fc2_node.get())};
    for (size_t i = 1; i < 3; ++i) expected.push_back(reinterpret_cast<uint64_t>(fc2_node->next_edges()[i].function.get()));
    std::vector<uint64_t> got;
    for (const auto& p : pauses) {
      got.push_back(p.node.id);
      CHECK(p.node.module == "fc2");
    }
    std::sort(expected.begin(), expected.end());
    std::sort(got.begin(), got.end());
    CHECK(got == expected);
  }
  SECTION("a module prefix matches whole path components only") {
    dbg.break_on_module("fc");
    CHECK(collect_continue(dbg, loss, true).empty());
    CHECK(debug::module_within("encoder.layer0.fc1", "encoder"));
    CHECK_FALSE(debug::module_within("encoder2.fc1", "encoder"));
  }
  SECTION("disabled breakpoints do not fire; unknown ids are errors") {
    const int id = dbg.break_on_op("linear");
    dbg.set_breakpoint_enabled(id, false);
    CHECK(collect_continue(dbg, loss, true).empty());
    CHECK_THROWS_AS(dbg.set_breakpoint_enabled(99, true), IndexError);
    CHECK_THROWS_AS(dbg.remove_breakpoint(99), IndexError);
    CHECK_THROWS_AS(dbg.break_on_op(""), ValueError);
    CHECK_THROWS_AS(dbg.break_on_grad_norm(NAN), ValueError);
  }
  SECTION("grad norm fires after the node that produced the large gradient") {
    Tensor w = tensor({1.0f, 1.0f, 1.0f, 1.0f}).requires_grad_();
    Tensor big = w * 1000.0;  // its backward produces a gradient of norm 2000
    Tensor l = big.sum();     // SumBackward0 produces ones: norm 2
    dbg.break_on_grad_norm(100);
    const auto pauses = collect_continue(dbg, l);
    REQUIRE(pauses.size() == 1);
    CHECK(pauses[0].node.id == reinterpret_cast<uint64_t>(big.grad_fn().get()));
    CHECK(pauses[0].phase == PausePhase::AfterNode);
    CHECK(pauses[0].grad_inputs[0].norm == Approx(2000.0));
    CHECK_THAT(pauses[0].description, Catch::Contains("grad norm > 100"));
  }
}

TEST_CASE("step over module runs the rest of the module without pausing") {
  manual_seed(6);
  Mlp net;
  BackwardDebugger dbg;
  dbg.attach();
  Tensor loss = mlp_loss(net);
  // Every node with the module the debugger gives it, in order.
  std::vector<debug::NodeInfo> all;
  dbg.set_pause_at_start(true);
  dbg.on_break([&](const PausedState& s) {
    all.push_back(s.node);
    return Action::step();
  });
  loss.backward({}, true);
  dbg.set_pause_at_start(false);

  dbg.break_on_op("linear");  // fc2's node first (breakpoints inside the module would fire during the step over)
  std::vector<debug::NodeInfo> pauses;
  dbg.on_break([&](const PausedState& s) {
    pauses.push_back(s.node);
    return pauses.size() == 1 ? Action::step_over_module() : Action::stop();
  });
  CHECK_THROWS_AS(loss.backward({}, true), debug::BackwardStopped);
  REQUIRE(pauses.size() == 2);
  CHECK(pauses[0].module == "fc2");
  auto first = std::find_if(all.begin(), all.end(), [&](const auto& n) { return n.id == pauses[0].id; });
  auto next = std::find_if(first + 1, all.end(), [](const auto& n) { return !debug::module_within(n.module, "fc2"); });
  REQUIRE(next != all.end());
  CHECK(next - first > 1);  // fc2's parameters were skipped
  for (auto it = first + 1; it != next; ++it) CHECK(it->module == "fc2");
  CHECK(pauses[1].id == next->id);
  CHECK(pauses[1].module == "act");
}

TEST_CASE("stop aborts the backward cleanly and a later backward works") {
  manual_seed(7);
  Mlp net;
  mlp_loss(net).backward();
  const auto reference = grad_bytes(net);
  net.zero_grad();

  BackwardDebugger dbg;
  dbg.attach();
  Tensor loss = mlp_loss(net);
  dbg.set_pause_at_start(true);
  std::string message;
  std::thread bw([&] {
    try {
      loss.backward();
    } catch (const debug::BackwardStopped& e) {
      message = e.what();
    }
  });
  auto s = dbg.wait_for_pause(kWait);
  REQUIRE(s);
  CHECK(dbg.step());
  s = dbg.wait_for_pause(kWait);
  REQUIRE(s);
  CHECK(s->index == 1);
  CHECK(dbg.stop());
  CHECK_FALSE(dbg.wait_for_pause(kWait));  // the backward ended
  bw.join();
  CHECK_THAT(message, Catch::StartsWith("backward stopped by the debugger") && Catch::Contains(s->node.name));
  CHECK_FALSE(dbg.running());
  CHECK_FALSE(dbg.stop());  // nothing to stop now

  // The graph was not freed: the same backward runs again, under the still-attached debugger.
  dbg.set_pause_at_start(false);
  net.zero_grad();
  loss.backward();
  CHECK(grad_bytes(net) == reference);
  CHECK_THROWS_WITH(loss.backward(), Catch::Contains("second time"));  // and now it was freed

  // A stop from the break handler works the same way.
  net.zero_grad();
  Tensor loss2 = mlp_loss(net);
  dbg.break_on_op("linear");
  dbg.on_break([](const PausedState&) { return Action::stop(); });
  CHECK_THROWS_AS(loss2.backward(), debug::BackwardStopped);
  dbg.detach();
  net.zero_grad();
  loss2.backward();
  CHECK(grad_bytes(net) == reference);
}

TEST_CASE("controls from a second thread: run to a node, continue, pause requests") {
  manual_seed(8);
  Mlp net;
  BackwardDebugger dbg;
  dbg.attach();
  Tensor loss = mlp_loss(net);
  OrderRecorder rec;
  Attach a(&rec);
  loss.backward({}, true);
  const std::vector<uint64_t> order = rec.ids;
  REQUIRE(order.size() > 5);

  dbg.set_pause_at_start(true);
  std::thread bw([&] { loss.backward({}, true); });
  auto s = dbg.wait_for_pause(kWait);
  REQUIRE(s);
  CHECK(s->reason == PauseReason::Start);
  CHECK(s->index == 0);
  CHECK(dbg.run_to(NodeTarget::id(order[4])));
  s = dbg.wait_for_pause(kWait);
  REQUIRE(s);
  CHECK(s->reason == PauseReason::RunToNode);
  CHECK(s->node.id == order[4]);
  CHECK(s->order == std::vector<uint64_t>(order.begin(), order.begin() + 5));
  CHECK(dbg.pause());  // already paused: nothing changes
  CHECK(dbg.resume());
  CHECK_FALSE(dbg.wait_for_pause(kWait));
  bw.join();
  CHECK(dbg.execution_order() == order);

  // run_to by sequence number; a target that never runs lets the backward finish.
  std::thread bw2([&] { loss.backward({}, true); });
  s = dbg.wait_for_pause(kWait);
  REQUIRE(s);
  const uint64_t seq = loss.grad_fn()->next_edges()[0].function->sequence_nr();
  CHECK(dbg.run_to(NodeTarget::sequence_nr(seq)));
  s = dbg.wait_for_pause(kWait);
  REQUIRE(s);
  CHECK(s->node.sequence_nr == seq);
  CHECK(dbg.run_to(NodeTarget::sequence_nr(1u << 30)));
  CHECK_FALSE(dbg.wait_for_pause(kWait));
  bw2.join();

  // detach from another thread while the backward is paused: it runs to its end.
  std::thread bw3([&] { loss.backward(); });
  REQUIRE(dbg.wait_for_pause(kWait));
  dbg.detach();
  bw3.join();
  CHECK_FALSE(dbg.running());
}

TEST_CASE("an exception from the break handler reaches the backward's caller") {
  BackwardDebugger dbg;
  dbg.attach();
  dbg.set_pause_at_start(true);
  dbg.on_break([](const PausedState&) -> Action { throw ValueError("handler failed"); });
  Tensor w = tensor({1.0f, 2.0f}).requires_grad_();
  Tensor l = (w * 2).sum();
  CHECK_THROWS_WITH(l.backward(), "handler failed");
  CHECK_FALSE(dbg.running());
  dbg.on_break(nullptr);
  dbg.set_pause_at_start(false);
  l.backward();
  CHECK(w.grad().to_vector<float>() == std::vector<float>{2.0f, 2.0f});
}

TEST_CASE("a cancel request (Ctrl+C, the studio's interrupt) ends a paused backward") {
  BackwardDebugger dbg;
  dbg.attach();
  dbg.set_pause_at_start(true);
  Tensor w = tensor({1.0f, 2.0f}).requires_grad_();
  Tensor l = (w * 3).sum();
  const rt::CancelToken backward_thread = rt::CancelToken::current();
  std::thread canceller([&] {
    if (dbg.wait_for_pause(kWait)) backward_thread.request();
  });
  CHECK_THROWS_AS(l.backward(), InterruptedError);
  canceller.join();
  CHECK_FALSE(rt::cancel_requested());
  CHECK_FALSE(dbg.running());
  dbg.set_pause_at_start(false);
  l.backward();
  CHECK(w.grad().to_vector<float>() == std::vector<float>{3.0f, 3.0f});
}

TEST_CASE("observers hear the end of a backward that a node's exception aborts") {
  struct Ends : autograd::AutogradObserver {
    int starts = 0, ends = 0;
    void on_backward_start(size_t) override { ++starts; }
    void on_backward_end() override { ++ends; }
  } ends;
  Attach a(&ends);
  Tensor w = tensor({1.0f}).requires_grad_();
  Tensor out = rt::clone(w.detach());
  autograd::record("ThrowingBackward", {w}, {out}, [](const TensorList&) -> TensorList {
    throw ValueError("backward failed");
  });
  CHECK_THROWS_WITH(out.sum().backward(), "backward failed");
  CHECK(ends.starts == 1);
  CHECK(ends.ends == 1);
}

TEST_CASE("read_paused_gradient copies a slice of the paused node's gradients, both sides") {
  Tensor x = testing::random({3, 5}, kFloat32, -1, 1, 11).requires_grad_(true);
  BackwardDebugger dbg;
  dbg.attach();
  Tensor loss = rt::mul(x, rt::full({}, 3.0)).sum();
  dbg.set_pause_at_start(true);
  dbg.break_on_grad_norm(0);  // fires after every node that produced a non-zero gradient
  CHECK_FALSE(dbg.read_paused_gradient(debug::GradientSide::Outputs, 0, 0, 10));  // not paused
  std::thread bw([&] { loss.backward(); });

  auto s = dbg.wait_for_pause(kWait);  // before SumBackward0: it received d loss = 1
  REQUIRE(s);
  REQUIRE(s->phase == PausePhase::BeforeNode);
  auto v = dbg.read_paused_gradient(debug::GradientSide::Outputs, 0, 0, 10);
  REQUIRE(v);
  CHECK(v->shape.empty());
  CHECK(v->values == std::vector<double>{1.0});
  CHECK_FALSE(v->truncated());
  CHECK_THROWS_WITH(dbg.read_paused_gradient(debug::GradientSide::Inputs, 0, 0, 10),
                    Catch::Contains("only after the node ran"));
  CHECK_THROWS_AS(dbg.read_paused_gradient(debug::GradientSide::Outputs, 1, 0, 10), IndexError);
  CHECK_THROWS_WITH(dbg.read_paused_gradient(debug::GradientSide::Outputs, 0, 0, BackwardDebugger::kMaxGradientRead + 1),
                    Catch::Contains("read in pieces"));

  CHECK(dbg.step());
  s = dbg.wait_for_pause(kWait);  // after SumBackward0 (the norm breakpoint): it produced ones like x
  REQUIRE(s);
  REQUIRE(s->phase == PausePhase::AfterNode);
  v = dbg.read_paused_gradient(debug::GradientSide::Inputs, 0, 4, 8);
  REQUIRE(v);
  CHECK(v->shape == std::vector<int64_t>{3, 5});
  CHECK(v->numel == 15);
  CHECK(v->offset == 4);
  CHECK(v->values == std::vector<double>(8, 1.0));
  CHECK(v->truncated());
  v = dbg.read_paused_gradient(debug::GradientSide::Inputs, 0, 12, 8);  // the last 3
  REQUIRE(v);
  CHECK(v->values.size() == 3);
  CHECK_FALSE(v->truncated());

  dbg.clear_breakpoints();
  dbg.set_pause_at_start(false);
  CHECK(dbg.resume());
  bw.join();
  CHECK_FALSE(dbg.read_paused_gradient(debug::GradientSide::Inputs, 0, 0, 1));  // the backward ended
  CHECK(x.grad().eq(rt::full({3, 5}, 3.0)).all().item<bool>());
  dbg.detach();
}
