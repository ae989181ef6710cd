// cat, stack, split, chunk, gather, scatter_add, index_select, one_hot, repeat, tril, triu.
#include <catch2/catch.hpp>

#include "rt/parallel.h"
#include "testing.h"

using rt::Shape;
using rt::Tensor;
using rt::TensorList;
using rt::testing::random;
using rt::testing::random_int;
using rt::testing::require_close;
using rt::testing::values;

namespace {

Shape unravel(int64_t flat, const Shape& shape) {
  Shape idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return idx;
}

int64_t ravel(const Shape& idx, const Shape& shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + idx[d];
  return flat;
}

Tensor ivec(const std::vector<int64_t>& v, Shape shape = {}) {
  return rt::from_vector(v, shape.empty() ? Shape{int64_t(v.size())} : shape);
}

Tensor from_values(const std::vector<double>& v, const Shape& shape) { return rt::from_vector(v, shape); }

// Float64 reference of cat along dim, by walking every output element.
Tensor cat_reference(const TensorList& ts, int64_t dim) {
  Shape shape = ts[0].sizes();
  shape[size_t(dim)] = 0;
  for (const auto& t : ts) shape[size_t(dim)] += t.size(dim);
  std::vector<std::vector<double>> vals;
  for (const auto& t : ts) vals.push_back(values(t));
  std::vector<double> out(size_t(rt::numel_of(shape)));
  for (int64_t f = 0; f < int64_t(out.size()); ++f) {
    Shape idx = unravel(f, shape);
    size_t k = 0;
    while (idx[size_t(dim)] >= ts[k].size(dim)) idx[size_t(dim)] -= ts[k++].size(dim);
    out[size_t(f)] = vals[k][size_t(ravel(idx, ts[k].sizes()))];
  }
  return from_values(out, shape);
}

template <typename F>
void check_throws_with(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    FAIL("expected an exception");
  } catch (const rt::Error& e) {
    const std::string msg = e.what();
    INFO("message: " << msg);
    for (const auto& p : parts) CHECK(msg.find(p) != std::string::npos);
  }
}

}  // namespace

// ---- cat / stack --------------------------------------------------------------------------

TEST_CASE("cat matches a float64 reference along every dim") {
  for (int64_t dim : {0, 1, 2, -1, -3}) {
    const int64_t d = dim < 0 ? dim + 3 : dim;
    Shape a{2, 3, 4}, b{2, 3, 4}, c{2, 3, 4};
    b[size_t(d)] = 5;
    c[size_t(d)] = 1;
    TensorList ts{random(a, rt::kFloat64, -1, 1, 1), random(b, rt::kFloat64, -1, 1, 2), random(c, rt::kFloat64, -1, 1, 3)};
    INFO("dim " << dim);
    require_close(rt::cat(ts, dim), cat_reference(ts, d), 0, 0);
    TensorList fs;
    for (auto& t : ts) fs.push_back(t.to(rt::kFloat32));
    Tensor out32 = rt::cat(fs, dim);
    CHECK(out32.dtype() == rt::kFloat32);
    require_close(out32, cat_reference(ts, d), 1e-6, 1e-7);
  }
}

TEST_CASE("cat handles non-contiguous inputs, promotion and large inputs") {
  Tensor a = random({4, 3}, rt::kFloat64, -1, 1, 4).t();  // [3, 4], strided
  Tensor b = random_int({2, 4}, -5, 5, 5);
  Tensor out = rt::cat({a, b}, 0);
  CHECK(out.dtype() == rt::kFloat64);
  require_close(out, cat_reference({a.contiguous(), b.to(rt::kFloat64)}, 0), 0, 0);
  CHECK(rt::cat({b, b.to(rt::kInt32)}, 1).dtype() == rt::kInt64);
  CHECK(rt::cat({a.to(rt::kFloat32), a.to(rt::kFloat16)}, 0).dtype() == rt::kFloat32);

  Tensor big0 = random({300, 200}, rt::kFloat64, -1, 1, 6), big1 = random({300, 100}, rt::kFloat64, -1, 1, 7);
  require_close(rt::cat({big0, big1}, 1), cat_reference({big0, big1}, 1), 0, 0);
  require_close(rt::cat({big0, big0}, 0), cat_reference({big0, big0}, 0), 0, 0);
  Tensor h = random({5, 6}, rt::kFloat16, -1, 1, 8);
  require_close(rt::cat({h, h}, 1), cat_reference({h.to(rt::kFloat64), h.to(rt::kFloat64)}, 1), 0, 0);
}

