// The nccl backend on one GPU (scripts/gpu-check.sh runs it through `ctest -L cuda`). Without a usable
// CUDA device the program prints why and exits 77, which ctest reports as skipped.
//
// World size 1 through a HashStore: every collective on CUDA tensors of every dtype against the result
// the CPU gives (with one rank, each collective's result is its input, moved to the right place), async
// Works, and stream ordering. Timeouts and aborts, in processes of their own (tests/dist/CMakeLists.txt
// runs each tag as one ctest entry, so an abort cannot disturb the other tests):
// - [timeout_wait] / [timeout_watchdog]: a host function on the caller's current stream (a gate) holds
//   the collective back, so it cannot finish within the timeout; wait(timeout) or the watchdog aborts
//   the communicator, the Work fails naming the collective, its sequence number, the group and the
//   timeout, and the group's next call fails at once;
// - [init]: rank 0 of a group of 2 whose rank 1 never comes: creating the communicator times out naming
//   the group; rank 1 of 2 with no rank 0: the store's timeout names the unique id's key.
#include <catch2/catch.hpp>  // the implementation is rt_catch's (catch_run.h); main() is below
#include "catch_run.h"
#include <cuda_runtime.h>
#include <fmt/core.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "rt/cuda.h"
#include "rt/dist/process_group.h"
#include "rt/ops/creation.h"
#include "rt/rt.h"

namespace {

namespace dist = rt::dist;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

std::shared_ptr<dist::ProcessGroup> group_of_one(const std::string& name, dist::Milliseconds timeout = 60s) {
  dist::ProcessGroupOptions options;
  options.group_name = name;
  options.timeout = timeout;
  return dist::make_nccl_group(std::make_shared<dist::HashStore>(), 0, 1, options);
}

rt::TensorOptions on_gpu() { return rt::TensorOptions().with_device(rt::Device::cuda(0)); }

const rt::ScalarType kDTypes[] = {rt::kFloat32, rt::kFloat64, rt::kFloat16, rt::kBFloat16,
                                  rt::kInt32,   rt::kInt64,   rt::kUInt8,   rt::kBool};

// 0, 1, 2, ... (bool: alternating) in `dtype`, on the CPU.
rt::Tensor values(int64_t n, rt::ScalarType dtype, int64_t offset = 0) {
  rt::Tensor t = rt::arange(offset, offset + n, 1, rt::TensorOptions().with_dtype(rt::kInt64));
  if (dtype == rt::kBool) t = rt::remainder(t, 2);
  if (dtype == rt::kUInt8) t = rt::remainder(t, 200);
  return t.to(dtype);
}

// Filled with 7 (true for bool), so a result that was never written shows.
rt::Tensor garbage_like(const rt::Tensor& t) { return rt::full(t.sizes(), 7, on_gpu().with_dtype(t.dtype())); }

void check_equal(const rt::Tensor& gpu, const rt::Tensor& cpu, const std::string& what) {
  INFO(what);
  REQUIRE(gpu.device().is_cuda());
  CHECK(gpu.to_vector<double>() == cpu.to_vector<double>());
}

// Holds a stream until open() (or `give_up`): work queued behind it cannot start.
class Gate {
 public:
  Gate(const rt::cuda::Stream& s, std::chrono::seconds give_up) : give_up_(give_up) {
    REQUIRE(cudaLaunchHostFunc(static_cast<cudaStream_t>(s.handle()), &Gate::hold, this) == cudaSuccess);
  }
  void open() { open_.store(true); }

