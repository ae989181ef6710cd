// Automatic mixed precision: which ops autocast casts, and when not (float64, other device
// types, nested ops, backward, exclusion, other threads); the parameter cast cache; and the
// loss-scaling steps (unscale with the inf/NaN check, scale update).
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <thread>

#include "testing.h"

using namespace rt;
using rt::testing::random;
using rt::testing::require_close;

namespace {
struct CastCounter : OpObserver {
  int casts = 0;
  void on_op_end(const OpEvent& e) override {
    if (std::string(e.name) == "to") ++casts;
  }
};

Tensor f32(const Shape& shape, uint64_t seed, bool requires_grad = false) {
  Tensor t = random(shape, kFloat32, -1, 1, seed);
  if (requires_grad) t.requires_grad_(true);
  return t;
}

bool autocast_flag_set() {
  return (detail::g_dispatch_flags.load() & detail::kAutocast) != 0;
}
}  // namespace

TEST_CASE("autocast is off by default and costs nothing then") {
  CHECK_FALSE(amp::is_autocast_enabled(DeviceType::CPU));
  CHECK_FALSE(amp::is_autocast_enabled(DeviceType::CUDA));
  CHECK(amp::autocast_dtype(DeviceType::CPU) == kBFloat16);
  CHECK(amp::autocast_dtype(DeviceType::CUDA) == kFloat16);
  CHECK_FALSE(autocast_flag_set());
  CHECK(linear(f32({2, 3}, 1), f32({4, 3}, 2)).dtype() == kFloat32);
}

TEST_CASE("CPU autocast runs matrix products in bfloat16 and losses in float32") {
  Tensor x = f32({4, 8}, 1), w = f32({6, 8}, 2), b = f32({6}, 3);
  const Tensor ref = linear(x, w, b);
  {
    amp::AutocastGuard autocast(DeviceType::CPU);
    CHECK(amp::is_autocast_enabled(DeviceType::CPU));
    CHECK(autocast_flag_set());
    Tensor y = linear(x, w, b);
    CHECK(y.dtype() == kBFloat16);
    require_close(y.to(kFloat32), ref, 2e-2, 2e-2);
    CHECK(matmul(x, w.t()).dtype() == kBFloat16);
    CHECK(mm(x, w.t()).dtype() == kBFloat16);
    CHECK(bmm(x.unsqueeze(0), w.t().unsqueeze(0)).dtype() == kBFloat16);
    CHECK(addmm(b, x, w.t()).dtype() == kBFloat16);
    CHECK(conv2d(f32({1, 2, 5, 5}, 4), f32({3, 2, 3, 3}, 5)).dtype() == kBFloat16);
    CHECK(conv1d(f32({1, 2, 5}, 4), f32({3, 2, 3}, 5)).dtype() == kBFloat16);
    Tensor q = f32({1, 2, 4, 8}, 6);
    CHECK(scaled_dot_product_attention(q, q, q).dtype() == kBFloat16);

    // Losses run in float32 even on bfloat16 logits; integer targets are left alone.
    Tensor target = from_vector(std::vector<int64_t>{0, 1, 2, 5}, {4});
    Tensor loss = cross_entropy(y, target);
    CHECK(loss.dtype() == kFloat32);
    CHECK(nll_loss(log_softmax(y, 1), target).dtype() == kFloat32);
    CHECK(mse_loss(y, y).dtype() == kFloat32);
    CHECK(binary_cross_entropy_with_logits(y, sigmoid(y)).dtype() == kFloat32);
    CHECK(prod(y).dtype() == kFloat32);

    // On the CPU, torch keeps softmax, layer_norm, sum, exp... in the input's dtype.
    CHECK(softmax(y, 1).dtype() == kBFloat16);
    CHECK(layer_norm(y, {6}).dtype() == kBFloat16);
    CHECK(sum(y).dtype() == kBFloat16);
    CHECK(exp(y).dtype() == kBFloat16);
    // Unlisted ops run in their inputs' dtype.
    CHECK(relu(y).dtype() == kBFloat16);
    CHECK(mean(y).dtype() == kBFloat16);
    // Promote: the widest floating input.
    CHECK(cat({y, ref}).dtype() == kFloat32);
    CHECK(stack({y, y}).dtype() == kBFloat16);
  }
  CHECK_FALSE(amp::is_autocast_enabled(DeviceType::CPU));
  CHECK_FALSE(autocast_flag_set());
  CHECK(linear(x, w, b).dtype() == kFloat32);
}

