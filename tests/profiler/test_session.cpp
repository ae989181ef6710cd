// Recording sessions: ops, nesting, shapes, backward nodes, user ranges, steps, counters,
// memory categories, threads, snapshots, and what a stopped session costs.
#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <map>
#include <set>
#include <thread>

#include "rt/prof/counters.h"
#include "rt/prof/record_function.h"
#include "rt/prof/session.h"
#include "rt/rt.h"
#include "testing.h"

using namespace rt;
using rt::prof::OpKind;
using rt::prof::OpRecord;
using rt::prof::Session;
using rt::prof::SessionData;

namespace {

prof::SessionOptions full_options() {
  prof::SessionOptions o;
  o.record_shapes = o.profile_memory = o.with_stack = true;
  o.cupti = prof::CuptiMode::Off;
  return o;
}

prof::SessionOptions cupti_off() {
  prof::SessionOptions o;
  o.cupti = prof::CuptiMode::Off;
  return o;
}

std::string text(const SessionData& d, prof::StringId id) { return d.strings.at(id); }

std::vector<const OpRecord*> ops_named(const SessionData& d, const std::string& name) {
  std::vector<const OpRecord*> out;
  for (const auto& op : d.ops)
    if (text(d, op.name) == name) out.push_back(&op);
  return out;
}

// Every thread's ops nest strictly and their depth equals the number of enclosing ops.
void require_nested(const SessionData& d) {
  std::map<uint64_t, std::vector<const OpRecord*>> open;  // per thread
  for (const auto& op : d.ops) {
    INFO("op " << text(d, op.name) << " [" << op.start_ns << ", " << op.end_ns << "] depth " << op.depth);
    REQUIRE(op.start_ns <= op.end_ns);
    auto& stack = open[op.thread];
    // Equal timestamps can make a sibling look contained; its depth tells them apart.
    while (!stack.empty() && (stack.back()->end_ns < op.end_ns || stack.back()->depth >= op.depth)) stack.pop_back();
    if (!stack.empty()) REQUIRE(stack.back()->start_ns <= op.start_ns);
    REQUIRE(op.depth == int32_t(stack.size()));
    stack.push_back(&op);
  }
}

SessionData record_training_step(bool with_momentum) {
  Session s(full_options());
  s.start();
  {
    auto net = std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(4, 8), std::make_shared<nn::ReLU>(),
                                                std::make_shared<nn::Linear>(8, 3));
    optim::SGD opt(net->parameters(), {.lr = 0.1, .momentum = with_momentum ? 0.9 : 0.0});
    auto x = testing::random({2, 4}, kFloat32, -1, 1, 1);
    auto target = testing::random_int({2}, 0, 3, 2);
    {
      prof::RecordFunction r("train_step");
      ModuleScope root("net");
      opt.zero_grad();
      auto loss = cross_entropy((*net)(x), target);
      loss.backward();
      opt.step();
      s.counter("loss", loss.item<double>());
    }
    s.step();
  }
  s.stop();
  return s.data();
}

}  // namespace

TEST_CASE("a training step records every op with nesting, shapes, module and thread") {
  const SessionData d = record_training_step(false);
  REQUIRE(d.complete);
  REQUIRE(d.end_ns >= d.start_ns);
  REQUIRE(d.dropped_records == 0);
  require_nested(d);

  const auto linears = ops_named(d, "linear");
  REQUIRE(linears.size() == 2);
  CHECK(text(d, linears[0]->input_shapes) == "[[2, 4], [8, 4], [8]]");
  CHECK(text(d, linears[0]->input_dtypes) == "[float32, float32, float32]");
  CHECK(text(d, linears[0]->module) == "net.0");
  CHECK(text(d, linears[1]->input_shapes) == "[[2, 8], [3, 8], [3]]");
  CHECK(text(d, linears[1]->module) == "net.2");
  const auto relus = ops_named(d, "relu");
  REQUIRE(relus.size() == 1);
  CHECK(text(d, relus[0]->module) == "net.1");
  // Sequential runs Linear + ReLU as rt::linear_pointwise: the relu op adds the Linear's bias, its second input.
  CHECK(text(d, relus[0]->input_shapes) == "[[2, 8], [8]]");
  REQUIRE(ops_named(d, "cross_entropy").size() == 1);

  // The user range encloses the forward ops: they are its descendants.
  const auto ranges = ops_named(d, "train_step");
  REQUIRE(ranges.size() == 1);
  CHECK(ranges[0]->kind == OpKind::UserRange);
  CHECK(ranges[0]->depth == 0);
  CHECK(ranges[0]->sequence_nr == -1);
  for (const auto* op : linears) {
    CHECK(op->start_ns >= ranges[0]->start_ns);
    CHECK(op->end_ns <= ranges[0]->end_ns);
    CHECK(op->depth >= 1);
  }

  // All ops ran on this thread, which has a ThreadRecord named "main".
  REQUIRE(d.threads.size() == 1);
  CHECK(d.threads[0].thread == current_thread_id());
  CHECK(d.threads[0].os_tid != 0);
  CHECK(text(d, d.threads[0].name) == "main");
  for (const auto& op : d.ops) CHECK(op.thread == current_thread_id());
  CHECK(d.metadata.at("record_shapes") == "true");
}

