// Tensors: dtypes, half conversions, promotion, broadcasting, views sharing storage, repr.
#include <catch2/catch.hpp>
#include <cmath>

#include "testing.h"

using namespace rt;

TEST_CASE("half and bfloat16 round to nearest even") {
  CHECK(Half(1.0f).bits == 0x3c00);
  CHECK(Half(65504.0f).bits == 0x7bff);
  CHECK(std::isinf(float(Half(65520.0f))));
  CHECK(float(Half(-2.5f)) == -2.5f);
  CHECK(Half(5.960464477539063e-08f).bits == 0x0001);  // smallest subnormal
  CHECK(float(Half(6.0e-8f)) == Approx(5.960464477539063e-08f));
  CHECK(std::isnan(float(Half(NAN))));
  CHECK(Half(1.0f + 1.0f / 2048).bits == 0x3c00);        // tie -> even
  CHECK(Half(1.0f + 3.0f / 2048).bits == 0x3c02);        // tie -> even (up)
  CHECK(BFloat16(1.0f).bits == 0x3f80);
  CHECK(float(BFloat16(3.140625f)) == 3.140625f);
  CHECK(BFloat16(1.0f + 1.0f / 256).bits == 0x3f80);     // tie -> even
  CHECK(float(Half(1e-5f)) == Approx(1e-5f).margin(6e-8));  // subnormal: absolute precision 2^-24
  for (float v : {0.1f, -7.25f, 1000.5f, 1e-3f}) {
    CHECK(float(Half(v)) == Approx(v).epsilon(1e-3));
    CHECK(float(BFloat16(v)) == Approx(v).epsilon(1e-2));
  }
}

TEST_CASE("type promotion follows PyTorch") {
  auto i64 = zeros({2}, kInt64), i32 = zeros({2}, kInt32), u8 = zeros({2}, kUInt8), b = zeros({2}, kBool);
  auto f32 = zeros({2}), f64 = zeros({2}, kFloat64), f16 = zeros({2}, kFloat16), bf16 = zeros({2}, kBFloat16);
  CHECK((i64 + f32).dtype() == kFloat32);
  CHECK((i32 + i64).dtype() == kInt64);
  CHECK((u8 + i32).dtype() == kInt32);
  CHECK((b + b).dtype() == kBool);
  CHECK((b + u8).dtype() == kUInt8);
  CHECK((f16 + bf16).dtype() == kFloat32);
  CHECK((f16 + f64).dtype() == kFloat64);
  // Wrapped numbers and 0-dim tensors do not widen within a category.
  CHECK((i32 + 1).dtype() == kInt32);
  CHECK((i32 * 2.5).dtype() == kFloat32);
  CHECK((f16 * 2.5).dtype() == kFloat16);
  CHECK((b + 1).dtype() == kInt64);
  CHECK((f32 + scalar_tensor(1.0, kFloat64)).dtype() == kFloat32);
  CHECK((i32 + scalar_tensor(1.0, kFloat64)).dtype() == kFloat64);
  CHECK((i64 / i64).dtype() == kFloat32);
  CHECK_THROWS_AS(b - b, DTypeError);
}

TEST_CASE("arithmetic in every dtype matches a float64 reference") {
  for (ScalarType dt : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    auto a = testing::random({5, 7}, dt, -2, 2, 1), b = testing::random({7}, dt, 0.5, 2, 2);
    auto a64 = a.to(kFloat64), b64 = b.to(kFloat64);
    const double tol = dt == kFloat16 ? 1e-3 : dt == kBFloat16 ? 1e-2 : 1e-6;
    testing::require_close((a + b).to(kFloat64), (a64 + b64), tol, tol);
    testing::require_close((a * b).to(kFloat64), (a64 * b64), tol, tol);
    testing::require_close((a / b).to(kFloat64), (a64 / b64), tol, tol);
    testing::require_close(a.sub(b, 3).to(kFloat64), a64 - b64 * 3, tol, tol * 4);
    CHECK((a + b).dtype() == dt);
  }
  auto i = testing::random_int({4, 3}, -10, 10, 3), j = testing::random_int({3}, 1, 5, 4);
  CHECK((i * j).to_vector<int64_t>()[0] == i.to_vector<int64_t>()[0] * j.to_vector<int64_t>()[0]);
  CHECK((i + j).dtype() == kInt64);
}

TEST_CASE("broadcasting rules and error message") {
  auto a = ones({3, 1, 5}), b = ones({4, 1});
  CHECK((a + b).sizes() == Shape{3, 4, 5});
  CHECK(broadcast_shapes({2, 1}, {1}, "x") == Shape{2, 1});
  try {
    (void)(ones({3, 4}) + ones({5}));
    FAIL("expected ShapeError");
  } catch (const ShapeError& e) {
    std::string m = e.what();
    CHECK_THAT(m, Catch::Contains("add") && Catch::Contains("[3, 4]") && Catch::Contains("[5]") &&
                      Catch::Contains("4 vs 5"));
  }
}

