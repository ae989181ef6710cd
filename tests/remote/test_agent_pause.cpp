// Pausing a training process from a client: pause stops the next backward before its first node, step moves one
// node, paused_state shows the node and its gradients, read_tensor reads their values in capped pieces, continue
// releases it, and the run ends with the same parameters as one never paused. A client that paused and went away
// never leaves training paused.
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include <nlohmann/json.hpp>

#include "rt/remote/agent.h"
#include "rt/remote/client.h"
#include "rt/rt.h"
#include "runtime_dir.h"

using namespace rt;
using namespace std::chrono_literals;

namespace {

// A small deterministic model trained for `steps` SGD steps; returns the final weight.
struct Trainer {
  Tensor w1, w2;
  std::atomic<int> done{0};
  Trainer() {
    rt::manual_seed(3);
    w1 = rt::randn({8, 16}).requires_grad_(true);
    w2 = rt::randn({16, 4}).requires_grad_(true);
  }
  void run(int steps) {
    rt::manual_seed(4);
    for (int i = 0; i < steps; ++i) {
      auto x = rt::randn({32, 8});
      auto loss = rt::matmul(rt::matmul(x, w1).tanh(), w2).pow(2).mean();
      loss.backward();
      {
        rt::NoGradGuard g;
        w1.sub_(rt::mul(w1.grad(), rt::full({}, 0.1)));
        w2.sub_(rt::mul(w2.grad(), rt::full({}, 0.1)));
      }
      w1.grad().zero_();
      w2.grad().zero_();
      done.store(i + 1);
    }
  }
};

// Waits for the next notice containing `text`; returns it ("" on timeout).
std::string wait_notice(remote::AgentClient& c, const std::string& text, size_t& seen) {
  for (int i = 0; i < 200; ++i) {
    while (seen < c.notices().size()) {
      const std::string n = c.notices()[seen++];
      if (n.find(text) != std::string::npos) return n;
    }
    c.poll(50ms);
  }
  return "";
}

}  // namespace

TEST_CASE("pause, step, inspect and continue a training thread, its result is unchanged", "[remote][pause]") {
  Trainer reference;
  reference.run(6);

  RuntimeDir dir;
  const remote::AgentManifest m = remote::serve({.job = "pause"});
  auto client = remote::AgentClient::connect(m.socket, "test_agent_pause");
  size_t seen = 0;
  CHECK_THROWS_WITH(client.request("step"), Catch::Contains("no backward pass is paused"));
  CHECK_THAT(client.request("pause"), Catch::Contains("\"attached\":true"));

  Trainer t;
  std::thread training([&] { t.run(6); });
  const std::string first = wait_notice(client, "\"paused\"", seen);
  REQUIRE_FALSE(first.empty());
  CHECK_THAT(first, Catch::Contains("\"reason\":\"start\"") && Catch::Contains("\"index\":0"));
  CHECK(t.done.load() == 0);  // held before the first node of its first backward

  std::this_thread::sleep_for(100ms);
  CHECK(t.done.load() == 0);  // still held: nothing runs while paused
  const std::string state = client.request("paused_state");
  CHECK_THAT(state, Catch::Contains("MeanBackward") && Catch::Contains("grad_outputs") && Catch::Contains("\"norm\""));

  client.request("step");
  const std::string second = wait_notice(client, "\"paused\"", seen);
  CHECK_THAT(second, Catch::Contains("\"index\":1") && Catch::Contains("\"reason\":\"step\""));
  client.request("step_over");
  CHECK_FALSE(wait_notice(client, "\"paused\"", seen).empty());

  client.request("continue");
  CHECK_FALSE(wait_notice(client, "\"resumed\"", seen).empty());
  training.join();
  CHECK(t.done.load() == 6);
  CHECK(rt::sub(t.w1, reference.w1).abs().max().item<double>() == 0.0);  // bit-identical
  CHECK(rt::sub(t.w2, reference.w2).abs().max().item<double>() == 0.0);
  // The agent detaches the debugger at its next tick once no backward holds it.
  std::string status;
  for (int i = 0; i < 500; ++i) {
    status = client.request("debug_status");
    if (status.find("\"attached\":false") != std::string::npos) break;
    std::this_thread::sleep_for(10ms);
  }
  CHECK_THAT(status, Catch::Contains("\"attached\":false"));
}

