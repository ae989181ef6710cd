// The gloo backend in real processes: fork() world_size ranks that meet through a FileStore and run
// collectives over gloo's TCP transport on loopback. Each rank checks its own results and exits with the
// number of failures; the test checks every rank's exit status. (The full per-op, per-dtype conformance
// run is tests/dist/programs/dist_collectives.cpp.)
#include <catch2/catch.hpp>
#include <fmt/core.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>

#include "rt/dist/distributed.h"
#include "rt/op_observer.h"
#include "rt/ops/creation.h"
#include "rt/prof/session.h"

namespace {

namespace dist = rt::dist;
using namespace std::chrono_literals;

std::string fresh_store_path() {
  static int n = 0;
  auto p = std::filesystem::temp_directory_path() / fmt::format("rt_gloo_test_{}_{}", getpid(), ++n);
  std::filesystem::remove(p);
  return p.string();
}

// Runs body(rank) in world_size forked processes; returns each rank's exit status (0 = all checks held).
std::vector<int> run_ranks(int world_size, const std::function<int(int rank, std::shared_ptr<dist::Store>)>& body) {
  const std::string path = fresh_store_path();
  std::vector<pid_t> pids;
  for (int rank = 0; rank < world_size; ++rank) {
    pid_t pid = fork();
    if (pid == 0) {
      alarm(60);  // a hang fails the test instead of blocking it
      int failures = 0;
      try {
        auto store = std::make_shared<dist::FileStore>(path, world_size);
        store->set_timeout(20s);
        failures = body(rank, store);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
        failures = 100;
      }
      std::fflush(nullptr);
      _exit(failures);
    }
    pids.push_back(pid);
  }
  std::vector<int> status;
  for (pid_t pid : pids) {
    int s = 0;
    waitpid(pid, &s, 0);
    status.push_back(WIFEXITED(s) ? WEXITSTATUS(s) : 200 + WTERMSIG(s));
  }
  std::filesystem::remove(path);
  return status;
}

int expect(bool ok, int rank, const std::string& what) {
  if (!ok) std::fprintf(stderr, "rank %d: check failed: %s\n", rank, what.c_str());
  return ok ? 0 : 1;
}

}  // namespace

TEST_CASE("gloo: all_reduce, broadcast and all_to_all_single agree across 3 processes") {
  auto status = run_ranks(3, [](int rank, std::shared_ptr<dist::Store> store) {
    auto pg = dist::make_gloo_group(store, rank, 3);
    int bad = 0;
    rt::Tensor t = rt::full({5}, double(rank + 1), rt::TensorOptions().with_dtype(rt::kFloat64));
    pg->all_reduce(t)->wait();
    for (double v : t.to_vector<double>()) bad += expect(v == 6.0, rank, "sum is 1+2+3");
    rt::Tensor m = rt::full({3}, float(rank), rt::TensorOptions().with_dtype(rt::kFloat16));
    pg->all_reduce(m, dist::ReduceOp::Max)->wait();
    bad += expect(float(m.to_vector<rt::Half>()[0]) == 2.0f, rank, "float16 max");
    rt::Tensor a = rt::full({4}, float(rank), rt::TensorOptions().with_dtype(rt::kFloat32));
    pg->all_reduce(a, dist::ReduceOp::Avg)->wait();
    bad += expect(a.to_vector<float>()[3] == 1.0f, rank, "avg of 0,1,2");
    rt::Tensor b = rank == 1 ? rt::full({2, 2}, int64_t(42), rt::TensorOptions().with_dtype(rt::kInt64))
                             : rt::zeros({2, 2}, rt::TensorOptions().with_dtype(rt::kInt64));
    pg->broadcast(b, 1)->wait();
    bad += expect(b.to_vector<int64_t>() == std::vector<int64_t>(4, 42), rank, "broadcast from rank 1");
    // Uneven all_to_all: rank r sends r+1 rows to every peer.
    std::vector<int64_t> in_splits(3, rank + 1), out_splits{1, 2, 3};
    rt::Tensor in = rt::full({3 * (rank + 1), 2}, float(rank), rt::TensorOptions());
    rt::Tensor out = rt::zeros({6, 2}, rt::TensorOptions());
    pg->all_to_all_single(out, in, out_splits, in_splits)->wait();
    auto o = out.to_vector<float>();
    std::vector<float> want{0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2};
    bad += expect(o == want, rank, "uneven all_to_all_single");
    pg->barrier()->wait();
    return bad;
  });
  CHECK(status == std::vector<int>{0, 0, 0});
}

