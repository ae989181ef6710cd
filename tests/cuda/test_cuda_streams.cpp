// Streams, events and record_stream on a real GPU (rt/cuda.h). Without a usable device the
// program prints why and exits 77, which ctest reports as skipped; scripts/gpu-check.sh runs it.
//
// Which stream an op went to is observed without timing: a host function queued on a stream
// (cudaLaunchHostFunc) holds that stream until the test opens a gate, so work queued behind it
// cannot have finished, and work on other streams can. Each gate gives up after 5 s so a wrong
// ordering shows as a failed check ("timed out"), never as a hung test.
//
// The CUDA emulator's build (RT_CUDA=EMULATED) runs the tests without a gate ("~[gate]"): there a
// stream's work is done when it is queued, so nothing can wait behind a gate.
#include <catch2/catch.hpp>  // the implementation is rt_catch's (catch_run.h); main() is below
#include "catch_run.h"
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "rt/cuda.h"
#include "rt/dispatch_stub.h"
#include "rt/op_observer.h"
#include "rt/rt.h"

namespace {

// Holds a stream until open() (or 5 s, recorded as timed_out).
class Gate {
 public:
  explicit Gate(const rt::cuda::Stream& s) {
    REQUIRE(cudaLaunchHostFunc(static_cast<cudaStream_t>(s.handle()), &Gate::hold, this) == cudaSuccess);
  }
  void open() { open_.store(true); }
  bool timed_out() const { return timed_out_.load(); }

