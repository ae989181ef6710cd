// rt/plugin_host/op_checks.h: the checks `rtorch plugin check` runs on ops, against the shipped fused-bias-gelu
// (which passes them) and fixture ops that lie in their schema or their backward.
#include <catch2/catch.hpp>

#include <string>

#include "rt/cuda.h"
#include "rt/plugin_host/op_checks.h"
#include "rt/plugin_host/op_registry.h"
#include "rt/plugin_host/plugin_manager.h"
#include "testing.h"

using namespace rt::plugin;
using Catch::Matchers::Contains;

namespace {

const OpInfo& op_named(const char* name) {
  load_plugin(std::string(RT_BUILD_PLUGIN_DIR) + "/fused-bias-gelu");
  load_plugin(std::string(RT_FIXTURE_PLUGIN_DIR) + "/ops-fixture");
  const OpInfo* op = find_op(name);
  REQUIRE(op);
  return *op;
}

}  // namespace

TEST_CASE("fused_bias_gelu passes every op check on sample arguments found for it") {
  const OpInfo& op = op_named("rtx::fused_bias_gelu");
  auto sample = find_sample_arguments(op);
  REQUIRE(sample.has_value());
  REQUIRE(sample->size() == 2);
  CHECK(std::get<rt::Tensor>((*sample)[0]).dim() == 2);  // x [3, 4] and b [4]: the second pattern
  CHECK(std::get<rt::Tensor>((*sample)[1]).dim() == 1);
  for (const OpCheck& c : check_op(op, *sample)) {
    INFO(c.name << ": " << c.detail);
    CHECK(c.passed);
  }
  CHECK(op_gradcheck(op, *sample).detail.find("agree") != std::string::npos);
}

TEST_CASE("an op that writes an argument its schema does not mark (a!) fails the mutation check") {
  const OpInfo& op = op_named("rtx_test::sneaky");
  auto sample = find_sample_arguments(op);
  REQUIRE(sample.has_value());
  OpCheck c = check_op_schema_mutation(op, *sample);
  CHECK_FALSE(c.passed);
  CHECK_THAT(c.detail, Contains("the op wrote argument 'x', which its schema does not mark Tensor(a!)"));
  // An honest in-place op passes.
  const OpInfo& scale = op_named("rtx_test::scale_");
  CHECK(check_op_schema_mutation(scale, {rt::testing::random({3}, rt::kFloat32)}).passed);
  CHECK(check_op_schema_aliasing(scale, {rt::testing::random({3}, rt::kFloat32)}).passed);
}

TEST_CASE("a result sharing an argument's memory without Tensor(a) fails the aliasing check") {
  const OpInfo& op = op_named("rtx_test::leaky");
  OpCheck c = check_op_schema_aliasing(op, {rt::testing::random({2, 2})});
  CHECK_FALSE(c.passed);
  CHECK_THAT(c.detail, Contains("result 0 shares memory with argument 'x'"));
}

TEST_CASE("a wrong backward fails gradcheck, a missing one fails 'autograd registered'") {
  OpCheck g = op_gradcheck(op_named("rtx_test::wrong_grad"), {rt::testing::random({2, 3})});
  CHECK_FALSE(g.passed);
  CHECK_THAT(g.detail, Contains("argument 'x', element 0: backward gives"));
  OpCheck a = check_op_autograd_registered(op_named("rtx_test::no_backward"), {rt::testing::random({2})});
  CHECK_FALSE(a.passed);
  CHECK_THAT(a.detail, Contains("no CPU backward"));
  OpCheck skipped = op_gradcheck(op_named("rtx_test::no_backward"), {rt::testing::random({2})});
  CHECK(skipped.skipped);
}

TEST_CASE("an op whose kernel refuses every sample has none, and a throwing op fails its check with the message") {
  CHECK_FALSE(find_sample_arguments(op_named("rtx_test::fails")).has_value());
  CHECK_FALSE(find_sample_arguments(op_named("rtx_test::cuda_only")).has_value());
  OpCheck c = check_op_schema_mutation(op_named("rtx_test::fails"), {rt::testing::random({2})});
  CHECK_FALSE(c.passed);
  CHECK_THAT(c.detail, Contains("the op threw: ") && Contains("this kernel always fails"));
}

TEST_CASE("on a CUDA device (a GPU, or the emulator's) the CUDA kernels agree with the CPU ones") {
  const OpInfo& op = op_named("rtx::fused_bias_gelu");
  auto sample = find_sample_arguments(op);
  REQUIRE(sample.has_value());
  OpCheck c = check_op_cpu_vs_cuda(op, *sample);
  INFO(c.detail);
  CHECK(c.passed);
  if (!rt::cuda::is_available()) {
    CHECK(c.skipped);
    WARN("no CUDA device: the CUDA kernels were not run (RT_CUDA_EMULATED_DEVICES=1 shows the emulator's)");
    return;
  }
  CHECK_FALSE(c.skipped);
  rt::Tensor x = rt::testing::random({8, 300}, rt::kFloat32).cuda().requires_grad_();
  rt::Tensor b = rt::testing::random({300}, rt::kFloat32).cuda().requires_grad_();
  rt::Tensor y = call_op(op, {x, b}).at(0);
  CHECK(y.is_cuda());
  y.sum().backward();
  CHECK(b.grad().is_cuda());
  try {
    call_op("rtx_test::no_backward", {x.detach()});
    FAIL("no error");
  } catch (const rt::DeviceError& e) {
    CHECK_THAT(std::string(e.what()), Contains("rtx_test::no_backward has no CUDA kernel (kernels: cpu)"));
  }
}
