// monitored_barrier: every rank checks in with rank 0, which names the ranks that did not (PyTorch's
// algorithm, on any backend's send/recv): one tag of its own, so it never matches a user's message.
#include <fmt/core.h>

#include <chrono>

#include "rt/dist/distributed.h"
#include "rt/ops/creation.h"

namespace rt::dist {

namespace {
constexpr int kMonitoredBarrierTag = 0x7ffffff0;
}

void monitored_barrier(const GroupPtr& group, Milliseconds timeout, bool wait_all_ranks) {
  GroupPtr g = group ? group : default_group();
  ProcessGroup& pg = g->for_device(DeviceType::CPU);
  if (timeout.count() <= 0) timeout = g->timeout();
  Tensor token = rt::zeros({1}, TensorOptions().with_dtype(kInt32));
  if (pg.rank() != 0) {
    pg.send(token, 0, kMonitoredBarrierTag)->wait(timeout);
    Tensor answer = rt::zeros({1}, TensorOptions().with_dtype(kInt32));
    try {
      pg.recv(answer, 0, kMonitoredBarrierTag)->wait(timeout);
    } catch (const DistError& e) {
      throw DistBackendError(fmt::format("monitored_barrier in group '{}': rank {} arrived, but rank 0 did not let the "
                                         "barrier finish within {} ms (another rank is missing; rank 0's error names "
                                         "it): {}",
                                         g->name(), g->global_ranks()[size_t(pg.rank())], timeout.count(), e.what()));
    }
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<WorkPtr> arrivals;
  std::vector<Tensor> tokens;
  for (int r = 1; r < pg.size(); ++r) {
    tokens.push_back(rt::zeros({1}, TensorOptions().with_dtype(kInt32)));
    arrivals.push_back(pg.recv(tokens.back(), r, kMonitoredBarrierTag));
  }
  std::vector<int> missing;
  for (int r = 1; r < pg.size(); ++r) {
    auto left = std::chrono::duration_cast<Milliseconds>(deadline - std::chrono::steady_clock::now());
    try {
      arrivals[size_t(r - 1)]->wait(std::max(left, Milliseconds(1)));
    } catch (const DistError&) {
      missing.push_back(g->global_ranks()[size_t(r)]);
      if (!wait_all_ranks) break;
    }
  }
  if (!missing.empty()) {
    std::string names;
    for (int m : missing) names += (names.empty() ? "" : ", ") + std::to_string(m);
    throw DistBackendError(fmt::format(
        "monitored_barrier in group '{}': rank{} {} did not arrive within {} ms{}. Hint: look at {} output: it is "
        "stuck before the barrier or has died",
        g->name(), missing.size() > 1 ? "s" : "", names, timeout.count(),
        wait_all_ranks ? "" : " (the first missing; wait_all_ranks=True names them all)",
        missing.size() > 1 ? "their" : "its"));
  }
  for (int r = 1; r < pg.size(); ++r) pg.send(token, r, kMonitoredBarrierTag)->wait(timeout);
}

}  // namespace rt::dist
