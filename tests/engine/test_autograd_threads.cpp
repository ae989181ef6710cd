// Autograd on several threads: each thread numbers its own nodes (Note [Sequence numbers]) and has its
// own cancel request (Note [Cancellation]); a cancel aimed at one backward pass leaves the other alone.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "rt/rt.h"

using namespace rt;

namespace {

constexpr auto kTimeout = std::chrono::seconds(60);

// Two threads taking turns: run(i) on thread 0, then on thread 1, then thread 0 again, ...
void alternate(int rounds, const std::function<void(int thread, int round)>& run) {
  std::mutex mu;
  std::condition_variable cv;
  int turn = 0;
  auto body = [&](int me) {
    for (int r = 0; r < rounds; ++r) {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return turn % 2 == me; });
      run(me, r);
      ++turn;
      cv.notify_all();
    }
  };
  std::thread a(body, 0), b(body, 1);
  a.join();
  b.join();
}

// A small graph whose backward runs a dozen nodes.
Tensor small_loss(const Tensor& w) {
  Tensor h = w;
  for (int i = 0; i < 6; ++i) h = (h * 1.5f).tanh();
  return h.sum();
}

}  // namespace

TEST_CASE("each thread numbers the nodes it creates in order, even when threads interleave") {
  std::vector<uint64_t> seq[2];
  alternate(50, [&](int thread, int) {
    Tensor x = ones({2}).requires_grad_();
    Tensor y = x * 2.0f;
    seq[thread].push_back(y.grad_fn()->sequence_nr());
  });
  for (const auto& s : seq) {
    REQUIRE(s.size() == 50);
    for (size_t i = 1; i < s.size(); ++i) CHECK(s[i] == s[i - 1] + 1);  // a shared counter would skip the other's
  }
  // Unique in the process: the profiler and graph snapshots key nodes by them.
  CHECK((seq[0].back() < seq[1].front() || seq[1].back() < seq[0].front()));
}

TEST_CASE("an op peeks the number its own thread's node gets, whatever the other thread creates") {
  struct Log : OpObserver {
    std::mutex mu;
    std::vector<std::pair<std::thread::id, int64_t>> ends;
    void on_op_end(const OpEvent& e) override {
      if (std::string_view(e.name) != "mul") return;
      std::lock_guard lock(mu);
      ends.emplace_back(std::this_thread::get_id(), e.sequence_nr);
    }
  } log;
  add_op_observer(&log);
  std::vector<std::pair<std::thread::id, uint64_t>> nodes;
  std::mutex nodes_mu;
  alternate(20, [&](int, int) {
    Tensor x = ones({2}).requires_grad_();
    Tensor y = x * 3.0f;
    std::lock_guard lock(nodes_mu);
    nodes.emplace_back(std::this_thread::get_id(), y.grad_fn()->sequence_nr());
  });
  remove_op_observer(&log);
  REQUIRE(log.ends.size() == nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    CHECK(log.ends[i].first == nodes[i].first);
    CHECK(uint64_t(log.ends[i].second) == nodes[i].second);
  }
}

TEST_CASE("a cancel aimed at one thread's backward stops it and no other") {
  Tensor wa = randn({64}).requires_grad_(), wb = randn({64}).requires_grad_();
  std::mutex mu;
  std::condition_variable cv;
  std::optional<CancelToken> token_a;
  std::atomic<bool> a_interrupted{false}, a_done{false};
  std::atomic<int> a_passes{0}, b_passes{0}, b_after_a{0};
  std::exception_ptr b_error;

  std::thread a([&] {
    {
      std::lock_guard lock(mu);
      token_a = CancelToken::current();
    }
    cv.notify_all();
    const auto deadline = std::chrono::steady_clock::now() + kTimeout;
    try {
      while (std::chrono::steady_clock::now() < deadline) {
        wa.set_grad(Tensor());
        small_loss(wa).backward();
        ++a_passes;
      }
    } catch (const InterruptedError&) {
      a_interrupted = true;
    }
    a_done = true;
  });
  std::thread b([&] {
    try {
      // Runs while A is asked to stop, and 20 passes after A has stopped.
      while (b_after_a < 20) {
        wb.set_grad(Tensor());
        small_loss(wb).backward();
        ++b_passes;
        if (a_done) ++b_after_a;
      }
    } catch (...) {
      b_error = std::current_exception();
    }
  });
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return token_a.has_value(); });
  }
  while (a_passes < 3 || b_passes < 3) std::this_thread::yield();
  CHECK(token_a->thread_id() != current_thread_id());
  token_a->request();
  a.join();
  b.join();

  CHECK(a_interrupted);
  CHECK_FALSE(token_a->requested());  // used up by the InterruptedError
  CHECK_FALSE(b_error);
  CHECK(b_after_a == 20);
  CHECK_FALSE(cancel_requested());    // this thread was never asked
  CHECK((detail::g_dispatch_flags.load() & detail::kCancel) == 0);  // nothing pending: ops back on the fast path
  // B's gradients are those of a backward that was never disturbed.
  Tensor expected_w = wb.detach().clone().requires_grad_();
  small_loss(expected_w).backward();
  CHECK(wb.grad().to_vector<float>() == expected_w.grad().to_vector<float>());
}

TEST_CASE("a request to a thread that has ended does nothing") {
  std::optional<CancelToken> token;
  std::thread([&] { token = CancelToken::current(); }).join();
  token->request();
  CHECK_FALSE(token->requested());
  CHECK((detail::g_dispatch_flags.load() & detail::kCancel) == 0);
  CHECK_NOTHROW(ones({2}) + ones({2}));
}

TEST_CASE("a request pending when its thread ends is withdrawn") {
  std::optional<CancelToken> token;
  std::mutex mu;
  std::condition_variable cv;
  bool asked = false;
  std::thread t([&] {
    std::unique_lock lock(mu);
    token = CancelToken::current();
    cv.notify_all();
    cv.wait(lock, [&] { return asked; });  // ends without running an op
  });
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return token.has_value(); });
    token->request();
    CHECK((detail::g_dispatch_flags.load() & detail::kCancel) != 0);
    asked = true;
  }
  cv.notify_all();
  t.join();
  CHECK_FALSE(token->requested());
  CHECK((detail::g_dispatch_flags.load() & detail::kCancel) == 0);
}
