// Gradient histograms over remote attach: a client attached to this process's agent (over its real Unix
// socket) receives the histograms a training loop records, while it records and step by step, both from the
// agent's own session and from the program's own profile that the agent follows.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "rt/prof/gradient_histograms.h"
#include "rt/prof/session.h"
#include "rt/remote/agent.h"
#include "rt/remote/client.h"
#include "rt/rt.h"
#include "runtime_dir.h"

using namespace rt;
using namespace std::chrono_literals;

namespace {

// A linear layer trained with plain SGD; each step records both parameters' gradient histograms.
struct TinyModel {
  Tensor w = rt::randn({8, 4}).requires_grad_(true);
  Tensor b = rt::zeros({4}).requires_grad_(true);

  void train_step() {
    auto x = rt::randn({16, 8});
    auto loss = (rt::matmul(x, w) + b).relu().pow(2).mean();
    loss.backward();
    REQUIRE(prof::record_gradient_histogram("fc.weight", w.grad()));
    REQUIRE(prof::record_gradient_histogram("fc.bias", b.grad(), 8));
    NoGradGuard no_grad;
    w.sub_(w.grad() * 0.1);
    b.sub_(b.grad() * 0.1);
    w.grad().zero_();
    b.grad().zero_();
  }
};

size_t histograms_named(const prof::SessionData& d, const std::string& name) {
  size_t n = 0;
  for (const auto& h : d.gradient_histograms) n += d.strings.at(h.name) == name;
  return n;
}

}  // namespace

TEST_CASE("an attached client receives the gradient histograms a training loop records", "[remote][agent]") {
  RuntimeDir dir;
  const remote::AgentManifest m = remote::serve({.job = "grads"});
  auto client = remote::AgentClient::connect(m.socket, "test_agent_gradients");
  REQUIRE_THAT(client.request("subscribe"), Catch::Contains("\"agent_records\":true"));
  TinyModel model;

  // The agent's own session records for its subscriber: no step is ever taken there, so all are step 0.
  model.train_step();
  for (int i = 0; i < 100 && client.session().gradient_histograms.size() < 2; ++i) client.poll(50ms);
  REQUIRE(client.session().gradient_histograms.size() == 2);
  CHECK(histograms_named(client.session(), "fc.weight") == 1);
  CHECK(client.session().gradient_histograms[0].step == 0);

  // The program's own profile (the agent gives way and follows it): steps are numbered, and each step's
  // histograms reach the client while the profile still records.
  prof::SessionOptions o;
  o.name = "training";
  o.cupti = prof::CuptiMode::Off;
  o.flush_interval = std::chrono::milliseconds(20);
  prof::Session mine(o);
  mine.start();
  for (int step = 0; step < 3; ++step) {
    model.train_step();
    mine.step();
    for (int i = 0; i < 200 && !(client.session().name == "training" &&
                                 histograms_named(client.session(), "fc.bias") == size_t(step + 1));
         ++i)
      client.poll(50ms);
    REQUIRE(client.session().name == "training");
    CHECK_FALSE(client.session().complete);
    REQUIRE(histograms_named(client.session(), "fc.bias") == size_t(step + 1));
    CHECK(client.session().gradient_histograms.back().step == step);
  }
  mine.stop();
  for (int i = 0; i < 200 && !(client.session().name == "training" && client.session().complete); ++i)
    client.poll(50ms);
  REQUIRE(client.session().complete);

  const prof::SessionData& local = mine.data();
  const prof::SessionData& remote_copy = client.session();
  REQUIRE(local.gradient_histograms.size() == 6);
  REQUIRE(remote_copy.gradient_histograms.size() == local.gradient_histograms.size());
  for (size_t i = 0; i < local.gradient_histograms.size(); ++i) {
    const auto &x = local.gradient_histograms[i], &y = remote_copy.gradient_histograms[i];
    CHECK(local.strings.at(x.name) == remote_copy.strings.at(y.name));
    CHECK(x.step == y.step);
    CHECK(x.time_ns == y.time_ns);
    CHECK(x.numel == y.numel);
    CHECK(x.norm == y.norm);
    CHECK(x.lo == y.lo);
    CHECK(x.hi == y.hi);
    CHECK(x.counts == y.counts);
  }
  CHECK(remote_copy.gradient_histograms[5].counts.size() == 8);
  CHECK(remote_copy.gradient_histograms[4].numel == 32);
}