 private:
  static void hold(void* self) {
    auto* g = static_cast<Gate*>(self);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!g->open_.load()) {
      if (std::chrono::steady_clock::now() > give_up) {
        g->timed_out_.store(true);
        return;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
  std::atomic<bool> open_{false}, timed_out_{false};
};

rt::TensorOptions on_gpu() { return rt::TensorOptions().with_device(rt::Device::cuda(0)); }

// Largest |a - b| over the elements, both read on the host (same shape, float32).
double max_abs_diff(const rt::Tensor& a, const rt::Tensor& b) {
  const auto va = a.cpu().to_vector<float>(), vb = b.cpu().to_vector<float>();
  REQUIRE(va.size() == vb.size());
  double m = 0;
  for (size_t i = 0; i < va.size(); ++i) m = std::max(m, double(std::abs(va[i] - vb[i])));
  return m;
}

}  // namespace

TEST_CASE("created streams come from the device's pool, non-default, with a priority") {
  const rt::cuda::Stream a = rt::cuda::Stream::create();
  const rt::cuda::Stream b = rt::cuda::Stream::create();
  const rt::cuda::Stream high = rt::cuda::Stream::create(0, -1);
  CHECK(a.handle() != nullptr);
  CHECK(a != b);  // round robin over the pool
  CHECK(a.device() == 0);
  CHECK(rt::cuda::Stream::default_stream().handle() == nullptr);
  CHECK(rt::cuda::Stream::current() == rt::cuda::Stream::default_stream());
  CHECK(high.priority() < a.priority());  // lower runs first
  CHECK(a.query());
}

TEST_CASE("StreamGuard makes a stream current for its scope, on this thread only") {
  const rt::cuda::Stream side = rt::cuda::Stream::create();
  {
    rt::cuda::StreamGuard guard(side);
    CHECK(rt::cuda::Stream::current() == side);
    rt::cuda::Stream seen_elsewhere = side;
    std::thread([&] { seen_elsewhere = rt::cuda::Stream::current(0); }).join();
    CHECK(seen_elsewhere == rt::cuda::Stream::default_stream());
  }
  CHECK(rt::cuda::Stream::current() == rt::cuda::Stream::default_stream());
  rt::cuda::set_current_stream(side);
  CHECK(rt::cuda::Stream::current() == side);
  rt::cuda::set_current_stream(rt::cuda::Stream::default_stream());
}

TEST_CASE("ops launch on the current stream, the legacy stream does not wait for a created one", "[gate]") {
  const rt::Tensor x = rt::randn({1 << 20}, on_gpu());
  const rt::Tensor expected = (x.cpu() * 2.0) + 1.0;
  const rt::cuda::Stream side = rt::cuda::Stream::create();
  side.wait_stream(rt::cuda::Stream::current());  // x is written on the legacy stream

  Gate gate(side);
  rt::Tensor y;
  {
    rt::cuda::StreamGuard guard(side);
    y = x * 2.0 + 1.0;              // queued behind the gate
    rt::cuda::record_stream(x, side);
  }
  CHECK_FALSE(side.query());
  // Work on the legacy stream, and the copy to the host, finish while `side` is held.
  const rt::Tensor z = (x + 1.0).cpu();
  CHECK(max_abs_diff(z, x.cpu() + 1.0) == 0.0);
  gate.open();
  rt::cuda::Stream::current().wait_stream(side);
  CHECK(max_abs_diff(y, expected) < 1e-5);
  CHECK_FALSE(gate.timed_out());
}

TEST_CASE("a copy to the host under a StreamGuard waits for that stream's work") {
  const rt::Tensor x = rt::randn({4096}, on_gpu());
  const rt::cuda::Stream side = rt::cuda::Stream::create();
  side.wait_stream(rt::cuda::Stream::current());
  rt::cuda::StreamGuard guard(side);
  const rt::Tensor y = rt::exp(x);
  CHECK(max_abs_diff(y, rt::exp(x.cpu())) < 1e-4);  // no explicit synchronisation
}

TEST_CASE("matmul on a created stream (cuBLAS with that stream's workspace) matches the legacy stream") {
  const rt::Tensor a = rt::randn({256, 512}, on_gpu()), b = rt::randn({512, 128}, on_gpu());
  const rt::Tensor ref = rt::matmul(a, b).cpu();
  const rt::cuda::Stream side = rt::cuda::Stream::create();
  side.wait_stream(rt::cuda::Stream::current());
  rt::Tensor c;
  {
    rt::cuda::StreamGuard guard(side);
    c = rt::matmul(a, b);
  }
  rt::cuda::Stream::current().wait_stream(side);
  CHECK(max_abs_diff(c, ref) < 1e-3);  // the workspace size may steer cuBLAS to another algorithm
}

TEST_CASE("record_stream keeps freed memory from reuse until the other stream got there", "[gate]") {
  const rt::cuda::Stream side = rt::cuda::Stream::create();
  constexpr int64_t n = 1 << 18;  // 1 MiB of float32: the small pool's largest request
  rt::cuda::empty_cache();

  SECTION("recorded: a new tensor gets other memory while the stream is held") {
    rt::Tensor x = rt::empty({n}, on_gpu());
    const void* px = x.storage().data();
    const size_t allocated = rt::cuda::memory_allocated();
    Gate gate(side);
    rt::cuda::record_stream(x, side);
    x = rt::Tensor();
    CHECK(rt::cuda::memory_allocated() == allocated - size_t(n) * 4);  // freed for the books at once
    const rt::Tensor during = rt::empty({n}, on_gpu());
    CHECK(during.storage().data() != px);
    gate.open();
    side.synchronize();
    CHECK_FALSE(gate.timed_out());
  }
  SECTION("not recorded: the memory is reused at once (the stream-ordering contract)") {
    rt::Tensor x = rt::empty({n}, on_gpu());
    const void* px = x.storage().data();
    Gate gate(side);
    x = rt::Tensor();
    const rt::Tensor during = rt::empty({n}, on_gpu());
    CHECK(during.storage().data() == px);
    gate.open();
    side.synchronize();
  }
}

TEST_CASE("events: unrecorded is complete, record/wait orders streams, timing needs enable_timing", "[gate]") {
  rt::cuda::Event plain;
  CHECK(plain.query());
  CHECK_NOTHROW(plain.synchronize());
  const rt::cuda::Stream side = rt::cuda::Stream::create();
  Gate gate(side);
  plain.record(side);
  CHECK_FALSE(plain.query());
  const rt::cuda::Stream other = rt::cuda::Stream::create();
  plain.wait(other);  // `other` now waits for the gate too ...
  rt::cuda::Event after_wait;
  after_wait.record(other);  // ... so a mark queued behind the wait is not reached either
  CHECK_FALSE(after_wait.query());
  gate.open();
  other.synchronize();
  CHECK(plain.query());
  CHECK(after_wait.query());
  CHECK_FALSE(gate.timed_out());

  rt::cuda::Event start(true), end(true);
  CHECK_THROWS_AS(start.elapsed_ms(end), rt::ValueError);  // not recorded
  start.record();
  rt::Tensor y = rt::randn({1 << 20}, on_gpu()) * 3.0;
  end.record();
  end.synchronize();
  CHECK(start.elapsed_ms(end) >= 0.f);
  rt::cuda::Event untimed;
  untimed.record();
  CHECK_THROWS_AS(start.elapsed_ms(untimed), rt::ValueError);
}

TEST_CASE("a non_blocking copy from pinned memory is queued, and the pinned block waits for it", "[gate]") {
  const rt::Tensor x = rt::randn({1 << 16});
  rt::Tensor pinned = rt::cuda::pin_memory(x);
  CHECK(rt::cuda::is_pinned(pinned));
  CHECK_FALSE(rt::cuda::is_pinned(x));
  CHECK(rt::cuda::pin_memory(pinned).storage().data() == pinned.storage().data());  // already pinned
  const void* block = pinned.storage().data();

  const rt::cuda::Stream side = rt::cuda::Stream::create();
  Gate gate(side);
  rt::Tensor y;
  {
    rt::cuda::StreamGuard guard(side);
    y = rt::to_device(pinned, rt::Device::cuda(0), /*non_blocking=*/true);  // returns with `side` held
  }
  CHECK_FALSE(side.query());
  pinned = rt::Tensor();  // the copy has not read it yet: the block must not be handed out again
  const rt::Tensor other = rt::cuda::pin_memory(rt::zeros({1 << 16}));
  CHECK(other.storage().data() != block);
  gate.open();
  rt::cuda::Stream::current().wait_stream(side);
  CHECK(max_abs_diff(y, x) == 0.0);
  CHECK_FALSE(gate.timed_out());
}

TEST_CASE("backward runs on the forward's stream, and the caller's stream waits for it", "[gate]") {
  rt::Tensor x = rt::randn({4096}, on_gpu());
  x.requires_grad_();
  const rt::cuda::Stream side = rt::cuda::Stream::create();
  side.wait_stream(rt::cuda::Stream::current());
  rt::Tensor loss;
  {
    rt::cuda::StreamGuard guard(side);
    loss = (x * 3.0).sum();
  }
  Gate gate(side);
  loss.backward();  // from the legacy stream: the nodes go to `side`, behind the gate
  CHECK(rt::cuda::Stream::current() == rt::cuda::Stream::default_stream());  // restored
  rt::cuda::Event after;
  after.record();  // on the legacy stream, which now waits for `side`
  CHECK_FALSE(after.query());
  gate.open();
  after.synchronize();
  CHECK_FALSE(gate.timed_out());
  CHECK(max_abs_diff(x.grad(), rt::full({4096}, 3.0)) == 0.0);
}

TEST_CASE("record_stream refuses a CPU tensor") {
  CHECK_THROWS_AS(rt::cuda::record_stream(rt::ones({2}), rt::cuda::Stream::create()), rt::DeviceError);
}

// Note [Dispatch fast path]: a GPU in use adds nothing to an unobserved op; a kernel missing for
// the device is reported by its stub (rt/dispatch_stub.h), which names itself.
TEST_CASE("with tensors on the GPU, ops keep the one-load fast path and a missing kernel names itself") {
  const rt::Tensor g = rt::ones({8}).cuda();
  const rt::Tensor h = rt::relu(g * 2.0f);
  CHECK(h.is_cuda());
  CHECK(rt::detail::g_dispatch_flags.load() == 0u);
  rt::DispatchStub<void(const rt::Tensor&)> host_only{"host_only"};
  host_only.register_kernel(rt::DeviceType::CPU, [](const rt::Tensor&) {});
  try {
    host_only(h.device(), h);
    FAIL("a stub without a CUDA kernel ran on cuda:0");
  } catch (const rt::DeviceError& e) {
    CHECK(std::string(e.what()).find("host_only has no kernel for cuda:0") != std::string::npos);
  }
  host_only.clear_kernel(rt::DeviceType::CPU);
}

int main(int argc, char** argv) {
  if (!rt::cuda::is_available()) {
    std::printf("skipped: no CUDA device (%s)\n", rt::cuda::unavailable_reason().c_str());
    return 77;
  }
#if RT_TEST_CUDA_EMULATED
  if (argc == 1) {
    std::printf("CUDA emulator: the [gate] tests are left out (each stream's work is done when it is queued)\n");
    const char* args[] = {argv[0], "~[gate]"};
    return rt::testing::run_catch(2, args);
  }
#endif
  return rt::testing::run_catch(argc, argv);
}