TEST_CASE("cat skips 1-D empty tensors (PyTorch's legacy rule)") {
  Tensor a = random({2, 3}, rt::kFloat32, -1, 1, 9);
  Tensor e = rt::zeros({0}, rt::kFloat64);
  Tensor out = rt::cat({e, a, e}, 1);
  CHECK(out.sizes() == Shape{2, 3});
  CHECK(out.dtype() == rt::kFloat64);  // the skipped tensor still takes part in promotion
  require_close(out, a.to(rt::kFloat64), 0, 0);
  Tensor all_empty = rt::cat({e, rt::zeros({0}, rt::kInt64)}, 0);
  CHECK(all_empty.sizes() == Shape{0});
  CHECK(rt::cat({rt::zeros({2, 0}), rt::ones({2, 3})}, 1).sizes() == Shape{2, 3});  // 2-D empty is not skipped
  CHECK_THROWS_AS(rt::cat({rt::zeros({0, 2}), rt::ones({2, 3})}, 0), rt::ShapeError);
}

TEST_CASE("cat errors name the tensor, its shape and the mismatching dim") {
  Tensor a = rt::zeros({2, 3}), b = rt::zeros({3, 4});
  CHECK_THROWS_AS(rt::cat({a, b}, 0), rt::ShapeError);
  check_throws_with([&] { rt::cat({a, b}, 0); },
                    {"cat", "[2, 3]", "[3, 4]", "tensor 1", "in dimension 1", "except in dimension 0", "expected size 3"});
  check_throws_with([&] { rt::cat({a, rt::zeros({2})}, 0); }, {"cat", "same number of dimensions", "[2]"});
  check_throws_with([&] { rt::cat({a, rt::scalar_tensor(1.0)}, 0); }, {"cat", "zero-dimensional", "position 1"});
  CHECK_THROWS_AS(rt::cat({}, 0), rt::ValueError);
  CHECK_THROWS_AS(rt::cat({a, a}, 2), rt::IndexError);
  CHECK_THROWS_AS(rt::cat({a, Tensor()}, 0), rt::ValueError);
}

TEST_CASE("stack inserts a new dim at every position") {
  TensorList ts{random({3, 4}, rt::kFloat64, -1, 1, 10), random({3, 4}, rt::kFloat64, -1, 1, 11)};
  for (int64_t dim : {0, 1, 2, -1}) {
    const int64_t d = dim < 0 ? dim + 3 : dim;
    Tensor out = rt::stack(ts, dim);
    INFO("dim " << dim);
    Shape shape{3, 4};
    shape.insert(shape.begin() + d, 2);
    REQUIRE(out.sizes() == shape);
    auto v = values(out);
    for (int64_t f = 0; f < out.numel(); ++f) {
      Shape idx = unravel(f, shape);
      const int64_t k = idx[size_t(d)];
      idx.erase(idx.begin() + d);
      CHECK(v[size_t(f)] == values(ts[size_t(k)])[size_t(ravel(idx, {3, 4}))]);
    }
  }
  CHECK(rt::stack({rt::ones({2}, rt::kInt64), rt::ones({2})}, 0).dtype() == rt::kFloat32);
  CHECK(rt::stack({rt::scalar_tensor(1.0), rt::scalar_tensor(2.0)}, 0).sizes() == Shape{2});
  require_close(rt::stack({ts[0].t(), ts[1].t()}, 0), rt::stack({ts[0].t().contiguous(), ts[1].t().contiguous()}, 0), 0, 0);
}

TEST_CASE("stack errors") {
  check_throws_with([] { rt::stack({rt::zeros({2, 3}), rt::zeros({2, 4})}, 0); },
                    {"stack", "[2, 3]", "entry 0", "[2, 4]", "entry 1"});
  CHECK_THROWS_AS(rt::stack({}, 0), rt::ValueError);
  CHECK_THROWS_AS(rt::stack({rt::zeros({2})}, 2), rt::IndexError);
}

