// Plugin ops called from C++: the shipped fused-bias-gelu (build/plugins/) and the ops fixture
// (fixtures/ops_fixture.cpp), loaded by the process's plugin manager with real dlopen. Forward against a float64
// reference, gradients against finite differences, the profiler's view, autocast, and every error path.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ops/host_tensors.h"
#include "rt/amp/autocast.h"
#include "rt/op_observer.h"
#include "rt/op_origin.h"
#include "rt/plugin_host/op_registry.h"
#include "rt/plugin_host/plugin_manager.h"
#include "testing.h"

using namespace rt::plugin;
using Catch::Matchers::Contains;

namespace {

const char* kGelu = "rtx::fused_bias_gelu";

const PluginRecord& gelu_plugin() { return load_plugin(std::string(RT_BUILD_PLUGIN_DIR) + "/fused-bias-gelu"); }
const PluginRecord& fixture_plugin() {
  return load_plugin(std::string(RT_FIXTURE_PLUGIN_DIR) + "/ops-fixture/plugin.json");
}

rt::Tensor gelu_op(const rt::Tensor& x, const rt::Tensor& b) {
  gelu_plugin();
  return call_op(kGelu, {x, b}).at(0);
}

// gelu(x + b) from the definition, in double.
rt::Tensor reference(const rt::Tensor& x, const rt::Tensor& b) {
  const std::vector<double> xv = rt::testing::values(x), bv = rt::testing::values(b);
  std::vector<double> out(xv.size());
  const size_t n = bv.size();
  for (size_t i = 0; i < xv.size(); ++i) {
    const double v = xv[i] + bv[i % n];
    out[i] = v * 0.5 * std::erfc(-v / std::sqrt(2.0));
  }
  return rt::from_vector(out, x.sizes());
}

template <typename E>
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  FAIL("no exception of the expected type");
  return {};
}

}  // namespace

TEST_CASE("fused_bias_gelu loads through the plugin manager and registers with its schema and plugin id") {
  const PluginRecord& r = gelu_plugin();
  CHECK(r.manifest.id == "org.rustytorch.fused-bias-gelu");
  CHECK(&load_plugin(std::string(RT_BUILD_PLUGIN_DIR) + "/fused-bias-gelu/libfused_bias_gelu.so") == &r);
  const OpInfo* op = find_op(kGelu);
  REQUIRE(op);
  CHECK(op->schema.str() == "fused_bias_gelu(Tensor x, Tensor b) -> Tensor");
  CHECK(op->plugin_id == "org.rustytorch.fused-bias-gelu");
  CHECK(op->differentiable());
  CHECK(op->backward_name == "FusedBiasGeluBackward0");
  CHECK(rt::op_origin(kGelu) == "org.rustytorch.fused-bias-gelu");
  CHECK(rt::op_origin("matmul").empty());
  bool listed = false;
  for (const OpInfo* o : registered_ops()) listed = listed || o == op;
  CHECK(listed);
}

TEST_CASE("fused_bias_gelu matches gelu(x + b) in float64 and float32, contiguous or not") {
  for (rt::ScalarType dt : {rt::kFloat64, rt::kFloat32}) {
    const double tol = dt == rt::kFloat64 ? 1e-13 : 2e-6;
    rt::Tensor x = rt::testing::random({37, 19}, dt, -6, 6, 1), b = rt::testing::random({19}, dt, -1, 1, 2);
    rt::testing::require_close(gelu_op(x, b).to(rt::kFloat64), reference(x, b), tol, 1e-7);
    rt::Tensor x3 = rt::testing::random({4, 5, 300}, dt, -4, 4, 3), b3 = rt::testing::random({300}, dt, -1, 1, 4);
    rt::testing::require_close(gelu_op(x3, b3).to(rt::kFloat64), reference(x3, b3), tol, 1e-7);
    rt::Tensor xt = rt::testing::random({19, 37}, dt, -3, 3, 5).t();  // not contiguous
    rt::testing::require_close(gelu_op(xt, b).to(rt::kFloat64), reference(xt.contiguous(), b), tol, 1e-7);
  }
  // A large one runs on several OpenMP threads.
  rt::Tensor x = rt::testing::random({512, 256}, rt::kFloat32, -5, 5, 6), b = rt::testing::random({256}, rt::kFloat32);
  rt::testing::require_close(gelu_op(x, b).to(rt::kFloat64), reference(x, b), 2e-6, 1e-7);
  // The plugin's own self test (what `rtorch plugin check` runs).
  const PluginRecord& r = gelu_plugin();
  REQUIRE(r.info->self_test);
  RtError error{};
  CHECK(r.info->self_test(host_api(), &error) == RT_STATUS_OK);
}