 private:
  static void hold(void* self) {
    auto* g = static_cast<Gate*>(self);
    const auto until = std::chrono::steady_clock::now() + g->give_up_;
    while (!g->open_.load() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(1ms);
  }
  std::chrono::seconds give_up_;
  std::atomic<bool> open_{false};
};

}  // namespace

TEST_CASE("all_reduce, reduce and reduce_scatter give the CPU's result for every dtype and op", "[collectives]") {
  auto pg = group_of_one("reductions");
  CHECK(std::string(pg->backend_name()) == "nccl");
  for (rt::ScalarType dtype : kDTypes) {
    for (dist::ReduceOp op : {dist::ReduceOp::Sum, dist::ReduceOp::Avg, dist::ReduceOp::Product,
                              dist::ReduceOp::Min, dist::ReduceOp::Max}) {
      const bool floating = rt::is_floating(dtype);
      const std::string what = fmt::format("{} {}", rt::dtype_name(dtype), dist::reduce_op_name(op));
      const rt::Tensor cpu = values(1000, dtype);
      rt::Tensor t = cpu.cuda();
      if (op == dist::ReduceOp::Avg && !floating) {
        CHECK_THROWS_AS(pg->all_reduce(t, op), rt::DTypeError);
        continue;
      }
      pg->all_reduce(t, op)->wait();
      check_equal(t, cpu, "all_reduce " + what);

      rt::Tensor r = cpu.cuda();
      pg->reduce(r, 0, op)->wait();
      check_equal(r, cpu, "reduce " + what);

      rt::Tensor out = garbage_like(cpu);
      pg->reduce_scatter_tensor(out, cpu.cuda(), op)->wait();
      check_equal(out, cpu, "reduce_scatter_tensor " + what);
    }
  }
  CHECK(pg->sequence_number() > 0);
}

TEST_CASE("data movement collectives give the CPU's result for every dtype", "[collectives]") {
  auto pg = group_of_one("movement");
  for (rt::ScalarType dtype : kDTypes) {
    const std::string name(rt::dtype_name(dtype));
    const rt::Tensor cpu = values(12 * 5, dtype).reshape({12, 5});
    rt::Tensor b = cpu.cuda();
    pg->broadcast(b, 0)->wait();
    check_equal(b, cpu, "broadcast " + name);

    std::vector<rt::Tensor> outs = {garbage_like(cpu)};
    pg->all_gather(outs, cpu.cuda())->wait();
    check_equal(outs[0], cpu, "all_gather " + name);

    rt::Tensor flat = garbage_like(cpu);
    pg->all_gather_into_tensor(flat, cpu.cuda())->wait();
    check_equal(flat, cpu, "all_gather_into_tensor " + name);

    std::vector<rt::Tensor> gathered = {garbage_like(cpu)};
    pg->gather(gathered, cpu.cuda(), 0)->wait();
    check_equal(gathered[0], cpu, "gather " + name);

    rt::Tensor scattered = garbage_like(cpu);
    pg->scatter(scattered, {cpu.cuda()}, 0)->wait();
    check_equal(scattered, cpu, "scatter " + name);

    rt::Tensor a2a = garbage_like(cpu);
    pg->all_to_all_single(a2a, cpu.cuda())->wait();
    check_equal(a2a, cpu, "all_to_all_single " + name);
    rt::Tensor a2a_split = garbage_like(cpu);
    pg->all_to_all_single(a2a_split, cpu.cuda(), {12}, {12})->wait();
    check_equal(a2a_split, cpu, "all_to_all_single with splits " + name);
  }
  rt::Tensor empty = rt::empty({0}, on_gpu());
  pg->all_reduce(empty)->wait();
  pg->broadcast(empty, 0)->wait();
  pg->barrier()->wait();
}

TEST_CASE("arguments are refused before anything is enqueued", "[collectives]") {
  auto pg = group_of_one("arguments");
  rt::Tensor cpu = rt::ones({4});
  CHECK_THROWS_AS(pg->all_reduce(cpu), rt::DeviceError);
  CHECK_THROWS_WITH(pg->all_reduce(cpu), Contains("nccl") && Contains("cuda"));
  rt::Tensor t = rt::ones({4}, on_gpu());
  CHECK_THROWS_AS(pg->send(t, 0), rt::ValueError);  // a rank cannot send to itself
  CHECK_THROWS_AS(pg->all_to_all_single(rt::ones({4}, on_gpu()), t, {3}, {4}), rt::ShapeError);
  CHECK_THROWS_AS(dist::make_nccl_group(nullptr, 0, 1), rt::ValueError);
  CHECK(dist::is_nccl_available());
}

TEST_CASE("collectives wait for the caller's current stream and order it after themselves", "[async]") {
  auto pg = group_of_one("streams");
  rt::cuda::Stream side = rt::cuda::Stream::create();
  rt::cuda::StreamGuard on_side(side);
  rt::Tensor x = rt::ones({1 << 22}, on_gpu());
  x = rt::mul(x, rt::full({1}, 3.0, on_gpu()));  // queued on `side`, maybe not run yet
  dist::WorkPtr w = pg->all_reduce(x);
  w->wait();
  CHECK(w->is_completed());
  CHECK(w->is_success());
  CHECK(w->exception() == nullptr);
  REQUIRE(w->result().size() == 1);
  CHECK(rt::sum(x).item<float>() == Approx(3.0 * (1 << 22)));  // runs on `side`, after the wait
}

TEST_CASE("async Works complete on their own, and a dropped Work keeps its tensors", "[async]") {
  auto pg = group_of_one("async");
  std::vector<dist::WorkPtr> works;
  std::vector<rt::Tensor> tensors;
  for (int i = 0; i < 16; ++i) {
    tensors.push_back(rt::full({1 << 16}, double(i), on_gpu()));
    works.push_back(pg->all_reduce(tensors.back(), dist::ReduceOp::Max));
  }
  const auto until = std::chrono::steady_clock::now() + 30s;
  while (!works.back()->is_completed() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(1ms);
  CHECK(works.back()->is_completed());
  for (auto& w : works) w->wait();
  for (int i = 0; i < 16; ++i) CHECK(tensors[size_t(i)].to_vector<float>()[100] == float(i));
  CHECK(works.front()->description().find("all_reduce #1 in group 'async' (nccl, 1 ranks)") != std::string::npos);

  // Neither the tensor nor the Work survives the call here: the backend keeps both until the end.
  for (int i = 0; i < 8; ++i) pg->broadcast(rt::full({1 << 20}, 1.0, on_gpu()), 0);
  rt::cuda::synchronize();
  rt::Tensor later = rt::zeros({1 << 20}, on_gpu());
  pg->all_reduce(later)->wait();
  CHECK(rt::sum(later).item<float>() == 0.0f);
}

TEST_CASE("wait(timeout) on a collective held back aborts the group and names what timed out", "[timeout_wait]") {
  auto pg = group_of_one("held", 60s);
  rt::Tensor t = rt::ones({256}, on_gpu());
  pg->all_reduce(t)->wait();  // the communicator exists: what follows times out in the collective itself
  rt::cuda::Stream side = rt::cuda::Stream::create();
  rt::cuda::StreamGuard on_side(side);
  auto* gate = new Gate(side, 20s);  // leaked: its host function may read it after the test
  dist::WorkPtr w = pg->all_reduce(t);
  CHECK_FALSE(w->is_completed());
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(w->wait(300ms), dist::DistBackendError);
  CHECK(std::chrono::steady_clock::now() - start < 15s);
  CHECK(w->is_completed());
  REQUIRE(w->exception() != nullptr);
  CHECK_THROWS_WITH(w->wait(), Contains("all_reduce #2 in group 'held' (nccl, 1 ranks)") && Contains("300 ms") &&
                                   Contains("the timeout passed to wait") && Contains("aborted"));
  // The group is unusable now, and says so without touching NCCL.
  CHECK_THROWS_WITH(pg->all_reduce(t), Contains("all_reduce #3") && Contains("cannot run") &&
                                           Contains("aborted because") && Contains("all_reduce #2"));
  gate->open();
}

TEST_CASE("the watchdog aborts a collective past the group's timeout", "[timeout_watchdog]") {
  auto pg = group_of_one("watched", 1500ms);
  rt::Tensor t = rt::ones({256}, on_gpu());
  pg->broadcast(t, 0)->wait();
  rt::cuda::Stream side = rt::cuda::Stream::create();
  rt::cuda::StreamGuard on_side(side);
  auto* gate = new Gate(side, 20s);  // leaked: its host function may read it after the test
  dist::WorkPtr w = pg->broadcast(t, 0);
  const auto until = std::chrono::steady_clock::now() + 15s;
  while (!w->is_completed() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(10ms);
  REQUIRE(w->is_completed());  // nobody waited: the watchdog failed it
  CHECK_FALSE(w->is_success());
  CHECK_THROWS_AS(w->wait(), dist::DistBackendError);
  CHECK_THROWS_WITH(w->wait(), Contains("broadcast #2 in group 'watched' (nccl, 1 ranks)") &&
                                   Contains("did not finish within 1500 ms") && Contains("the group's timeout"));
  CHECK_THROWS_AS(pg->barrier(), dist::DistBackendError);
  gate->open();
}

TEST_CASE("creating the communicator times out naming the group when a rank never comes", "[init]") {
  auto store = std::make_shared<dist::HashStore>();
  dist::ProcessGroupOptions options;
  options.group_name = "lonely";
  options.timeout = 2s;
  auto pg = dist::make_nccl_group(store, 0, 2, options);  // rank 1 never joins
  rt::Tensor t = rt::ones({16}, on_gpu());
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(pg->all_reduce(t), dist::DistBackendError);
  CHECK(std::chrono::steady_clock::now() - start < 30s);
  CHECK_THROWS_WITH(pg->all_reduce(t), Contains("all_reduce #2") && Contains("cannot run") &&
                                           Contains("group 'lonely' (nccl, 2 ranks)") && Contains("2000 ms"));

  auto empty_store = std::make_shared<dist::HashStore>();
  empty_store->set_timeout(500ms);
  options.group_name = "no_root";
  auto rank1 = dist::make_nccl_group(empty_store, 1, 2, options);  // rank 0 never sets the unique id
  CHECK_THROWS_AS(rank1->all_reduce(t), dist::DistStoreError);
  CHECK_THROWS_WITH(rank1->all_reduce(t), Contains("unique id") && Contains("group 'no_root'"));
}

int main(int argc, char** argv) {
  if (!rt::cuda::is_available()) {
    std::printf("skipped: no CUDA device (%s)\n", rt::cuda::unavailable_reason().c_str());
    return 77;
  }
  return rt::testing::run_catch(argc, argv);
}