// ---- split / chunk ------------------------------------------------------------------------

TEST_CASE("split by size returns views covering the dim, the last one shorter") {
  Tensor x = random({7, 3}, rt::kFloat64, -1, 1, 12);
  auto parts = rt::split(x, 3, 0);
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].sizes() == Shape{3, 3});
  CHECK(parts[2].sizes() == Shape{1, 3});
  require_close(rt::cat(parts, 0), x, 0, 0);
  for (auto& p : parts) CHECK(p.storage().is_same(x.storage()));
  parts[1].fill_(5.0);  // writes through the view
  CHECK(values(x)[size_t(3 * 3)] == 5.0);
  CHECK(values(x)[0] != 5.0);

  auto cols = x.split(2, -1);
  REQUIRE(cols.size() == 2);
  CHECK(cols[1].sizes() == Shape{7, 1});
  CHECK(cols[1].storage_offset() == 2);
  CHECK(rt::split(x, 10, 0).size() == 1);
  CHECK(rt::split(rt::zeros({0, 2}), 3, 0).size() == 1);
  CHECK(rt::split(rt::zeros({0, 2}), 0, 0).size() == 1);
}

TEST_CASE("split by a sizes list") {
  Tensor x = random({2, 6}, rt::kFloat64, -1, 1, 13);
  auto parts = x.split(Shape{1, 0, 5}, 1);
  REQUIRE(parts.size() == 3);
  CHECK(parts[1].sizes() == Shape{2, 0});
  CHECK(parts[2].sizes() == Shape{2, 5});
  CHECK(parts[2].storage_offset() == 1);
  require_close(rt::cat(parts, 1), x, 0, 0);
  check_throws_with([&] { x.split(Shape{2, 2}, 1); }, {"split_with_sizes", "[2, 2]", "sum to 4", "[2, 6]", "size 6"});
  CHECK_THROWS_AS(x.split(Shape{-1, 7}, 1), rt::ValueError);
}

TEST_CASE("split errors") {
  Tensor x = rt::zeros({4});
  CHECK_THROWS_AS(rt::split(x, -1, 0), rt::ValueError);
  check_throws_with([&] { rt::split(x, 0, 0); }, {"split", "size 4"});
  CHECK_THROWS_AS(rt::split(x, 2, 1), rt::IndexError);
  CHECK_THROWS_AS(rt::split(rt::scalar_tensor(1.0), 1, 0), rt::ShapeError);
}

TEST_CASE("chunk follows PyTorch's sizing") {
  auto sizes_of = [](const TensorList& ps) {
    Shape s;
    for (auto& p : ps) s.push_back(p.size(0));
    return s;
  };
  CHECK(sizes_of(rt::zeros({6}).chunk(4)) == Shape{2, 2, 2});  // fewer chunks than asked
  CHECK(sizes_of(rt::zeros({5}).chunk(3)) == Shape{2, 2, 1});
  CHECK(sizes_of(rt::zeros({2}).chunk(5)) == Shape{1, 1});
  CHECK(sizes_of(rt::zeros({0}).chunk(3)) == Shape{0, 0, 0});
  CHECK(sizes_of(rt::zeros({7}).chunk(1)) == Shape{7});
  Tensor x = random({3, 10}, rt::kFloat64, -1, 1, 14);
  auto parts = x.chunk(3, 1);
  REQUIRE(parts.size() == 3);
  CHECK(parts[2].sizes() == Shape{3, 2});
  CHECK(parts[2].storage().is_same(x.storage()));
  require_close(rt::cat(parts, 1), x, 0, 0);
  CHECK_THROWS_AS(x.chunk(0), rt::ValueError);
  check_throws_with([&] { x.chunk(-2); }, {"chunk", "-2"});
}