TEST_CASE("fused_bias_gelu's backward passes a float64 finite-difference gradcheck and names its node") {
  gelu_plugin();
  rt::testing::run_grad_cases({
      {"fused_bias_gelu 2-D", {{6, 7}, {7}}, [](const rt::TensorList& in) { return gelu_op(in[0], in[1]); }, -3, 3},
      {"fused_bias_gelu 3-D", {{2, 3, 4}, {4}}, [](const rt::TensorList& in) { return gelu_op(in[0], in[1]); }, -2, 2},
  });
  rt::Tensor x = rt::testing::random({3, 4}).requires_grad_(), b = rt::testing::random({4});
  rt::Tensor y = gelu_op(x, b);
  REQUIRE(y.grad_fn());
  CHECK(y.grad_fn()->name() == "FusedBiasGeluBackward0");
  y.sum().backward();
  CHECK(x.grad().defined());
  CHECK_FALSE(b.grad().defined());  // b needed no gradient
  // Under no_grad nothing is recorded.
  rt::NoGradGuard no_grad;
  CHECK_FALSE(gelu_op(x, b).grad_fn());
}

TEST_CASE("observers and the profiler see the op by its qualified name") {
  gelu_plugin();
  struct Names : rt::OpObserver {
    std::vector<std::string> seen;
    void on_op_end(const rt::OpEvent& e) override { seen.emplace_back(e.name); }
  } names;
  rt::add_op_observer(&names);
  gelu_op(rt::testing::random({2, 3}), rt::testing::random({3}));
  rt::remove_op_observer(&names);
  CHECK(std::find(names.seen.begin(), names.seen.end(), kGelu) != names.seen.end());
}

TEST_CASE("arguments are checked against the schema before the kernel runs") {
  gelu_plugin();
  fixture_plugin();
  rt::Tensor x = rt::testing::random({2, 3}), b = rt::testing::random({3});
  CHECK_THAT(message_of<rt::ValueError>([&] { call_op(kGelu, {x}); }),
             Contains("rtx::fused_bias_gelu: missing argument 'b' (position 2)"));
  CHECK_THAT(message_of<rt::ValueError>([&] { call_op(kGelu, {x, b, x}); }),
             Contains("rtx::fused_bias_gelu: takes 2 arguments (fused_bias_gelu(Tensor x, Tensor b) -> Tensor), got 3"));
  CHECK_THAT(message_of<rt::ValueError>([&] { call_op(kGelu, {x, 1.0}); }),
             Contains("argument 'b' (position 2) must be Tensor, got float"));
  CHECK_THAT(message_of<rt::ValueError>([&] { call_op(kGelu, {x, rt::Tensor()}); }),
             Contains("must be Tensor, got an undefined Tensor"));
  CHECK_THAT(message_of<rt::ValueError>([&] { call_op("rtx::nope", {x}); }),
             Contains("no plugin op named 'rtx::nope'") && Contains("rtx::fused_bias_gelu"));
  CHECK_THAT(message_of<rt::ValueError>([&] { call_op("rtx_test::combine", {x, std::monostate{}, 1.0, 2.5}); }),
             Contains("argument 'k' (position 4) must be int, got float"));
  CHECK_THAT(message_of<rt::ValueError>([&] { call_op("rtx_test::combine", {x, std::monostate{}, 1.0, int64_t(1), int64_t(1)}); }),
             Contains("argument 'negate' (position 5) must be bool, got int"));
  // The kernel's own checks come back with the plugin id, the op and the message.
  CHECK_THAT(message_of<rt::ValueError>([&] { call_op(kGelu, {x, rt::testing::random({4})}); }),
             Contains("plugin org.rustytorch.fused-bias-gelu: rtx::fused_bias_gelu (cpu kernel): fused_bias_gelu: b has 4 "
                      "elements but x's last dimension is 3"));
  CHECK_THAT(message_of<rt::NotImplementedError>([&] {
               call_op(kGelu, {rt::testing::random_int({2, 3}, 0, 3), rt::testing::random_int({3}, 0, 3)});
             }),
             Contains("int64 is not supported (float32 and float64 are)"));
}