TEST_CASE("backward nodes are recorded with the sequence numbers of their forward ops") {
  const SessionData d = record_training_step(false);
  std::set<int64_t> forward_seq;
  for (const auto& op : d.ops)
    if (op.kind == OpKind::Op && op.sequence_nr >= 0) forward_seq.insert(op.sequence_nr);
  int nodes = 0, accumulate = 0;
  for (const auto& op : d.ops) {
    if (op.kind != OpKind::BackwardNode) continue;
    ++nodes;
    const std::string name = text(d, op.name);
    if (name == "AccumulateGrad") {
      ++accumulate;
      CHECK(op.sequence_nr == -1);
      continue;
    }
    INFO("node " << name << " seq " << op.sequence_nr);
    CHECK(forward_seq.count(op.sequence_nr) == 1);
    CHECK(op.thread == current_thread_id());
  }
  CHECK(accumulate == 4);  // two weights, two biases
  CHECK(nodes > accumulate);
  // Ops run by a backward node (the gradient kernels) nest inside it, without a sequence number.
  bool nested_op = false;
  for (size_t i = 0; i + 1 < d.ops.size(); ++i)
    if (d.ops[i].kind == OpKind::BackwardNode && d.ops[i + 1].kind == OpKind::Op &&
        d.ops[i + 1].depth == d.ops[i].depth + 1) {
      nested_op = true;
      CHECK(d.ops[i + 1].sequence_nr == -1);
    }
  CHECK(nested_op);
}

TEST_CASE("steps and counters are recorded") {
  Session s(full_options());
  s.start();
  auto a = ones({4});
  for (int i = 0; i < 3; ++i) {
    (void)(a + a);
    s.counter("loss", 1.0 / (i + 1));
    CHECK(prof::counter("lr", 0.1));
    s.step();
  }
  s.stop();
  const SessionData& d = s.data();
  REQUIRE(d.steps.size() == 4);  // three step() calls, then stop() closes step 3
  for (size_t i = 0; i < d.steps.size(); ++i) {
    CHECK(d.steps[i].step == int64_t(i));
    CHECK(d.steps[i].start_ns <= d.steps[i].end_ns);
    if (i) CHECK(d.steps[i].start_ns == d.steps[i - 1].end_ns);
  }
  CHECK(d.steps.front().start_ns == d.start_ns);
  CHECK(d.steps.back().end_ns == d.end_ns);
  std::vector<double> losses;
  int lrs = 0;
  for (const auto& c : d.counters) {
    if (text(d, c.name) == "loss") losses.push_back(c.value);
    if (text(d, c.name) == "lr") {
      ++lrs;
      CHECK(c.value == 0.1);
    }
  }
  CHECK(losses == std::vector<double>{1.0, 0.5, 1.0 / 3});
  CHECK(lrs == 3);
  // Each add falls inside its step.
  const auto adds = ops_named(d, "add");
  REQUIRE(adds.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(adds[i]->start_ns >= d.steps[i].start_ns);
    CHECK(adds[i]->end_ns <= d.steps[i].end_ns);
  }
}

