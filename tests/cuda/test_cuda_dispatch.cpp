// CPU-side checks of the CUDA dispatch: what a machine without a GPU reports, and how ops treat a
// tensor whose storage is labelled cuda:0. Such a tensor is made here from host memory with
// rt::Storage::external (a real engine path, no mock): the engine must reject it by device
// (mixed with CPU operands, or an op without a CUDA path, or raw host access) before any kernel
// or CPU loop touches its bytes. Runs in CUDA builds and in builds without CUDA (the sanitizer stage).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "rt/cuda.h"
#include "rt/rt.h"

using Catch::Matchers::Contains;

namespace {

// A contiguous tensor of `shape` whose storage says cuda:0 but holds zeroed host memory.
rt::Tensor labelled_cuda(const rt::Shape& shape, rt::ScalarType dt = rt::kFloat32) {
  const int64_t n = rt::numel_of(shape);
  const size_t bytes = size_t(n) * rt::element_size(dt);
  void* host = std::calloc(bytes > 0 ? bytes : 1, 1);
  auto impl = std::make_shared<rt::TensorImpl>();
  impl->storage = rt::Storage::external(host, bytes, rt::Device::cuda(0), [](void* p) { std::free(p); });
  impl->sizes = {n};
  impl->strides = {1};
  impl->dtype = dt;
  return rt::make_view(rt::Tensor(std::move(impl)), shape, rt::contiguous_strides(shape), 0);
}

// The message of the rt::DeviceError that f throws; fails the test on anything else.
template <typename F>
std::string device_error(F&& f) {
  try {
    f();
  } catch (const rt::DeviceError& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL("expected rt::DeviceError, got another exception: " << e.what());
  }
  FAIL("expected rt::DeviceError, nothing was thrown");
  return {};
}

// What a GPU-less machine says, in this build: the probe's error or "not built".
std::string expected_cause() { return rt::cuda::is_built() ? "cudaGetDeviceCount" : "was not built"; }

}  // namespace

TEST_CASE("is_built reports how the engine was built", "[cuda][dispatch]") {
  CHECK(rt::cuda::is_built() == bool(RT_TEST_CUDA_BUILT));
  CHECK(rt::cuda::version_string() != "");
}

TEST_CASE("without a device: unavailable, with the reason named", "[cuda][dispatch]") {
  if (rt::cuda::is_available()) {
    WARN("a CUDA device is present (" << rt::cuda::device_properties(0).name << "): the no-device checks do not apply");
    return;
  }
  CHECK(rt::cuda::device_count() == 0);
  const std::string reason = rt::cuda::unavailable_reason();
  CHECK_THAT(reason, Contains(expected_cause()));
  if (RT_TEST_CUDA_EMULATED)  // a build that emulates CUDA says how to get an emulated device
    CHECK_THAT(reason, Contains("CPU emulator") && Contains("RT_CUDA_EMULATED_DEVICES=1"));

  SECTION("allocating on cuda:0 throws DeviceError carrying the reason") {
    CHECK_THAT(device_error([] { rt::make_tensor({2, 3}, rt::kFloat32, rt::Device::cuda(0)); }), Contains(reason));
    CHECK_THAT(device_error([] { rt::zeros({4}, rt::TensorOptions().with_device(rt::Device::cuda(0))); }), Contains(reason));
    CHECK_THAT(device_error([] { rt::randn({4}, rt::TensorOptions().with_device(rt::Device::cuda(0))); }), Contains(reason));
  }
  SECTION("copying to cuda:0 throws DeviceError carrying the reason") {
    const rt::Tensor x = rt::randn({3, 2});
    CHECK_THAT(device_error([&] { x.to(rt::Device::cuda(0)); }), Contains(reason));
    CHECK_THAT(device_error([&] { x.t().cuda(); }), Contains(reason));
  }
  SECTION("device queries that need a GPU throw; memory statistics are 0; empty_cache is harmless") {
    CHECK_THAT(device_error([] { rt::cuda::set_device(0); }), Contains(rt::cuda::is_built() ? reason : "not built"));
    CHECK_THAT(device_error([] { rt::cuda::synchronize(); }), Contains(rt::cuda::is_built() ? reason : "not built"));
    CHECK(rt::cuda::memory_allocated() == 0);
    CHECK(rt::cuda::memory_allocated(0) == 0);
    CHECK(rt::cuda::max_memory_allocated(0) == 0);
    CHECK(rt::cuda::memory_reserved(0) == 0);
    CHECK(rt::cuda::max_memory_reserved(0) == 0);
    CHECK_NOTHROW(rt::cuda::reset_peak_memory_stats(0));
    CHECK_NOTHROW(rt::cuda::empty_cache());
    CHECK(rt::cuda::memory_reserved() == 0);
    const rt::cuda::MemoryStats stats = rt::cuda::memory_stats(0);
    CHECK((stats.allocated_bytes == 0 && stats.reserved_bytes == 0 && stats.segments == 0 && stats.ooms == 0));
    CHECK_THAT(device_error([] { rt::cuda::mem_get_info(); }), Contains(rt::cuda::is_built() ? reason : "not built"));
    CHECK_THAT(device_error([] { rt::cuda::Stream::current(); }), Contains(rt::cuda::is_built() ? reason : "not built"));
  }
  SECTION("streams and events need a device") {
    const std::string why = rt::cuda::is_built() ? reason : "not built";
    CHECK_THAT(device_error([] { rt::cuda::Stream::create(); }), Contains(why));
    CHECK_THAT(device_error([] { rt::cuda::Stream::create(0, -1); }), Contains(why));
    CHECK_THAT(device_error([] { rt::cuda::Stream::default_stream(); }), Contains(why));
    CHECK_THAT(device_error([] { rt::cuda::Event e(true); }), Contains(why));
  }
}