TEST_CASE("views share storage and write through") {
  auto x = from_vector(std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
  auto t = x.t();
  CHECK(t.sizes() == Shape{4, 3});
  CHECK_FALSE(t.is_contiguous());
  CHECK(t.storage().is_same(x.storage()));
  CHECK(t.select(0, 1).to_vector<float>() == std::vector<float>{1, 5, 9});
  x.select(0, 1).fill_(-1);
  CHECK(x.to_vector<float>()[4] == -1);
  CHECK(t.select(1, 1).to_vector<float>() == std::vector<float>{-1, -1, -1, -1});
  auto s = x.slice(1, 1, std::nullopt, 2);
  CHECK(s.sizes() == Shape{3, 2});
  CHECK(s.to_vector<float>() == std::vector<float>{1, 3, -1, -1, 9, 11});
  auto v = x.view({2, 6});
  CHECK(v.storage().is_same(x.storage()));
  auto n = x.narrow(0, 1, 2).unsqueeze(0);
  CHECK(n.sizes() == Shape{1, 2, 4});
  CHECK(n.squeeze(0).sizes() == Shape{2, 4});
  auto e = from_vector(std::vector<float>{1, 2, 3}).unsqueeze(1).expand({3, 4});
  CHECK(e.stride(1) == 0);
  CHECK(e.contiguous().to_vector<float>()[5] == 2);
  CHECK(x.permute({1, 0}).sizes() == Shape{4, 3});
  CHECK(x.flatten().sizes() == Shape{12});
  CHECK(ones({2, 3, 4}).flatten(1).sizes() == Shape{2, 12});
  CHECK(x.view({-1, 2}).sizes() == Shape{6, 2});
}

TEST_CASE("view refuses incompatible strides and reshape copies") {
  auto x = zeros({4, 6}).t();
  try {
    (void)x.view({24});
    FAIL("expected ShapeError");
  } catch (const ShapeError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("view") && Catch::Contains("reshape"));
  }
  auto r = x.reshape({24});
  CHECK_FALSE(r.storage().is_same(x.storage()));
  CHECK_THROWS_AS(x.view({5, 5}), ShapeError);
  CHECK_THROWS_AS(x.select(2, 0), IndexError);
  CHECK_THROWS_AS(x.select(0, 6), IndexError);
}

TEST_CASE("item, to_vector, repr and factories") {
  CHECK(full({2, 2}, 3.5).sum().item<double>() == 14.0);
  CHECK(tensor({int64_t{1}, int64_t{2}, int64_t{3}}).dtype() == kInt64);
  CHECK(tensor({1.f, 2.f}, {2, 1}).sizes() == Shape{2, 1});
  CHECK_THROWS_AS(tensor({1.f, 2.f, 3.f}, {2, 2}), ShapeError);
  CHECK_THROWS_AS(ones({3}).item<float>(), ValueError);
  CHECK(tensor({1.f, 2.5f}).str() == "tensor([1.0000, 2.5000])");
  CHECK(tensor({1.f}).requires_grad_().str() == "tensor([1.0000], requires_grad=True)");
  CHECK(ones({2}, kInt32).str() == "tensor([1, 1], dtype=int32)");
  CHECK_THROWS_AS(Tensor().dim(), ValueError);
  CHECK_THROWS_AS(zeros({-1}), ValueError);
}

TEST_CASE("in-place ops bump the shared version counter and check dtype and shape") {
  auto x = zeros({3});
  auto v = x.view({3});
  const auto before = x.version();
  v.add_(ones({3}));
  CHECK(x.version() == before + 1);
  CHECK(x.to_vector<float>() == std::vector<float>{1, 1, 1});
  auto i = zeros({3}, kInt64);
  CHECK_THROWS_AS(i.add_(ones({3})), DTypeError);
  CHECK_THROWS_AS(x.add_(ones({2, 3})), ShapeError);
  x.mul_(3).sub_(1).div_(2);
  CHECK(x.to_vector<float>() == std::vector<float>{1, 1, 1});
  auto y = ones({3});
  addcmul_(y, full({3}, 2.0), full({3}, 3.0), 0.5);
  CHECK(y.to_vector<float>()[0] == 4.0f);
  addcdiv_(y, full({3}, 2.0), full({3}, 4.0), -2);
  CHECK(y.to_vector<float>()[0] == 3.0f);
  lerp_(y, full({3}, 5.0), 0.5);
  CHECK(y.to_vector<float>()[0] == 4.0f);
}

TEST_CASE("copy_ converts dtypes and broadcasts") {
  auto x = zeros({2, 3}, kFloat16);
  x.copy_(from_vector(std::vector<double>{1.5, 2.5, 3.5}));
  CHECK(x.to(kFloat32).to_vector<float>() == std::vector<float>{1.5, 2.5, 3.5, 1.5, 2.5, 3.5});
  auto b = zeros({3}, kBool);
  b.copy_(from_vector(std::vector<float>{0, 2, -1}));
  CHECK(b.to_vector<bool>() == std::vector<bool>{false, true, true});
}

TEST_CASE("numel_of refuses a shape whose element count does not fit in int64") {
  // 2^32 * 2^32 overflows int64: before, the multiplication was undefined behaviour (UBSan in the ASan stage) and
  // wrapped to 0; now it is a ValueError naming the shape.
  const Shape huge = {int64_t{1} << 32, int64_t{1} << 32};
  CHECK_THROWS_WITH(numel_of(huge), Catch::Contains("[4294967296, 4294967296]") &&
                                        Catch::Contains("more elements than fit in int64"));
  CHECK_THROWS_AS(make_tensor(huge, kFloat32), ValueError);
  CHECK(numel_of({int64_t{1} << 31, 4}) == int64_t{1} << 33);
  CHECK(numel_of({}) == 1);
}