TEST_CASE("memory events balance to zero and carry the right categories") {
  const SessionData d = record_training_step(true);
  std::map<prof::MemoryCategoryId, int64_t> allocated;
  int64_t balance = 0;
  std::map<uint64_t, int64_t> live;  // address -> bytes
  for (const auto& m : d.memory) {
    balance += m.bytes;
    if (m.bytes > 0) {
      allocated[m.category] += m.bytes;
      live[m.address] = m.bytes;
    } else {
      REQUIRE(live.count(m.address) == 1);
      CHECK(live[m.address] == -m.bytes);
      live.erase(m.address);
    }
    CHECK(m.device == -1);
    CHECK(m.total_allocated >= 0);
  }
  CHECK(balance == 0);
  CHECK(live.empty());
  const int64_t params = (4 * 8 + 8 + 8 * 3 + 3) * 4;
  CHECK(allocated[prof::MemoryCategoryId::Parameter] == params);
  CHECK(allocated[prof::MemoryCategoryId::Gradient] == params);
  CHECK(allocated[prof::MemoryCategoryId::OptimizerState] == params);  // one momentum buffer per parameter
  CHECK(allocated[prof::MemoryCategoryId::Activation] > 0);
  CHECK(allocated[prof::MemoryCategoryId::Temporary] > 0);
  // Blocks made by an op name it.
  bool owned_by_linear = false;
  for (const auto& m : d.memory)
    if (m.bytes > 0 && text(d, m.op) == "linear" && m.category == prof::MemoryCategoryId::Activation)
      owned_by_linear = true;
  CHECK(owned_by_linear);
}

TEST_CASE("user ranges nest with each other and with ops") {
  Session s(full_options());
  s.start();
  {
    prof::RecordFunction outer("outer");
    CHECK(outer.recording());
    {
      prof::RecordFunction inner(std::string("inner"));
      (void)relu(ones({3}));
    }
  }
  s.stop();
  const SessionData& d = s.data();
  require_nested(d);
  REQUIRE(d.ops.size() >= 3);
  CHECK(text(d, d.ops[0].name) == "outer");
  CHECK(d.ops[0].depth == 0);
  CHECK(text(d, d.ops[1].name) == "inner");
  CHECK(d.ops[1].depth == 1);
  CHECK(ops_named(d, "relu").at(0)->depth == 2);
}

TEST_CASE("record_shapes, profile_memory and with_stack off record none of it") {
  Session s(cupti_off());
  s.start();
  {
    ModuleScope m("net");
    (void)relu(ones({3}));
  }
  s.stop();
  const SessionData& d = s.data();
  const auto relus = ops_named(d, "relu");
  REQUIRE(relus.size() == 1);
  CHECK(relus[0]->input_shapes == 0);
  CHECK(relus[0]->module == 0);
  CHECK(d.memory.empty());
  CHECK(d.metadata.at("cupti") == "off");
}

TEST_CASE("several threads record concurrently, each complete and nested") {
  constexpr int kThreads = 4, kIterations = 300;
  Session s(full_options());
  s.start();
  std::vector<std::thread> workers;
  std::vector<uint64_t> ids(kThreads);
  for (int t = 0; t < kThreads; ++t)
    workers.emplace_back([t, &ids] {
      prof::set_thread_name("worker " + std::to_string(t));
      ids[t] = current_thread_id();
      auto a = ones({8});
      for (int i = 0; i < kIterations; ++i) {
        prof::RecordFunction r("iteration");
        auto b = relu(a * 2.0);
        (void)b.sum();
      }
    });
  for (auto& w : workers) w.join();
  s.stop();
  const SessionData& d = s.data();
  require_nested(d);
  CHECK(d.dropped_records == 0);
  for (int t = 0; t < kThreads; ++t) {
    std::map<std::string, int> counts;
    for (const auto& op : d.ops)
      if (op.thread == ids[t]) counts[text(d, op.name)]++;
    INFO("thread " << t);
    CHECK(counts["iteration"] == kIterations);
    CHECK(counts["relu"] == kIterations);
    CHECK(counts["sum"] == kIterations);
    CHECK(counts["mul"] == kIterations);
    bool named = false;
    for (const auto& th : d.threads)
      if (th.thread == ids[t]) named = text(d, th.name) == "worker " + std::to_string(t);
    CHECK(named);
  }
}

