// rt::Shape (Note [Inline shapes]) against std::vector<int64_t> as the reference, and make_tensor's
// single block for TensorImpl and StorageImpl (Note [One allocation per tensor]): lifetimes stay
// independent (a view outlives its base, a weak_ptr outlives both), and nothing falls back to a
// second allocation. Under AddressSanitizer these cases catch a use after free through the block.
#include <catch2/catch.hpp>

#include <memory>
#include <random>
#include <vector>

#include "memory/tensor_block.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/reduce.h"
#include "rt/ops/view.h"
#include "rt/tensor.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

using rt::Shape;

namespace {
bool same(const Shape& s, const std::vector<int64_t>& v) {
  return s.size() == v.size() && std::equal(s.begin(), s.end(), v.begin());
}
bool inline_storage(const Shape& s) {
  auto* p = reinterpret_cast<const unsigned char*>(s.data());
  auto* o = reinterpret_cast<const unsigned char*>(&s);
  return p >= o && p < o + sizeof(Shape);
}
}  // namespace

TEST_CASE("Shape keeps up to five dims inline and moves to the heap beyond", "[inline_shape]") {
  Shape s = {2, 3, 4, 5, 6};
  CHECK(inline_storage(s));
  s.push_back(7);
  CHECK_FALSE(inline_storage(s));
  CHECK(same(s, {2, 3, 4, 5, 6, 7}));
  s.erase(s.begin(), s.begin() + 3);
  CHECK(same(s, {5, 6, 7}));
  Shape small = {1, 2};
  CHECK(inline_storage(small));
  Shape moved = std::move(s);  // a heap array is stolen, the source left empty
  CHECK(same(moved, {5, 6, 7}));
  CHECK(s.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  CHECK(inline_storage(s));
  s = small;
  CHECK(same(s, {1, 2}));
}

TEST_CASE("Shape behaves like std::vector<int64_t> under random edits", "[inline_shape]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    Shape s;
    std::vector<int64_t> v;
    for (int step = 0; step < 40; ++step) {
      const int64_t x = int64_t(rng() % 100) - 50;
      switch (rng() % 8) {
        case 0: s.push_back(x); v.push_back(x); break;
        case 1:
          if (!v.empty()) { s.pop_back(); v.pop_back(); }
          break;
        case 2: {
          const size_t at = v.empty() ? 0 : rng() % (v.size() + 1);
          s.insert(s.begin() + at, x);
          v.insert(v.begin() + ptrdiff_t(at), x);
          break;
        }
        case 3:
          if (!v.empty()) {
            const size_t at = rng() % v.size();
            s.erase(s.begin() + at);
            v.erase(v.begin() + ptrdiff_t(at));
          }
          break;
        case 4: {
          const size_t n = rng() % 9;
          s.resize(n, x);
          v.resize(n, x);
          break;
        }
        case 5: {  // insert a copy of its own front part: the source aliases the destination
          const size_t k = std::min<size_t>(v.size(), 3);
          s.insert(s.begin(), s.begin(), s.begin() + k);
          const std::vector<int64_t> front(v.begin(), v.begin() + ptrdiff_t(k));
          v.insert(v.begin(), front.begin(), front.end());
          break;
        }
        case 6: {
          Shape copy = s;
          s = std::move(copy);
          break;
        }
        default: {
          Shape other(v.begin(), v.end());
          s.swap(other);
          break;
        }
      }
      REQUIRE(same(s, v));
    }
    REQUIRE(std::vector<int64_t>(s) == v);
    REQUIRE(Shape(v) == s);
  }
}

TEST_CASE("Shape compares, converts and reports like the vector it replaced", "[inline_shape]") {
  CHECK(Shape{2, 3} == Shape{2, 3});
  CHECK_FALSE(Shape{2, 3} == Shape{2, 3, 1});
  CHECK(Shape{1, 9} < Shape{2});
  CHECK(Shape(3, 7) == Shape{7, 7, 7});
  CHECK(Shape(2) == Shape{0, 0});
  const std::vector<int64_t> v = Shape{4, 5};
  CHECK(v == std::vector<int64_t>{4, 5});
  CHECK(rt::format_shape({2, 3}) == "[2, 3]");
  CHECK_THROWS_AS(Shape{1}.at(1), std::out_of_range);
}

TEST_CASE("a new tensor's impl and storage share one block with independent lifetimes", "[inline_shape]") {
  const uint64_t fallbacks = rt::detail::TensorBlock::fallback_count();
  std::weak_ptr<rt::TensorImpl> weak;
  rt::Tensor view;
  const void* base_impl = nullptr;
  {
    rt::Tensor base = rt::arange(24).to(rt::kFloat32);  // a new tensor: made by make_tensor
    REQUIRE_FALSE(base.impl().is_view);
    weak = base.impl_ptr();
    base_impl = base.impl_ptr().get();
    view = base.view({2, 3, 4}).transpose(0, 2);
    CHECK(view.storage().is_same(base.storage()));
  }
  // The base's TensorImpl is gone; its storage lives on in the view, inside the same block.
  CHECK(weak.expired());
  weak.reset();  // the last reference to the TensorImpl's control block
#if defined(__SANITIZE_ADDRESS__)
  CHECK(__asan_address_is_poisoned(base_impl));  // a use of the dead TensorImpl would be reported
#else
  (void)base_impl;
#endif
  CHECK(view.sizes() == Shape{4, 3, 2});
  CHECK(view.contiguous().to_vector<float>()[1] == 12.0f);
  {
    rt::Tensor a = rt::ones({1}), b = rt::ones({1});
    for (int i = 0; i < 1000; ++i) a = a + b;
    CHECK(a.item<float>() == 1001.0f);
  }
  view = rt::Tensor();
  CHECK(rt::detail::TensorBlock::fallback_count() == fallbacks);  // the block always had room
}

TEST_CASE("a six-dim tensor works with heap-held sizes and strides", "[inline_shape]") {
  rt::Tensor t = rt::arange(64).reshape({2, 2, 2, 2, 2, 2});
  CHECK(t.dim() == 6);
  CHECK(t.strides() == Shape{32, 16, 8, 4, 2, 1});
  rt::Tensor p = t.permute({5, 4, 3, 2, 1, 0}).contiguous();
  CHECK(p.to_vector<int64_t>()[1] == 32);
  CHECK((t + t).sum().item<int64_t>() == 2 * 63 * 64 / 2);
}