TEST_CASE("gloo: a profiled rank records its collectives: queued on the caller, run on gloo's workers") {
  auto status = run_ranks(2, [](int rank, std::shared_ptr<dist::Store> store) {
    auto pg = dist::make_gloo_group(store, rank, 2, {.group_name = "profiled"});
    rt::prof::Session session;
    session.start();
    std::vector<dist::WorkPtr> works;
    std::vector<rt::Tensor> tensors;
    for (int i = 0; i < 4; ++i) {  // in flight together, as DDP's buckets are
      tensors.push_back(rt::full({1000 * (i + 1)}, double(rank + 1), rt::TensorOptions().with_dtype(rt::kFloat64)));
      works.push_back(pg->all_reduce(tensors.back()));
    }
    for (auto& w : works) w->wait();
    pg->barrier()->wait();
    session.stop();
    int bad = 0;
    const rt::prof::SessionData& d = session.data();
    bad += expect(d.collectives.size() == 5, rank, fmt::format("5 collectives recorded, got {}", d.collectives.size()));
    for (size_t i = 0; i < d.collectives.size(); ++i) {
      const rt::prof::CollectiveRecord& c = d.collectives[i];
      const bool reduce = d.strings.at(c.name) == "all_reduce";
      bad += expect(d.strings.at(c.group) == "profiled", rank, "group name");
      bad += expect(c.thread == rt::current_thread_id(), rank, "issued by the main thread");
      bad += expect(c.enqueue_ns <= c.start_ns && c.start_ns <= c.end_ns, rank, "enqueue <= start <= end");
      if (reduce) {
        bad += expect(c.bytes == int64_t(8000 * c.seq), rank, fmt::format("bytes of #{}: {}", c.seq, c.bytes));
        bad += expect(d.strings.at(c.dtype) == "float64", rank, "dtype");
      }
    }
    // gloo's workers run them: the collectives' spans are on no thread of the caller's ops, and the
    // backend's own "gloo:all_reduce" ops are on worker threads.
    size_t on_workers = 0;
    for (const rt::prof::OpRecord& op : d.ops)
      if (d.strings.at(op.name) == "gloo:all_reduce" && op.thread != rt::current_thread_id()) ++on_workers;
    bad += expect(on_workers == 4, rank, fmt::format("gloo:all_reduce on workers: {}", on_workers));
    size_t named_workers = 0;  // rt/thread_name.h: the tracks say what the threads are
    for (const rt::prof::ThreadRecord& t : d.threads)
      if (d.strings.at(t.name).starts_with("gloo 'profiled' worker ")) ++named_workers;
    bad += expect(named_workers >= 1, rank, "gloo's workers are named in the profile");
    return bad;
  });
  CHECK(status == std::vector<int>{0, 0});
}

TEST_CASE("gloo: send/recv by tag, and several collectives in flight") {
  auto status = run_ranks(2, [](int rank, std::shared_ptr<dist::Store> store) {
    auto pg = dist::make_gloo_group(store, rank, 2);
    int bad = 0;
    if (rank == 0) {
      rt::Tensor a = rt::zeros({3}), b = rt::zeros({2});
      auto wb = pg->recv(b, 1, /*tag=*/9);  // posted first, matched by tag, not by order
      auto wa = pg->recv(a, 1, /*tag=*/7);
      wa->wait();
      wb->wait();
      bad += expect(a.to_vector<float>() == std::vector<float>{5, 5, 5}, rank, "tag 7");
      bad += expect(b.to_vector<float>() == std::vector<float>{6, 6}, rank, "tag 9");
    } else {
      pg->send(rt::full({3}, 5.0f, rt::TensorOptions()), 0, 7)->wait();
      pg->send(rt::full({2}, 6.0f, rt::TensorOptions()), 0, 9)->wait();
    }
    std::vector<rt::Tensor> ts;
    std::vector<dist::WorkPtr> works;
    for (int i = 0; i < 4; ++i) {
      ts.push_back(rt::full({1000}, float(i + rank), rt::TensorOptions()));
      works.push_back(pg->all_reduce(ts.back()));
    }
    for (int i = 3; i >= 0; --i) works[size_t(i)]->wait();
    for (int i = 0; i < 4; ++i)
      bad += expect(ts[size_t(i)].to_vector<float>()[999] == float(2 * i + 1), rank, "in flight");
    return bad;
  });
  CHECK(status == std::vector<int>{0, 0});
}

TEST_CASE("gloo: a recv that times out names the operation and the timeout") {
  auto status = run_ranks(2, [](int rank, std::shared_ptr<dist::Store> store) {
    auto pg = dist::make_gloo_group(store, rank, 2);
    int bad = 0;
    if (rank == 0) {
      rt::Tensor r = rt::zeros({3});
      auto w = pg->recv(r, 1, /*tag=*/7);
      try {
        w->wait(200ms);
        bad += expect(false, rank, "recv without a sender must time out");
      } catch (const dist::DistBackendError& e) {
        const std::string msg = e.what();
        bad += expect(msg.find("recv #1") != std::string::npos && msg.find("200 ms") != std::string::npos, rank,
                      "timeout names the recv and 200 ms: " + msg);
      }
      bad += expect(w->is_completed() && w->exception() != nullptr, rank, "the timed-out recv has failed for good");
      store->set("rank0-done", "1");
    } else {
      store->wait({"rank0-done"});
    }
    return bad;
  });
  CHECK(status == std::vector<int>{0, 0});
}

TEST_CASE("gloo: argument errors are refused before anything is sent") {
  auto status = run_ranks(2, [](int rank, std::shared_ptr<dist::Store> store) {
    auto pg = dist::make_gloo_group(store, rank, 2);
    int bad = 0;
    auto refused = [&](const std::function<void()>& f, const std::string& needle) {
      try {
        f();
        return expect(false, rank, "expected an error naming " + needle);
      } catch (const rt::Error& e) {
        return expect(std::string(e.what()).find(needle) != std::string::npos, rank, std::string("message: ") + e.what());
      }
    };
    rt::Tensor t = rt::zeros({4, 4}).t();
    bad += refused([&] { pg->all_reduce(t); }, "not contiguous");
    bad += refused([&] { pg->all_reduce(rt::zeros({2}, rt::TensorOptions().with_dtype(rt::kInt64)), dist::ReduceOp::Avg); },
                   "AVG needs a floating-point");
    bad += refused([&] { pg->broadcast(rt::zeros({2}), 5); }, "root 5 is not a rank");
    bad += refused([&] { pg->all_gather({rt::zeros({2})}, rt::zeros({2})); }, "one per rank (2) needed");
    bad += refused([&] { pg->all_gather_into_tensor(rt::zeros({3}), rt::zeros({2})); }, "size * input.numel()");
    bad += refused([&] { pg->send(rt::zeros({1}), rank, 0); }, "cannot send to itself");
    pg->barrier()->wait();
    return bad;
  });
  CHECK(status == std::vector<int>{0, 0});
}