TEST_CASE("split outputs carry autograd history") {
  Tensor x = random({5, 2}, rt::kFloat64, -1, 1, 15).requires_grad_();
  auto parts = x.split(2);
  REQUIRE(parts[0].grad_fn());
  (parts[0].sum() + parts[2].sum() * 3).backward();
  require_close(x.grad(), rt::tensor({1., 1., 1., 1., 0., 0., 0., 0., 3., 3.}, {5, 2}), 0, 0);
}

// Note [Split backward]: one node takes every piece's gradient, as PyTorch's SplitBackward0 does.
TEST_CASE("split, split with sizes and chunk record one backward node for all pieces") {
  Tensor x = random({2, 7}, rt::kFloat64, -1, 1, 16).requires_grad_();
  auto parts = x.split(3, 1);
  REQUIRE(parts.size() == 3);
  for (size_t i = 0; i < parts.size(); ++i) {
    REQUIRE(parts[i].grad_fn());
    CHECK(parts[i].grad_fn() == parts[0].grad_fn());
    CHECK(parts[i].output_nr() == uint32_t(i));
    CHECK(parts[i].storage().data() == x.storage().data());  // still views of x
  }
  CHECK(parts[0].grad_fn()->name() == "SplitBackward0");
  CHECK(x.split(rt::Shape{2, 5}, 1)[1].grad_fn()->name() == "SplitWithSizesBackward0");
  CHECK(x.chunk(2, 1)[0].grad_fn()->name() == "SplitBackward0");

  // The middle piece gets no gradient: its slot is zero, the others carry theirs.
  (parts[0] * 2).sum().backward(rt::Tensor(), true);
  (parts[2] * parts[2]).sum().backward();
  Tensor expected = rt::zeros({2, 7}, rt::kFloat64);
  expected.narrow(1, 0, 3).fill_(2.0);
  expected.narrow(1, 6, 1).copy_(parts[2].detach() * 2);
  require_close(x.grad(), expected, 0, 0);

  // No gradient needed: plain views, no node.
  {
    rt::NoGradGuard g;
    CHECK_FALSE(x.split(3, 1)[0].grad_fn());
  }
  CHECK_FALSE(x.detach().chunk(3, 1)[1].grad_fn());
}

// ---- gather / scatter_add -------------------------------------------------------------------

TEST_CASE("gather matches a reference, with the index smaller than the input") {
  const Shape in_shape{3, 4, 5};
  Tensor x = random(in_shape, rt::kFloat64, -1, 1, 16);
  for (int64_t dim : {0, 1, 2, -1}) {
    const int64_t d = dim < 0 ? dim + 3 : dim;
    Shape ishape{2, 3, 4};
    ishape[size_t(d)] = 6;
    Tensor idx = random_int(ishape, 0, in_shape[size_t(d)], 17 + uint64_t(d));
    Tensor out = x.gather(dim, idx);
    REQUIRE(out.sizes() == ishape);
    auto xv = values(x), iv = values(idx), ov = values(out);
    for (int64_t f = 0; f < out.numel(); ++f) {
      Shape p = unravel(f, ishape);
      p[size_t(d)] = int64_t(iv[size_t(f)]);
      CHECK(ov[size_t(f)] == xv[size_t(ravel(p, in_shape))]);
    }
    require_close(x.to(rt::kFloat32).gather(dim, idx), out, 1e-6, 1e-7);
    require_close(x.transpose(0, 2).contiguous().transpose(0, 2).gather(dim, idx), out, 0, 0);  // strided input
  }
  Tensor labels = ivec({2, 0, 1}, {3, 1});
  Tensor logits = rt::tensor({0., 1., 2., 3., 4., 5., 6., 7., 8.}, {3, 3});
  require_close(logits.gather(1, labels), rt::tensor({2., 3., 7.}, {3, 1}), 0, 0);
  CHECK(rt::scalar_tensor(3.0).gather(0, rt::scalar_tensor(int64_t(0), rt::kInt64)).item<double>() == 3.0);
}