TEST_CASE("autocast casts float16 on request, never float64, integers or another device type's tensors") {
  Tensor x = f32({4, 8}, 1), w = f32({6, 8}, 2);
  {
    amp::AutocastGuard autocast(DeviceType::CPU, kFloat16);
    CHECK(linear(x, w).dtype() == kFloat16);
    CHECK(linear(x.to(kFloat64), w.to(kFloat64)).dtype() == kFloat64);
    Tensor i = ones({3, 3}, kInt64);
    CHECK(matmul(i, i).dtype() == kInt64);
  }
  CHECK(amp::autocast_dtype(DeviceType::CPU) == kBFloat16);  // restored
  {
    amp::AutocastGuard autocast(DeviceType::CUDA);  // CPU tensors are not CUDA autocast's business
    CHECK(linear(x, w).dtype() == kFloat32);
  }
}

TEST_CASE("autocast regions nest, can switch it off inside, and restore what they found") {
  Tensor x = f32({2, 3}, 1), w = f32({4, 3}, 2);
  amp::AutocastGuard outer(DeviceType::CPU);
  CHECK(linear(x, w).dtype() == kBFloat16);
  {
    amp::AutocastGuard off(DeviceType::CPU, std::nullopt, /*enabled=*/false);
    CHECK_FALSE(amp::is_autocast_enabled(DeviceType::CPU));
    CHECK(linear(x, w).dtype() == kFloat32);
    {
      amp::AutocastGuard half(DeviceType::CPU, kFloat16);
      CHECK(linear(x, w).dtype() == kFloat16);
    }
    CHECK(linear(x, w).dtype() == kFloat32);
  }
  CHECK(linear(x, w).dtype() == kBFloat16);
  {
    amp::AutocastExcludedGuard excluded;
    CHECK(linear(x, w).dtype() == kFloat32);
  }
  CHECK_THROWS_AS(amp::set_autocast_dtype(DeviceType::CPU, kFloat32), DTypeError);
  CHECK(amp::autocast_dtype(DeviceType::CPU) == kBFloat16);
}

TEST_CASE("autocast applies to the ops user code calls, not to ops called inside other ops") {
  Tensor x = f32({4, 6}, 1).to(kBFloat16);
  amp::AutocastGuard autocast(DeviceType::CPU);
  // An op whose implementation calls a listed op (prod runs in float32 when called directly).
  auto my_op = [](const Tensor& t) {
    OpGuard guard("my_op", t);
    return prod(t, 1);
  };
  CHECK(prod(x, 1).dtype() == kFloat32);
  CHECK(my_op(x).dtype() == kBFloat16);
}

TEST_CASE("backward through an autocast region gives each leaf its own dtype, inside the region too") {
  Tensor x = f32({4, 8}, 1), w = f32({6, 8}, 2, true), b = f32({6}, 3, true);
  Tensor target = from_vector(std::vector<int64_t>{0, 1, 2, 5}, {4});
  cross_entropy(linear(x, w, b), target).backward();
  const Tensor ref_w = w.grad().clone(), ref_b = b.grad().clone();
  w.set_grad(Tensor());
  b.set_grad(Tensor());
  {
    amp::AutocastGuard autocast(DeviceType::CPU);
    Tensor loss = cross_entropy(linear(x, w, b), target);
    CHECK(loss.dtype() == kFloat32);
    // Inside the region, but the backward pass (hooks included) does not autocast.
    ScalarType in_backward = kBool;
    w.register_hook([&](const Tensor&) {
      in_backward = linear(x, w.detach()).dtype();
      return Tensor();
    });
    loss.backward();
    CHECK(in_backward == kFloat32);
    CHECK(linear(x, w).dtype() == kBFloat16);  // and the region is intact afterwards
  }
  REQUIRE(w.grad().defined());
  CHECK(w.grad().dtype() == kFloat32);
  CHECK(b.grad().dtype() == kFloat32);
  require_close(w.grad(), ref_w, 5e-2, 1e-2);
  require_close(b.grad(), ref_b, 5e-2, 1e-2);
}