TEST_CASE("a cuda:0 tensor mixed with a CPU tensor: DeviceError naming the op, devices and shapes", "[cuda][dispatch]") {
  const rt::Tensor g = labelled_cuda({2, 3});
  REQUIRE(g.is_cuda());
  REQUIRE(g.device().str() == "cuda:0");

  SECTION("add, either order") {
    const std::string m = device_error([&] { rt::add(g, rt::ones({2, 3})); });
    CHECK_THAT(m, Contains("add") && Contains("cuda:0") && Contains("cpu") && Contains("[2, 3]"));
    CHECK_THAT(m, Contains(".to("));  // the hint: move one of them
    const std::string r = device_error([&] { rt::mul(rt::ones({3}), g); });
    CHECK_THAT(r, Contains("mul") && Contains("cuda:0") && Contains("cpu") && Contains("[3]") && Contains("[2, 3]"));
  }
  SECTION("a 1-element CPU tensor of rank 1 is not a Python number") {
    CHECK_THAT(device_error([&] { rt::sub(g, rt::ones({1})); }), Contains("sub") && Contains("[1]") && Contains("cuda:0"));
  }
  SECTION("matmul") {
    const std::string m = device_error([&] { rt::matmul(g, rt::ones({3, 4})); });
    CHECK_THAT(m, Contains("matmul") && Contains("cuda:0") && Contains("cpu") && Contains("[2, 3]") && Contains("[3, 4]"));
  }
  SECTION("cat") {
    const std::string m = device_error([&] { rt::cat({rt::ones({1, 3}), g}, 0); });
    CHECK_THAT(m, Contains("cat") && Contains("cuda:0") && Contains("cpu"));
  }
  SECTION("cross_entropy with the target on the CPU") {
    const rt::Tensor logits = labelled_cuda({4, 5});
    const std::string m = device_error([&] { rt::cross_entropy(logits, rt::zeros({4}, rt::kInt64)); });
    CHECK_THAT(m, Contains("cross_entropy") && Contains("cuda:0") && Contains("cpu") && Contains("[4, 5]") && Contains("[4]"));
  }
  SECTION("where and masked_fill with a CPU mask") {
    CHECK_THAT(device_error([&] { rt::where(rt::ones({2, 3}, rt::kBool), g, g); }), Contains("where") && Contains("cuda:0"));
    CHECK_THAT(device_error([&] { rt::masked_fill(g, rt::ones({2, 3}, rt::kBool), 0.0); }),
               Contains("masked_fill") && Contains("cuda:0") && Contains("cpu"));
  }
  SECTION("linear with the weight on the CPU") {
    CHECK_THAT(device_error([&] { rt::linear(g, rt::ones({4, 3})); }), Contains("cuda:0") && Contains("cpu"));
  }
}