TEST_CASE("snapshot while recording sees what was recorded so far") {
  Session s(full_options());
  s.start();
  std::atomic<bool> done{false};
  std::atomic<int> iterations{0};
  std::thread worker([&] {
    auto a = ones({4});
    while (!done.load()) {
      (void)(a + a);
      iterations.fetch_add(1);
      if (iterations.load() >= 20000) break;
    }
  });
  size_t last = 0;
  for (int i = 0; i < 20; ++i) {
    const SessionData snap = s.snapshot();
    CHECK_FALSE(snap.complete);
    CHECK(snap.ops.size() >= last);
    last = snap.ops.size();
    require_nested(snap);
    std::this_thread::yield();
  }
  done = true;
  worker.join();
  s.stop();
  CHECK(ops_named(s.data(), "add").size() == size_t(iterations.load()));
  CHECK(s.data().complete);
}

TEST_CASE("one session at a time, used once, read after stop") {
  Session a(cupti_off());
  Session b(cupti_off());
  CHECK_THROWS_WITH(a.data(), Catch::Contains("never started"));
  CHECK_THROWS_WITH(a.step(), Catch::Contains("not recording"));
  a.start();
  CHECK(prof::profiling_active());
  CHECK_THROWS_WITH(b.start(), Catch::Contains("another profiling session is recording"));
  CHECK_THROWS_WITH(a.start(), Catch::Contains("already started"));
  CHECK_THROWS_WITH(a.data(), Catch::Contains("still recording"));
  a.stop();
  CHECK_THROWS_WITH(a.stop(), Catch::Contains("not recording"));
  CHECK_NOTHROW(b.start());
  b.stop();
}

TEST_CASE("a stopped session costs nothing: the dispatch flag is back to 0") {
  {
    Session s(full_options());
    s.start();
    CHECK((detail::g_dispatch_flags.load() & detail::kObserved) != 0);
    CHECK(event_recorder() != nullptr);
    s.stop();
  }
  CHECK(detail::g_dispatch_flags.load() == 0);
  CHECK(event_recorder() == nullptr);
  CHECK_FALSE(prof::profiling_active());
  prof::RecordFunction r("ignored");
  CHECK_FALSE(r.recording());
  CHECK_FALSE(prof::counter("loss", 1.0));
}

TEST_CASE("nesting beyond the frame limit counts as dropped") {
  Session s(full_options());
  s.start();
  {
    std::vector<std::unique_ptr<prof::RecordFunction>> ranges;
    for (int i = 0; i < 600; ++i) ranges.push_back(std::make_unique<prof::RecordFunction>("deep"));
    while (!ranges.empty()) ranges.pop_back();
  }
  s.stop();
  CHECK(ops_named(s.data(), "deep").size() == 512);
  CHECK(s.data().dropped_records == 88);
  require_nested(s.data());
}

TEST_CASE("a session destroyed while recording stops and frees the process for the next one") {
  {
    Session s(full_options());
    s.start();
    (void)(ones({2}) + 1.0);
  }
  CHECK_FALSE(prof::profiling_active());
  Session next(full_options());
  CHECK_NOTHROW(next.start());
  next.stop();
}

TEST_CASE("a session that gives way is stopped by its owner when another starts (Note [Sessions that give way])") {
  // The owner (the remote agent's thread) stops its session when asked; start() waits for that.
  std::mutex mu;
  std::condition_variable cv;
  bool asked = false;
  prof::SessionOptions yielding;
  yielding.cupti = prof::CuptiMode::Off;
  yielding.on_yield = [&] {
    std::lock_guard<std::mutex> lk(mu);
    asked = true;
    cv.notify_all();
  };
  Session owned(yielding);
  CHECK_FALSE(prof::recording_session_gives_way());
  owned.start();
  CHECK(prof::recording_session_gives_way());
  std::thread owner([&] {
    {
      std::unique_lock<std::mutex> lk(mu);
      cv.wait(lk, [&] { return asked; });
    }
    owned.stop();  // not under `mu`: on_yield takes it while start() holds the profiler's lock
  });
  prof::SessionOptions plain;
  plain.cupti = prof::CuptiMode::Off;
  Session user(plain);
  user.start();  // would throw "another profiling session is recording" without on_yield
  owner.join();
  CHECK(user.recording());
  CHECK_FALSE(owned.recording());
  CHECK_FALSE(prof::recording_session_gives_way());
  (void)rt::add(rt::ones({2}), rt::ones({2}));
  // A session without on_yield does not give way.
  Session third(plain);
  CHECK_THROWS_WITH(third.start(), Catch::Contains("another profiling session is recording"));
  user.stop();
  CHECK_FALSE(user.data().ops.empty());
}