TEST_CASE("a device without a kernel, a missing backward, and failing kernels are clear errors") {
  fixture_plugin();
  rt::Tensor x = rt::testing::random({2, 3});
  CHECK_THAT(message_of<rt::DeviceError>([&] { call_op("rtx_test::cuda_only", {x}); }),
             Contains("rtx_test::cuda_only has no CPU kernel (kernels: cuda)"));
  rt::Tensor xg = rt::testing::random({2, 3}).requires_grad_();
  CHECK_THAT(message_of<rt::AutogradError>([&] { call_op("rtx_test::no_backward", {xg}); }),
             Contains("rtx_test::no_backward: an argument requires grad, but plugin org.rustytorch.test.ops-fixture "
                      "registered no CPU backward for it (backwards: none)"));
  {
    rt::NoGradGuard no_grad;
    rt::testing::require_close(call_op("rtx_test::no_backward", {xg}).at(0), xg.detach() * 2.0, 0, 0);
  }
  CHECK_THAT(message_of<rt::ValueError>([&] { call_op("rtx_test::fails", {x}); }),
             Contains("plugin org.rustytorch.test.ops-fixture: rtx_test::fails (cpu kernel): fails: this kernel always "
                      "fails (as asked)"));
  CHECK_THAT(message_of<rt::Error>([&] { call_op("rtx_test::throws", {x}); }),
             Contains("rtx_test::throws (cpu kernel): throws: a std::logic_error from the kernel"));
  rt::Tensor xb = rt::testing::random({2, 3}).requires_grad_();
  rt::Tensor out = call_op("rtx_test::bad_backward", {xb}).at(0);
  CHECK_THAT(message_of<rt::ValueError>([&] { out.sum().backward(); }),
             Contains("plugin org.rustytorch.test.ops-fixture: rtx_test::bad_backward (cpu backward): bad_backward: "
                      "fails after setting a gradient"));
  rt::Tensor y = rt::testing::random({3}, rt::kFloat32);
  CHECK_THAT(message_of<rt::Error>([&] { call_op("rtx_test::bad_alias", {y}); }),
             Contains("the schema says result 0 is argument 'self' (position 1), but its kernel returned a new tensor"));
}