TEST_CASE("index ops with operands on two devices: DeviceError naming the op", "[cuda][dispatch]") {
  const rt::Tensor g = labelled_cuda({3, 4});
  const rt::Tensor cpu_index = rt::zeros({3, 4}, rt::kInt64);
  CHECK_THAT(device_error([&] { rt::gather(g, 1, cpu_index); }), Contains("gather") && Contains("cuda:0") && Contains("cpu"));
  CHECK_THAT(device_error([&] { rt::scatter_add(g, 0, cpu_index, g); }),
             Contains("scatter_add") && Contains("cuda:0") && Contains("cpu") && Contains("[3, 4]"));
  CHECK_THAT(device_error([&] { rt::index_select(g, 0, rt::zeros({2}, rt::kInt64)); }),
             Contains("index_select") && Contains("cuda:0") && Contains("cpu"));
  // Unlike elementwise ops, index ops take no 0-dim CPU operand next to a GPU one (as in PyTorch).
  CHECK_THAT(device_error([&] { rt::index_select(g, 0, rt::scalar_tensor(int64_t(1), rt::kInt64)); }),
             Contains("index_select") && Contains("same device"));
}

TEST_CASE("index ops on cuda:0 tensors take the CUDA path: without a device, the allocation says why", "[cuda][dispatch]") {
  if (rt::cuda::is_available()) return;  // with a GPU the kernels would be handed host memory
  // Shapes and dtypes are checked first, on the host, as on the CPU ...
  const rt::Tensor g = labelled_cuda({3, 4});
  CHECK_THROWS_AS(rt::gather(g, 1, labelled_cuda({3}, rt::kInt64)), rt::ShapeError);
  CHECK_THROWS_AS(rt::index_select(g, 0, labelled_cuda({2}, rt::kFloat32)), rt::DTypeError);
  // ... then the op goes to the CUDA backend, never to a CPU loop over device memory.
  const std::string cause = expected_cause();
  CHECK_THAT(device_error([&] { rt::gather(g, 1, labelled_cuda({3, 2}, rt::kInt64)); }), !Contains("no CUDA implementation") && Contains(cause));
  CHECK_THAT(device_error([&] { rt::index_select(g, 0, labelled_cuda({2}, rt::kInt32)); }), Contains(cause));
  CHECK_THAT(device_error([&] { rt::scatter_add(g, 1, labelled_cuda({3, 2}, rt::kInt64), g); }), Contains(cause));
  CHECK_THAT(device_error([&] { rt::one_hot(labelled_cuda({5}, rt::kInt64), 3); }), !Contains("no CUDA implementation") && Contains(cause));
}

TEST_CASE("reductions, losses and pooling on cuda:0 take the CUDA path, kernels or composed ops", "[cuda][dispatch]") {
  if (rt::cuda::is_available()) return;  // with a GPU the kernels would be handed host memory
  const rt::Tensor x = labelled_cuda({2, 3, 4, 4});
  const std::string cause = expected_cause();
  auto on_cuda_path = [&](auto&& f) {
    const std::string m = device_error(f);
    CHECK_THAT(m, !Contains("no CUDA implementation") && Contains(cause));
  };
  on_cuda_path([&] { rt::var(x, {1}); });
  on_cuda_path([&] { rt::std(x); });
  on_cuda_path([&] { rt::prod(x, 2); });
  on_cuda_path([&] { rt::all(x); });
  on_cuda_path([&] { rt::any(x, 0); });
  on_cuda_path([&] { rt::logsumexp(x, {3}); });
  on_cuda_path([&] { rt::mse_loss(x, labelled_cuda({4})); });
  on_cuda_path([&] { rt::binary_cross_entropy_with_logits(x, labelled_cuda({2, 3, 4, 4})); });
  on_cuda_path([&] { rt::adaptive_avg_pool2d(x, {3, 2}); });
  // Shapes are still checked first, on the host.
  CHECK_THROWS_AS(rt::mse_loss(x, labelled_cuda({5})), rt::ShapeError);
  CHECK_THROWS_AS(rt::var(labelled_cuda({3}, rt::kInt64)), rt::DTypeError);
}