TEST_CASE("gather errors name the value, the dim and its size") {
  Tensor x = rt::zeros({3, 4});
  check_throws_with([&] { x.gather(1, ivec({0, 5}, {1, 2})); },
                    {"gather", "index 5", "dimension 1", "size 4", "[3, 4]", "[1, 2]"});
  CHECK_THROWS_AS(x.gather(1, ivec({-1}, {1, 1})), rt::IndexError);
  CHECK_THROWS_AS(x.gather(1, ivec({0}, {1, 1}).to(rt::kInt32)), rt::DTypeError);
  check_throws_with([&] { x.gather(1, rt::zeros({2}, rt::kInt64)); }, {"gather", "same number of dimensions"});
  check_throws_with([&] { x.gather(1, rt::zeros({4, 1}, rt::kInt64)); }, {"gather", "dimension 0", "[4, 1]"});
  CHECK_THROWS_AS(x.gather(2, rt::zeros({1, 1}, rt::kInt64)), rt::IndexError);
}

TEST_CASE("scatter_add sums duplicates and matches a reference") {
  const Shape self_shape{4, 5}, idx_shape{6, 3}, src_shape{7, 4};
  Tensor self = random(self_shape, rt::kFloat64, -1, 1, 20);
  Tensor src = random(src_shape, rt::kFloat64, -1, 1, 21);
  Tensor idx = random_int(idx_shape, 0, 4, 22);
  Tensor out = self.scatter_add(0, idx, src);
  auto ref = values(self);
  auto iv = values(idx), sv = values(src);
  for (int64_t f = 0; f < rt::numel_of(idx_shape); ++f) {
    Shape p = unravel(f, idx_shape);
    const double v = sv[size_t(ravel(p, src_shape))];
    p[0] = int64_t(iv[size_t(f)]);
    ref[size_t(ravel(p, self_shape))] += v;
  }
  require_close(out, from_values(ref, self_shape), 1e-12, 1e-12);
  CHECK(values(self) != ref);  // self is untouched
  require_close(self.to(rt::kFloat32).scatter_add(0, idx, src.to(rt::kFloat32)), from_values(ref, self_shape), 1e-5, 1e-6);
  require_close(self.to(rt::kFloat16).scatter_add(0, idx, src.to(rt::kFloat16)), from_values(ref, self_shape), 1e-2, 1e-2);
  Tensor counts = rt::zeros({3}, rt::kInt64).scatter_add(0, ivec({0, 2, 2, 2}), rt::ones({4}, rt::kInt64));
  CHECK(counts.to_vector<int64_t>() == std::vector<int64_t>{1, 0, 3});
}

TEST_CASE("scatter_add gives the same bits whatever the thread count") {
  Tensor self = rt::zeros({64, 600});
  Tensor src = random({512, 600}, rt::kFloat32, -1, 1, 23);
  Tensor idx = random_int({512, 600}, 0, 64, 24);
  const int before = rt::get_num_threads();
  rt::set_num_threads(1);
  Tensor one = self.scatter_add(0, idx, src);
  rt::set_num_threads(2);
  Tensor two = self.scatter_add(0, idx, src);
  rt::set_num_threads(before);
  CHECK(one.to_vector<float>() == two.to_vector<float>());
}

TEST_CASE("scatter_add errors") {
  Tensor self = rt::zeros({3, 4});
  check_throws_with([&] { self.scatter_add(0, ivec({3}, {1, 1}), rt::ones({1, 1})); },
                    {"scatter_add", "index 3", "dimension 0", "size 3"});
  check_throws_with([&] { self.scatter_add(0, rt::zeros({1, 1}, rt::kInt64), rt::ones({1, 1}, rt::kFloat64)); },
                    {"scatter_add", "float32", "float64"});
  check_throws_with([&] { self.scatter_add(0, rt::zeros({2, 2}, rt::kInt64), rt::ones({1, 2})); },
                    {"scatter_add", "src", "[2, 2]", "[1, 2]"});
  CHECK_THROWS_AS(self.scatter_add(0, rt::zeros({1, 5}, rt::kInt64), rt::ones({1, 5})), rt::ShapeError);
}

// ---- index_select / one_hot -----------------------------------------------------------------