TEST_CASE("an in-place op writes its argument, returns it, and bumps its version") {
  fixture_plugin();
  rt::Tensor y = rt::tensor({1.f, 2.f, 3.f});
  const uint32_t v0 = y.version();
  rt::Tensor out = call_op("rtx_test::scale_", {y}).at(0);  // alpha defaults to 2.0
  CHECK(out.is_same(y));
  CHECK(y.version() > v0);
  CHECK(rt::testing::values(y) == std::vector<double>{2, 4, 6});
  call_op("rtx_test::scale_", {y, int64_t(3)});  // an int for a float argument
  CHECK(rt::testing::values(y) == std::vector<double>{6, 12, 18});
  // A leaf that requires grad is never written in place (PyTorch's rule), and stays as it was.
  rt::Tensor leaf = rt::tensor({1.f, 2.f}).requires_grad_();
  CHECK_THAT(message_of<rt::AutogradError>([&] { call_op("rtx_test::scale_", {leaf}); }),
             Contains("rtx_test::scale_: argument 'self' (position 1) is a leaf tensor that requires grad"));
  CHECK(rt::testing::values(leaf) == std::vector<double>{1, 2});
  // On a non-leaf that requires grad the op would need a backward, which scale_ lacks: refused before it runs.
  rt::Tensor w = rt::tensor({1.f, 2.f}).requires_grad_();
  rt::Tensor nonleaf = w * 1.f;
  CHECK_THAT(message_of<rt::AutogradError>([&] { call_op("rtx_test::scale_", {nonleaf}); }),
             Contains("registered no CPU backward"));
  {
    rt::NoGradGuard no_grad;
    call_op("rtx_test::scale_", {leaf});
  }
  CHECK(rt::testing::values(leaf) == std::vector<double>{2, 4});
}

TEST_CASE("tuple results, optional tensors, defaults, and zeros for a result that got no gradient") {
  fixture_plugin();
  rt::Tensor x = rt::tensor({1.0, 2.0}).requires_grad_(), w = rt::tensor({10.0, 20.0}).requires_grad_();
  auto r = call_op("rtx_test::combine", {x});
  REQUIRE(r.size() == 2);
  CHECK(rt::testing::values(r[0]) == std::vector<double>{3, 4});  // x + 0 + k=2
  CHECK(rt::testing::values(r[1]) == std::vector<double>{1, 4});
  auto s = call_op("rtx_test::combine", {x, w, 0.5, int64_t(1), true});
  CHECK(rt::testing::values(s[0]) == std::vector<double>{-11.5, -22});
  CHECK(s[0].grad_fn() == s[1].grad_fn());
  CHECK(s[0].grad_fn()->name() == "CombineBackward0");
  s[0].sum().backward();  // the second result got no gradient: the backward sees zeros
  CHECK(rt::testing::values(x.grad()) == std::vector<double>{-0.5, -0.5});
  CHECK(rt::testing::values(w.grad()) == std::vector<double>{-1, -1});
}

TEST_CASE("autocast applies the op's declared policy inside a region only") {
  fixture_plugin();
  rt::Tensor x = rt::testing::random({2, 2}, rt::kFloat32);
  CHECK(call_op("rtx_test::lowp", {x}).at(0).item<int64_t>() == RT_DTYPE_FLOAT32);
  {
    rt::amp::AutocastGuard autocast(rt::DeviceType::CPU);
    CHECK(call_op("rtx_test::lowp", {x}).at(0).item<int64_t>() == RT_DTYPE_BFLOAT16);
    // float64 is never cast; ops without a policy run as called.
    CHECK(call_op("rtx_test::lowp", {x.to(rt::kFloat64)}).at(0).item<int64_t>() == RT_DTYPE_FLOAT64);
    CHECK(gelu_op(x, rt::testing::random({2}, rt::kFloat32)).dtype() == rt::kFloat32);
  }
}