TEST_CASE("a client that paused and disconnected releases the training thread", "[remote][pause]") {
  RuntimeDir dir;
  const remote::AgentManifest m = remote::serve({.job = "pause-gone"});
  Trainer t;
  {
    auto client = remote::AgentClient::connect(m.socket);
    client.request("pause");
    std::thread training([&] { t.run(3); });
    size_t seen = 0;
    REQUIRE_FALSE(wait_notice(client, "\"paused\"", seen).empty());
    training.detach();
  }  // the controlling client goes away while the thread is paused
  for (int i = 0; i < 200 && t.done.load() < 3; ++i) std::this_thread::sleep_for(20ms);
  CHECK(t.done.load() == 3);
}

TEST_CASE("read_tensor returns a paused node's gradient values, in capped pieces", "[remote][pause]") {
  RuntimeDir dir;
  const remote::AgentManifest m = remote::serve({.job = "pause-read"});
  auto client = remote::AgentClient::connect(m.socket, "test_agent_pause");
  size_t seen = 0;
  CHECK_THROWS_WITH(client.request("read_tensor", R"({"side": "grad_outputs", "index": 0})"),
                    Catch::Contains("not paused"));
  client.request("pause");
  Trainer t;
  std::thread training([&] { t.run(2); });
  REQUIRE_FALSE(wait_notice(client, "\"paused\"", seen).empty());

  // loss = y.pow(2).mean(), y [32, 4]: MeanBackward0 receives 1; PowBackward0, next, receives 1/128 everywhere.
  const auto first = nlohmann::json::parse(client.request("read_tensor", R"({"side": "grad_outputs", "index": 0})"));
  CHECK(first["shape"] == nlohmann::json::array());
  CHECK(first["numel"] == 1);
  CHECK(first["values"] == nlohmann::json::array({1.0}));
  CHECK(first["truncated"] == false);
  client.request("step");
  REQUIRE_FALSE(wait_notice(client, "\"index\":1", seen).empty());
  const auto head =
      nlohmann::json::parse(client.request("read_tensor", R"({"side": "grad_outputs", "index": 0, "limit": 100})"));
  CHECK(head["shape"] == nlohmann::json::array({32, 4}));
  CHECK(head["dtype"] == "float32");
  CHECK(head["numel"] == 128);
  REQUIRE(head["values"].size() == 100);
  for (const auto& v : head["values"]) CHECK(v.get<double>() == 1.0 / 128);
  CHECK(head["truncated"] == true);
  const auto tail = nlohmann::json::parse(
      client.request("read_tensor", R"({"side": "grad_outputs", "index": 0, "offset": 100, "limit": 100})"));
  CHECK(tail["offset"] == 100);
  CHECK(tail["values"].size() == 28);
  CHECK(tail["truncated"] == false);

  // Bad requests are refused with the reason; the process stays paused.
  CHECK_THROWS_WITH(client.request("read_tensor", R"({"side": "grad_outputs", "index": 0, "limit": 20000})"),
                    Catch::Contains("over the 16384 values"));
  CHECK_THROWS_WITH(client.request("read_tensor", R"({"side": "weights", "index": 0})"),
                    Catch::Contains("\"grad_outputs\" or \"grad_inputs\""));
  CHECK_THROWS_WITH(client.request("read_tensor", R"({"side": "grad_outputs", "index": "0"})"),
                    Catch::Contains("\"index\" must be an integer"));
  CHECK_THROWS_WITH(client.request("read_tensor", R"({"side": "grad_outputs"})"), Catch::Contains("needs \"index\""));
  CHECK_THROWS_WITH(client.request("read_tensor", R"({"side": "grad_outputs", "index": 3})"),
                    Catch::Contains("has 1 grad_outputs"));
  CHECK_THROWS_WITH(client.request("read_tensor", R"({"side": "grad_inputs", "index": 0})"),
                    Catch::Contains("only after the node ran"));
  CHECK_THROWS_AS(client.request("read_tensor", "[1, 2]"), rt::ValueError);  // params must be an object
  CHECK(t.done.load() == 0);

  client.request("continue");
  training.join();
  CHECK(t.done.load() == 2);
}