TEST_CASE("a 0-dim CPU tensor may join a cuda:0 operand, as a Python number does", "[cuda][dispatch]") {
  if (rt::cuda::is_available()) return;  // with a GPU this would launch a kernel on host memory
  // Dispatch accepts the pair and goes on to the CUDA path, which then fails for want of a device
  // (allocating the result) - not with a device-mismatch error.
  const rt::Tensor g = labelled_cuda({2, 3});
  const std::string m = device_error([&] { rt::add(g, rt::scalar_to_tensor(2.0)); });
  CHECK_THAT(m, !Contains("same device"));
  CHECK_THAT(m, Contains(rt::cuda::is_built() ? "cudaGetDeviceCount" : "not built"));
}

// Keeps op names tracked while it lives: the engine names the current op only when someone
// observes dispatch (a profiler, the debugger or anomaly mode - none here; using a GPU does not).
struct ObservedOps : rt::OpObserver {
  ObservedOps() { rt::add_op_observer(this); }
  ~ObservedOps() override { rt::remove_op_observer(this); }
  void on_op_end(const rt::OpEvent&) override {}
};

TEST_CASE("an op without a CUDA path refuses a cuda:0 tensor instead of reading its memory", "[cuda][dispatch]") {
  // What every CPU-only op does: inside its OpGuard it asks for raw_data(), which refuses a GPU
  // tensor. Shown with the guard itself, so the test holds whichever ops have a CUDA path by now
  // (tests/cuda/op_check/main.cpp lists the ones that do not).
  const rt::Tensor img = labelled_cuda({1, 1, 4, 4});
  auto cpu_only_op = [&] {
    rt::OpGuard guard("cpu_only_op", img);
    return img.raw_data();
  };
  SECTION("the message names the shape, the device and the fix") {
    const std::string m = device_error(cpu_only_op);
    CHECK_THAT(m, Contains("has no CUDA implementation yet") && Contains("[1, 1, 4, 4]") && Contains("cuda:0") &&
                      Contains(".cpu()"));
  }
  SECTION("with dispatch observed, it names the op") {
    ObservedOps observing;
    CHECK_THAT(device_error(cpu_only_op), Contains("cpu_only_op has no CUDA implementation yet"));
  }
}

TEST_CASE("host access to a cuda:0 tensor throws instead of dereferencing device memory", "[cuda][dispatch]") {
  const rt::Tensor g = labelled_cuda({2, 3});
  CHECK_THAT(device_error([&] { g.raw_data(); }), Contains("has no CUDA implementation yet") && Contains("[2, 3]") && Contains("cuda:0"));
  CHECK_THAT(device_error([&] { g.data_ptr<float>(); }), Contains("cuda:0"));
  CHECK_THROWS_AS(g.data_ptr<double>(), rt::DTypeError);  // the dtype is checked first
  CHECK_NOTHROW(g.device_data());                         // the unchecked address, for kernels
  CHECK(g.device_data() == g.storage().data());
}

TEST_CASE("item() and str() of a cuda:0 tensor go through CUDA: an rt::Error without a device", "[cuda][dispatch]") {
  if (rt::cuda::is_available()) return;  // with a GPU, cudaMemcpy would be handed host memory
  const rt::Tensor one = labelled_cuda({1});
  CHECK_THROWS_AS(one.item(), rt::Error);
  CHECK_THROWS_AS(one.item<float>(), rt::Error);
  CHECK_THROWS_AS(one.str(), rt::Error);
  CHECK_THROWS_AS(labelled_cuda({2, 2}).t().cpu(), rt::Error);
  CHECK_THROWS_AS(labelled_cuda({3}).to_vector<float>(), rt::Error);
}