TEST_CASE("registering a library with a bad schema, a clash or no kernel fails naming the op") {
  static const RtOpDef bad_schema[] = {{.struct_size = sizeof(RtOpDef), .schema = "broken(Tensor x -> Tensor",
                                        .kernels = {+[](const RtOpCall*, RtError*) { return RT_STATUS_OK; }, nullptr}}};
  RtOpLibrary lib{sizeof(RtOpLibrary), "rtx_bad", bad_schema, 1};
  CHECK_THAT(message_of<std::runtime_error>([&] { register_op_library(lib, "org.test.bad"); }),
             Contains("plugin org.test.bad: op 0 of namespace 'rtx_bad': op schema 'broken(Tensor x -> Tensor'"));
  static const RtOpDef no_kernel[] = {{.struct_size = sizeof(RtOpDef), .schema = "k(Tensor x) -> Tensor"}};
  RtOpLibrary lib2{sizeof(RtOpLibrary), "rtx_bad", no_kernel, 1};
  CHECK_THAT(message_of<std::runtime_error>([&] { register_op_library(lib2, "org.test.bad"); }),
             Contains("rtx_bad::k: no kernel for any device"));
  gelu_plugin();
  static const RtOpDef clash[] = {{.struct_size = sizeof(RtOpDef), .schema = "fused_bias_gelu(Tensor x) -> Tensor",
                                   .kernels = {+[](const RtOpCall*, RtError*) { return RT_STATUS_OK; }, nullptr}}};
  RtOpLibrary lib3{sizeof(RtOpLibrary), "rtx", clash, 1};
  CHECK_THAT(message_of<std::runtime_error>([&] { register_op_library(lib3, "org.test.clash"); }),
             Contains("op rtx::fused_bias_gelu exists already (registered by org.rustytorch.fused-bias-gelu)"));
  RtOpLibrary lib4{sizeof(RtOpLibrary), "Bad-NS", clash, 1};
  CHECK_THAT(message_of<std::runtime_error>([&] { register_op_library(lib4, "org.test.clash"); }),
             Contains("op namespace 'Bad-NS' must be lowercase letters"));
  CHECK(find_op("rtx_bad::broken") == nullptr);
}

TEST_CASE("the host's tensor functions keep exceptions on the host side") {
  const RtHostApi* api = host_api();
  RtError error{};
  RtTensor* out = nullptr;
  const int64_t sizes[] = {2, 3};
  CHECK(api->tensor_empty(2, sizes, 42, RtDevice{RT_DEVICE_CPU, 0}, &out, &error) == RT_STATUS_INVALID_ARGUMENT);
  CHECK_THAT(std::string(error.message), Contains("RtDType 42 is not one abi.h defines"));
  CHECK(out == nullptr);
  const int64_t negative[] = {2, -1};
  CHECK(api->tensor_empty(2, negative, RT_DTYPE_FLOAT32, RtDevice{RT_DEVICE_CPU, 0}, &out, &error) ==
        RT_STATUS_INVALID_ARGUMENT);
  CHECK_THAT(std::string(error.message), Contains("size -1 of dimension 1 is negative"));
  CHECK(api->tensor_empty(2, sizes, RT_DTYPE_FLOAT64, RtDevice{7, 0}, &out, &error) == RT_STATUS_INVALID_ARGUMENT);
  CHECK_THAT(std::string(error.message), Contains("RtDevice type 7"));
  REQUIRE(api->tensor_empty(2, sizes, RT_DTYPE_FLOAT64, RtDevice{RT_DEVICE_CPU, 0}, &out, &error) == RT_STATUS_OK);
  CHECK(api->tensor_dim(out) == 2);
  CHECK(api->tensor_sizes(out)[1] == 3);
  CHECK(api->tensor_strides(out)[0] == 3);
  CHECK(api->tensor_numel(out) == 6);
  CHECK(api->tensor_dtype(out) == RT_DTYPE_FLOAT64);
  CHECK(api->tensor_device(out).type == RT_DEVICE_CPU);
  api->tensor_release(out);

  rt::Tensor t = rt::testing::random({3, 4}).t();
  RtTensor* lent = new_tensor_handle(t);
  RtTensor* c = nullptr;
  REQUIRE(api->tensor_contiguous(lent, &c, &error) == RT_STATUS_OK);
  CHECK(c != lent);
  CHECK(api->tensor_strides(c)[0] == 3);
  CHECK(static_cast<double*>(api->tensor_data(c))[1] == t.contiguous().data_ptr<double>()[1]);
  api->tensor_release(c);
  take_tensor_handle(lent);
}
