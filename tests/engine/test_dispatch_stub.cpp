// The kernel table (rt/dispatch_stub.h): registration per device type, the one error for a
// missing kernel, the listing, and what the engine's own stubs have registered in this build.
#include <catch2/catch.hpp>
#include <algorithm>
#include <functional>
#include <string>

#include "ops/dispatch_stubs.h"
#include "rt/cuda.h"
#include "rt/dispatch_stub.h"
#include "rt/op_observer.h"
#include "rt/rt.h"

using Catch::Matchers::Contains;

namespace {

using ScaleKernel = void(const rt::Tensor& out, const rt::Tensor& x, double factor);

void scale_cpu(const rt::Tensor& out, const rt::Tensor& x, double factor) {
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) o[i] = float(in[i] * factor);
}

int g_other_calls = 0;
void scale_other(const rt::Tensor&, const rt::Tensor&, double) { ++g_other_calls; }

// Registered from this file's static initialiser, as a plugin or backend does.
constinit rt::DispatchStub<ScaleKernel> scale_stub{"test_scale"};
RT_REGISTER_KERNEL(scale_stub, rt::DeviceType::CPU, scale_cpu);

std::string device_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const rt::DeviceError& e) {
    return e.what();
  }
  FAIL("expected rt::DeviceError");
  return {};
}

struct ObservedOps : rt::OpObserver {
  ObservedOps() { rt::add_op_observer(this); }
  ~ObservedOps() override { rt::remove_op_observer(this); }
  void on_op_end(const rt::OpEvent&) override {}
};

}  // namespace

TEST_CASE("a stub runs the kernel registered for the device's type", "[dispatch]") {
  const rt::Tensor x = rt::arange(4, rt::kFloat32);
  const rt::Tensor out = rt::empty({4});
  REQUIRE(scale_stub.has_kernel(rt::DeviceType::CPU));  // the static registration ran before main
  scale_stub(rt::Device::cpu(), out, x, 2.5);
  CHECK(out.data_ptr<float>()[3] == 7.5f);
  CHECK(scale_stub.kernel_devices() == "cpu");
}

TEST_CASE("a device without a kernel gets one DeviceError naming the kernel, the device and what exists", "[dispatch]") {
  const rt::Tensor x = rt::arange(4, rt::kFloat32);
  const std::string m = device_error([&] { scale_stub(rt::Device::cuda(0), x, x, 1.0); });
  CHECK_THAT(m, Contains("test_scale has no kernel for cuda:0") && Contains("(kernels: cpu)") && Contains(".cpu()"));
  SECTION("inside an observed op, the op is named too") {
    ObservedOps observing;
    rt::OpGuard guard("my_op", x);
    CHECK_THAT(device_error([&] { scale_stub(rt::Device::cuda(0), x, x, 1.0); }), Contains("(in my_op)"));
  }
  SECTION("inside a module, the module is named") {
    rt::ModuleScope scope("encoder");
    CHECK_THAT(device_error([&] { scale_stub(rt::Device::cuda(0), x, x, 1.0); }), Contains("encoder"));
  }
}

TEST_CASE("a slot takes one kernel: a second registration is refused until the first is cleared", "[dispatch]") {
  rt::DispatchStub<ScaleKernel> stub{"test_twice"};
  stub.register_kernel(rt::DeviceType::CUDA, scale_other);
  try {
    stub.register_kernel(rt::DeviceType::CUDA, scale_other);
    FAIL("a second kernel for the same device type was accepted");
  } catch (const rt::Error& e) {
    CHECK_THAT(std::string(e.what()), Contains("test_twice already has a kernel for cuda") && Contains("clear_kernel"));
  }
  CHECK_THROWS_AS(stub.register_kernel(rt::DeviceType::CPU, nullptr), rt::ValueError);
  const rt::Tensor t = rt::zeros({1});
  g_other_calls = 0;
  stub(rt::Device::cuda(1), t, t, 0.0);  // the slot is per device type, any index
  CHECK(g_other_calls == 1);
  stub.clear_kernel(rt::DeviceType::CUDA);
  CHECK_FALSE(stub.has_kernel(rt::DeviceType::CUDA));
  CHECK_THROWS_AS(stub(rt::Device::cuda(0), t, t, 0.0), rt::DeviceError);
  stub.register_kernel(rt::DeviceType::CUDA, scale_other);  // a reloaded plugin registers again
  CHECK(stub.has_kernel(rt::DeviceType::CUDA));
  stub.clear_kernel(rt::DeviceType::CUDA);
}

TEST_CASE("kernel_table lists registered stubs by name with their device types", "[dispatch]") {
  const auto table = rt::kernel_table();
  const auto row = std::find_if(table.begin(), table.end(), [](const auto& r) { return r.name == "test_scale"; });
  REQUIRE(row != table.end());
  CHECK(row->devices == std::vector<rt::DeviceType>{rt::DeviceType::CPU});
  CHECK(std::is_sorted(table.begin(), table.end(), [](const auto& a, const auto& b) { return a.name < b.name; }));
}

TEST_CASE("the engine's stubs: the CUDA backend registers a kernel for every one, a build without it none",
          "[dispatch]") {
  const auto stubs = rt::dispatch::engine_stubs();
  REQUIRE(stubs.size() >= 39);
  for (const auto* s : stubs) {
    INFO(s->name());
    CHECK(s->has_kernel(rt::DeviceType::CUDA) == rt::cuda::is_built());
  }
  using Stub = const rt::detail::DispatchStubBase*;
  for (Stub s : {Stub(&rt::dispatch::matmul), Stub(&rt::dispatch::clamp), Stub(&rt::dispatch::where),
                 Stub(&rt::dispatch::fill), Stub(&rt::dispatch::softmax), Stub(&rt::dispatch::softmax_backward),
                 Stub(&rt::dispatch::layer_norm), Stub(&rt::dispatch::random_fill)}) {
    INFO(s->name());
    CHECK(s->has_kernel(rt::DeviceType::CPU));  // ops that call their stub on every device
  }
  if (!rt::cuda::is_built()) {
    const rt::Tensor t = rt::zeros({2});
    CHECK_THAT(device_error([&] { rt::dispatch::softmax(rt::Device::cuda(0), t, t, 0, false); }),
               Contains("softmax has no kernel for cuda:0"));
  }
}

TEST_CASE("a destroyed stub leaves the table (a plugin's library unloading)", "[dispatch]") {
  auto listed = [](const std::string& name) {
    const auto table = rt::kernel_table();
    return std::any_of(table.begin(), table.end(), [&](const auto& r) { return r.name == name; });
  };
  {
    rt::DispatchStub<ScaleKernel> stub{"test_scoped"};
    stub.register_kernel(rt::DeviceType::CPU, scale_cpu);
    CHECK(listed("test_scoped"));
  }
  CHECK_FALSE(listed("test_scoped"));
}