TEST_CASE("index_select matches a reference for int64 and int32 indices") {
  const Shape shape{5, 4, 3};
  Tensor x = random(shape, rt::kFloat64, -1, 1, 30);
  for (int64_t dim : {0, 1, 2, -2}) {
    const int64_t d = dim < 0 ? dim + 3 : dim;
    Tensor idx = random_int({7}, 0, shape[size_t(d)], 31 + uint64_t(d));
    Tensor out = x.index_select(dim, idx);
    Shape os = shape;
    os[size_t(d)] = 7;
    REQUIRE(out.sizes() == os);
    auto xv = values(x), iv = values(idx), ov = values(out);
    for (int64_t f = 0; f < out.numel(); ++f) {
      Shape p = unravel(f, os);
      p[size_t(d)] = int64_t(iv[size_t(p[size_t(d)])]);
      CHECK(ov[size_t(f)] == xv[size_t(ravel(p, shape))]);
    }
    require_close(x.index_select(dim, idx.to(rt::kInt32)), out, 0, 0);
    require_close(x.permute({2, 0, 1}).contiguous().permute({1, 2, 0}).index_select(dim, idx), out, 0, 0);
    require_close(x.to(rt::kBFloat16).index_select(dim, idx), out.to(rt::kBFloat16), 0, 0);
  }
  Tensor big = random({1000, 64}, rt::kFloat32, -1, 1, 35);
  Tensor rows = random_int({900}, 0, 1000, 36);
  require_close(big.index_select(0, rows), big.gather(0, rows.unsqueeze(1).expand({900, 64}).contiguous()), 0, 0);
  CHECK(rt::scalar_tensor(4.0).index_select(0, ivec({0})).dim() == 0);
  CHECK(x.index_select(1, rt::zeros({0}, rt::kInt64)).sizes() == Shape{5, 0, 3});
}

TEST_CASE("index_select errors") {
  Tensor x = rt::zeros({5, 2});
  check_throws_with([&] { x.index_select(0, ivec({1, 7})); },
                    {"index_select", "index 7", "dimension 0", "size 5"});
  CHECK_THROWS_AS(x.index_select(0, ivec({1, 7})), rt::IndexError);
  check_throws_with([&] { x.index_select(1, ivec({-1})); }, {"index_select", "index -1", "dimension 1", "size 2"});
  CHECK_THROWS_AS(x.index_select(0, rt::tensor({1.f})), rt::DTypeError);
  CHECK_THROWS_AS(x.index_select(0, rt::zeros({1, 1}, rt::kInt64)), rt::ShapeError);
  CHECK_THROWS_AS(x.index_select(2, rt::zeros({1}, rt::kInt64)), rt::IndexError);
}

TEST_CASE("one_hot") {
  Tensor labels = ivec({2, 0, 1, 2}, {2, 2});
  Tensor h = rt::one_hot(labels);
  CHECK(h.dtype() == rt::kInt64);
  REQUIRE(h.sizes() == Shape{2, 2, 3});
  CHECK(h.to_vector<int64_t>() == std::vector<int64_t>{0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1});
  CHECK(rt::one_hot(labels, 5).sizes() == Shape{2, 2, 5});
  CHECK(rt::one_hot(labels.to(rt::kInt32), 3).to_vector<int64_t>() == h.to_vector<int64_t>());
  CHECK(rt::one_hot(rt::zeros({0}, rt::kInt64), 4).sizes() == Shape{0, 4});
  Tensor many = random_int({50000}, 0, 10, 40);
  Tensor mh = rt::one_hot(many, 10);
  auto mv = mh.to_vector<int64_t>(), lv = many.to_vector<int64_t>();
  bool ok = true;
  for (size_t i = 0; i < lv.size(); ++i)
    for (int64_t c = 0; c < 10; ++c) ok = ok && mv[i * 10 + size_t(c)] == (c == lv[i] ? 1 : 0);
  CHECK(ok);
}

TEST_CASE("one_hot errors") {
  check_throws_with([] { rt::one_hot(ivec({1, -3})); }, {"one_hot", "non-negative", "-3"});
  check_throws_with([] { rt::one_hot(ivec({1, 4}), 3); }, {"one_hot", "smaller than num_classes (3)", "got 4"});
  check_throws_with([] { rt::one_hot(rt::zeros({0}, rt::kInt64)); }, {"one_hot", "empty"});
  CHECK_THROWS_AS(rt::one_hot(rt::tensor({1.f})), rt::DTypeError);
  CHECK_THROWS_AS(rt::one_hot(ivec({1}), -2), rt::ValueError);
}