TEST_CASE("a parameter is cast once per region, again after an in-place update, and not under no_grad") {
  Tensor x = f32({2, 8}, 1), w = f32({6, 8}, 2, true);
  CastCounter counter;
  add_op_observer(&counter);
  {
    amp::AutocastGuard autocast(DeviceType::CPU);
    linear(x, w);
    linear(x, w);
    CHECK(counter.casts == 3);  // x twice, w once
    {
      NoGradGuard no_grad;
      w.mul_(Scalar(2.0));  // bumps w's version: the cached cast is stale
    }
    counter.casts = 0;
    Tensor y = linear(x, w);
    CHECK(counter.casts == 2);
    require_close(y.to(kFloat32), linear(x.to(kBFloat16), w.detach().to(kBFloat16)).to(kFloat32), 1e-6, 1e-6);
    {
      amp::AutocastGuard inner(DeviceType::CPU);  // nested: the cache survives its end
    }
    counter.casts = 0;
    linear(x, w);
    CHECK(counter.casts == 1);
  }
  counter.casts = 0;
  {
    amp::AutocastGuard autocast(DeviceType::CPU);  // a new outermost region starts a fresh cache
    linear(x, w);
    CHECK(counter.casts == 2);
  }
  {
    amp::AutocastGuard autocast(DeviceType::CPU);
    {
      NoGradGuard no_grad;
      linear(x, w);  // this cast has no grad_fn and must not be reused below
    }
    linear(x, w).sum().backward();
    CHECK(w.grad().defined());
  }
  {
    // Several losses, each with its own backward: the backward frees the cast's node, so it is made again.
    amp::AutocastGuard autocast(DeviceType::CPU);
    w.set_grad(Tensor());
    linear(x, w).sum().backward();
    linear(x, w).sum().backward();
    linear(x, w).sum().backward();
    require_close(w.grad(), sum(x, {0}).unsqueeze(0).expand({6, 8}) * Scalar(3.0), 2e-2, 2e-2);
  }
  {
    amp::AutocastGuard autocast(DeviceType::CPU, std::nullopt, true, /*cache_enabled=*/false);
    counter.casts = 0;
    linear(x, w);
    linear(x, w);
    CHECK(counter.casts == 4);
  }
  remove_op_observer(&counter);
}

TEST_CASE("autocast state is per thread") {
  Tensor x = f32({2, 3}, 1), w = f32({4, 3}, 2);
  amp::AutocastGuard autocast(DeviceType::CPU);
  ScalarType other_thread = kBool;
  std::thread t([&] { other_thread = linear(x, w).dtype(); });
  t.join();
  CHECK(other_thread == kFloat32);
  CHECK(linear(x, w).dtype() == kBFloat16);
}

TEST_CASE("non_finite_check_and_unscale_ unscales in place and flags infs and NaNs") {
  Tensor found = zeros({}), inv = full({}, 0.25);
  Tensor g1 = from_vector(std::vector<float>{4, 8, -12}, {3}), g2 = full({2, 2}, 2.0);
  amp::non_finite_check_and_unscale_({g1, Tensor(), g2}, found, inv);
  CHECK(found.item<float>() == 0.0f);
  require_close(g1, from_vector(std::vector<float>{1, 2, -3}, {3}));
  require_close(g2, full({2, 2}, 0.5));

  Tensor g3 = from_vector(std::vector<float>{1, std::numeric_limits<float>::infinity()}, {2});
  amp::non_finite_check_and_unscale_({g3}, found, inv);
  CHECK(found.item<float>() == 1.0f);
  amp::non_finite_check_and_unscale_({g1}, found, inv);  // never cleared by a clean call
  CHECK(found.item<float>() == 1.0f);

  Tensor found2 = zeros({}), g4 = from_vector(std::vector<float>{std::nanf(""), 1}, {2});
  amp::non_finite_check_and_unscale_({g4.to(kBFloat16)}, found2, inv);
  CHECK(found2.item<float>() == 1.0f);

  CHECK_THROWS_AS(amp::non_finite_check_and_unscale_({g1}, zeros({2}), inv), ValueError);
  CHECK_THROWS_AS(amp::non_finite_check_and_unscale_({g1}, zeros({}, kFloat64), inv), DTypeError);
  CHECK_THROWS_AS(amp::non_finite_check_and_unscale_({ones({2}, kInt64)}, found, inv), DTypeError);
}

TEST_CASE("update_scale_ backs off after an inf and grows after growth_interval clean steps") {
  Tensor scale = full({}, 1024.0), tracker = zeros({}, kInt32);
  Tensor clean = zeros({}), inf = ones({});
  amp::update_scale_(scale, tracker, inf, 2.0, 0.5, 3);
  CHECK(scale.item<float>() == 512.0f);
  CHECK(tracker.item<int32_t>() == 0);
  for (int step = 1; step <= 2; ++step) {
    amp::update_scale_(scale, tracker, clean, 2.0, 0.5, 3);
    CHECK(scale.item<float>() == 512.0f);
    CHECK(tracker.item<int32_t>() == step);
  }
  amp::update_scale_(scale, tracker, clean, 2.0, 0.5, 3);
  CHECK(scale.item<float>() == 1024.0f);
  CHECK(tracker.item<int32_t>() == 0);

  Tensor big = full({}, double(std::numeric_limits<float>::max()));  // growing would overflow: keep it
  Tensor t2 = zeros({}, kInt32);
  amp::update_scale_(big, t2, clean, 2.0, 0.5, 1);
  CHECK(big.item<float>() == std::numeric_limits<float>::max());
  CHECK(t2.item<int32_t>() == 0);

  CHECK_THROWS_AS(amp::update_scale_(scale, tracker, clean, 0.5, 0.5, 3), ValueError);
  CHECK_THROWS_AS(amp::update_scale_(scale, zeros({}, kInt64), clean, 2.0, 0.5, 3), DTypeError);
}
