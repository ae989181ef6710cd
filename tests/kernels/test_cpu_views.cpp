// The CPU kernels on plain views (kernels/cpu/tensor_view.h): strided, broadcast and permuted
// operands, the reduction layout, batched GEMM and its stop request. No engine tensor is made here:
// the kernels need only memory and views.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <numeric>
#include <vector>

#include "cpu/gemm.h"
#include "cpu/loops.h"
#include "cpu/reduce.h"
#include "cpu/tensor_view.h"
#include "rt/error.h"

using rt::cpu::TensorView;

namespace {

std::vector<float> iota(size_t n, float start = 0) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

}  // namespace

TEST_CASE("a dense view has row-major strides, permuted reorders sizes and strides alike") {
  std::vector<float> x = iota(24);
  const TensorView v = TensorView::dense(x.data(), rt::kFloat32, {2, 3, 4});
  CHECK(v.numel() == 24);
  CHECK(v.strides[0] == 12);
  CHECK(v.strides[1] == 4);
  CHECK(v.strides[2] == 1);
  CHECK(v.is_contiguous());
  const TensorView p = v.permuted({2, 0, 1});
  CHECK(p.shape() == rt::Shape{4, 2, 3});
  CHECK(p.strides[0] == 1);
  CHECK(p.strides[1] == 12);
  CHECK_FALSE(p.is_contiguous());
  CHECK_THROWS_AS(v.permuted({0, 1}), rt::IndexError);
  CHECK_THROWS_AS(TensorView::dense(x.data(), rt::kFloat32, rt::Shape(17, 1)), rt::NotImplementedError);
}

TEST_CASE("copy_kernel writes a transposed view densely, converting dtypes") {
  std::vector<float> x = iota(6);  // [[0, 1, 2], [3, 4, 5]]
  std::vector<double> out(6, -1);
  const TensorView src = TensorView::dense(x.data(), rt::kFloat32, {2, 3}).permuted({1, 0});
  rt::cpu::copy_kernel(TensorView::dense(out.data(), rt::kFloat64, {3, 2}), src);
  CHECK(out == std::vector<double>{0, 3, 1, 4, 2, 5});
}

TEST_CASE("binary_kernel broadcasts a stride-0 operand across rows") {
  std::vector<float> a = iota(6), b = {10, 20, 30}, out(6);
  TensorView row = TensorView::dense(b.data(), rt::kFloat32, {1, 3});
  row.sizes[0] = 2;
  row.strides[0] = 0;
  rt::cpu::ElementwiseLoop loop(TensorView::dense(out.data(), rt::kFloat32, {2, 3}),
                                {TensorView::dense(a.data(), rt::kFloat32, {2, 3}), row});
  rt::cpu::binary_kernel<float>(loop, [](float x, float y) { return x + y; });
  CHECK(out == std::vector<float>{10, 21, 32, 13, 24, 35});
}

TEST_CASE("a reduction's rows view is contiguous only when the reduced dims already are last and dense") {
  std::vector<float> x = iota(24);
  const TensorView v = TensorView::dense(x.data(), rt::kFloat32, {2, 3, 4});
  const auto last = rt::cpu::ReducePlan::describe(v.shape(), {-1}, false, "sum");
  CHECK(last.outer == 6);
  CHECK(last.inner == 4);
  CHECK(last.rows_view(v).is_contiguous());
  const auto middle = rt::cpu::ReducePlan::describe(v.shape(), {1}, true, "sum");
  CHECK(middle.out_shape == rt::Shape{2, 1, 4});
  CHECK(middle.permutation(3) == rt::Shape{0, 2, 1});
  const TensorView rows = middle.rows_view(v);
  CHECK_FALSE(rows.is_contiguous());
  std::vector<float> dense(24);
  rt::cpu::copy_kernel(TensorView::dense(dense.data(), rt::kFloat32, rows.shape()), rows);
  // Row (0, 0) reduces x[0, :, 0] = 0, 4, 8.
  CHECK(dense[0] == 0);
  CHECK(dense[1] == 4);
  CHECK(dense[2] == 8);
  CHECK_THROWS_AS(rt::cpu::ReducePlan::describe(v.shape(), {1, -2}, false, "sum"), rt::IndexError);
}

TEST_CASE("batched_matmul reads a column-contiguous operand in place and stops when asked") {
  // a [2, 2, 3] batch, b a transposed [3, 2] view broadcast over the batch (stride 0).
  std::vector<float> a = iota(12), bt = iota(6, 1), out(8, -1);  // bt is b.T stored [2, 3]
  const TensorView av = TensorView::dense(a.data(), rt::kFloat32, {2, 2, 3});
  TensorView bv = TensorView::dense(bt.data(), rt::kFloat32, {1, 2, 3}).permuted({0, 2, 1});
  bv.sizes[0] = 2;
  bv.strides[0] = 0;
  const rt::cpu::MatrixLayout layout = rt::cpu::matrix_layout(bv);
  CHECK(layout.ok);
  CHECK(layout.trans);
  const TensorView ov = TensorView::dense(out.data(), rt::kFloat32, {2, 2, 2});
  rt::cpu::batched_matmul(ov, av, bv, 1.0, 0.0);
  // out[0][0][0] = [0, 1, 2] . [1, 2, 3] = 8; out[1][1][1] = [9, 10, 11] . [4, 5, 6] = 152.
  CHECK(out[0] == 8);
  CHECK(out[7] == 152);

  std::vector<float> stopped(8, -1);
  std::atomic<bool> stop{true};
  const rt::cpu::StopRequest request{[](const void* s) { return static_cast<const std::atomic<bool>*>(s)->load(); }, &stop};
  TensorView a_rows = av;  // batch dims that do not fold into rows: one GEMM per batch entry
  a_rows.strides[0] = 0;
  rt::cpu::batched_matmul(TensorView::dense(stopped.data(), rt::kFloat32, {2, 2, 2}), a_rows, bv, 1.0, 0.0, request);
  CHECK(stopped == std::vector<float>(8, -1));  // asked before the first GEMM: nothing written

  TensorView strided = av;
  strided.strides[2] = 2;  // neither row- nor column-contiguous
  CHECK_FALSE(rt::cpu::matrix_layout(strided).ok);
  CHECK_THROWS_AS(rt::cpu::batched_matmul(ov, strided, bv, 1.0, 0.0), rt::ValueError);
}