// ---- repeat / tril / triu -------------------------------------------------------------------

TEST_CASE("repeat tiles the tensor, adding leading dims") {
  Tensor x = random({2, 3}, rt::kFloat64, -1, 1, 50);
  const Shape reps{2, 1, 3};
  Tensor out = x.repeat(reps);
  const Shape os{2, 2, 9};
  REQUIRE(out.sizes() == os);
  auto xv = values(x), ov = values(out);
  for (int64_t f = 0; f < out.numel(); ++f) {
    Shape p = unravel(f, os);
    CHECK(ov[size_t(f)] == xv[size_t(ravel({p[1] % 2, p[2] % 3}, {2, 3}))]);
  }
  require_close(x.t().repeat({2, 2}), x.t().contiguous().repeat({2, 2}), 0, 0);
  CHECK(x.repeat({0, 2}).sizes() == Shape{0, 6});
  CHECK(rt::scalar_tensor(2.0).repeat({}).dim() == 0);
  CHECK(rt::scalar_tensor(2.0).repeat({3}).to_vector<float>() == std::vector<float>{2, 2, 2});
  Tensor big = random({100, 50}, rt::kFloat32, -1, 1, 51).repeat({3, 4});
  CHECK(big.sizes() == Shape{300, 200});
  check_throws_with([&] { x.repeat({2}); }, {"repeat", "[2]", "[2, 3]"});
  CHECK_THROWS_AS(x.repeat({1, -1}), rt::ValueError);
}

TEST_CASE("tril and triu are batched and take a diagonal offset") {
  const Shape shape{2, 3, 5};
  Tensor x = random(shape, rt::kFloat64, -1, 1, 60);
  for (int64_t k : {-4, -1, 0, 1, 3, 100, -100}) {
    Tensor lo = x.tril(k), up = x.triu(k);
    auto xv = values(x), lv = values(lo), uv = values(up);
    INFO("diagonal " << k);
    for (int64_t f = 0; f < x.numel(); ++f) {
      Shape p = unravel(f, shape);
      CHECK(lv[size_t(f)] == (p[2] - p[1] <= k ? xv[size_t(f)] : 0.0));
      CHECK(uv[size_t(f)] == (p[2] - p[1] >= k ? xv[size_t(f)] : 0.0));
    }
    require_close(x.transpose(1, 2).contiguous().transpose(1, 2).tril(k), lo, 0, 0);
  }
  Tensor causal = rt::ones({3, 3}).tril();
  CHECK(causal.to_vector<float>() == std::vector<float>{1, 0, 0, 1, 1, 0, 1, 1, 1});
  CHECK(rt::ones({2, 2}, rt::kBool).triu(1).to_vector<bool>() == std::vector<bool>{false, true, false, false});
  Tensor big = random({4, 200, 300}, rt::kFloat32, -1, 1, 61);
  require_close(big.tril(-3) + big.triu(-2), big, 0, 0);
  CHECK(rt::zeros({0, 3}).tril().sizes() == Shape{0, 3});
  check_throws_with([] { rt::zeros({3}).tril(); }, {"tril", "at least 2 dimensions", "[3]"});
  CHECK_THROWS_AS(rt::zeros({3}).triu(), rt::ShapeError);
}

// ---- autograd -------------------------------------------------------------------------------

TEST_CASE("backward nodes carry PyTorch's names") {
  Tensor x = random({3, 4}, rt::kFloat64, -1, 1, 70).requires_grad_();
  Tensor idx = rt::zeros({3, 4}, rt::kInt64);
  CHECK(rt::cat({x, x}, 0).grad_fn()->name() == "CatBackward0");
  CHECK(rt::stack({x, x}, 0).grad_fn()->name() == "StackBackward0");
  CHECK(x.gather(0, idx).grad_fn()->name() == "GatherBackward0");
  CHECK(x.scatter_add(0, idx, x).grad_fn()->name() == "ScatterAddBackward0");
  CHECK(x.index_select(0, ivec({1})).grad_fn()->name() == "IndexSelectBackward0");
  CHECK(x.repeat({2, 1}).grad_fn()->name() == "RepeatBackward0");
  CHECK(x.tril().grad_fn()->name() == "TrilBackward0");
  CHECK(x.triu().grad_fn()->name() == "TriuBackward0");
  CHECK_FALSE(rt::cat({x.detach(), x.detach()}, 0).requires_grad());
}

TEST_CASE("cat backward gives each input its slice, in its own dtype") {
  Tensor a = random({2, 3}, rt::kFloat32, -1, 1, 71).requires_grad_();
  Tensor b = random({2, 2}, rt::kFloat64, -1, 1, 72).requires_grad_();
  Tensor e = rt::zeros({0}).requires_grad_();
  Tensor i = rt::ones({2, 1}, rt::kInt64);
  Tensor out = rt::cat({a, e, i, b}, 1);
  CHECK(out.dtype() == rt::kFloat64);
  Tensor w = rt::tensor({0., 1., 2., 3., 4., 5., 6., 7., 8., 9., 10., 11.}, {2, 6});
  (out * w).sum().backward();
  CHECK(a.grad().dtype() == rt::kFloat32);
  require_close(a.grad(), rt::tensor({0.f, 1.f, 2.f, 6.f, 7.f, 8.f}, {2, 3}), 0, 0);
  require_close(b.grad(), rt::tensor({4., 5., 10., 11.}, {2, 2}), 0, 0);
  CHECK(e.grad().sizes() == Shape{0});
}

TEST_CASE("gradcheck: shape ops") {
  Tensor gidx = random_int({3, 2}, 0, 4, 80);
  Tensor sidx = random_int({2, 3}, 0, 3, 81);  // duplicates along dim 0
  Tensor isel = ivec({2, 0, 2, 1});
  rt::testing::run_grad_cases({
      {"cat", {{2, 3}, {2, 1}, {2, 4}}, [](const TensorList& x) { return rt::cat(x, 1); }},
      {"cat_dim0_skip_empty", {{0}, {2, 3}, {1, 3}}, [](const TensorList& x) { return rt::cat(x, 0); }},
      {"stack", {{2, 3}, {2, 3}}, [](const TensorList& x) { return rt::stack(x, -1); }},
      {"split", {{5, 2}}, [](const TensorList& x) {
         auto p = x[0].split(2);
         return rt::cat({p[2] * 3, p[0]}, 0);
       }},
      {"split_sizes", {{2, 6}}, [](const TensorList& x) {
         auto p = x[0].split(Shape{1, 3, 2}, 1);
         return rt::cat({p[1], p[0] * p[2].sum({1}, true)}, 1);
       }},
      {"chunk", {{3, 7}}, [](const TensorList& x) {
         auto p = x[0].chunk(3, 1);
         return p[0] * p[1] + p[2].sum({1}, true);
       }},
      {"gather", {{3, 4}}, [gidx](const TensorList& x) { return x[0].gather(1, gidx); }},
      {"gather_dim0", {{4, 3}}, [gidx](const TensorList& x) { return x[0].gather(0, gidx.t().contiguous()); }},
      {"scatter_add", {{3, 3}, {2, 3}}, [sidx](const TensorList& x) { return x[0].scatter_add(0, sidx, x[1]); }},
      {"scatter_add_src_larger", {{3, 3}, {4, 5}}, [sidx](const TensorList& x) { return x[0].scatter_add(0, sidx, x[1]); }},
      {"index_select", {{3, 2}}, [isel](const TensorList& x) { return x[0].index_select(0, isel); }},
      {"index_select_dim1", {{2, 3, 2}}, [isel](const TensorList& x) { return x[0].index_select(1, isel); }},
      {"repeat", {{2, 3}}, [](const TensorList& x) { return x[0].repeat({2, 1, 2}); }},
      {"tril", {{2, 3, 4}}, [](const TensorList& x) { return x[0].tril(1); }},
      {"triu", {{4, 3}}, [](const TensorList& x) { return x[0].triu(-1); }},
  });
}
