// gather, scatter_add, index_select (backward: index_add), one_hot.
#include <string>

#include "cases.h"

namespace rt::op_check {
namespace {

// Floating dtypes take gradients; integer data checks the byte copies and the integer sums.
constexpr ScalarType kDataTypes[] = {kFloat32, kFloat16, kBFloat16, kFloat64, kInt64};

Tensor data_t(const Shape& s, ScalarType dt) { return is_floating(dt) ? randn_t(s, dt) : randint_t(-50, 50, s, dt); }

std::string dim_variant(int64_t dim, ScalarType dt) { return "dim=" + std::to_string(dim) + " " + std::string(dtype_name(dt)); }

void gathers(OpCheck& check) {
  // Index smaller than the input outside dim; its values cover the dim, repeats included, so the
  // backward's scatter-add sums several gradients into some elements.
  const Shape x_shape{4, 5, 6}, i_shape{3, 4, 5};
  for (ScalarType dt : kDataTypes)
    for (int64_t dim : {0, 1, 2}) {
      Shape is = i_shape;
      is[size_t(dim)] = 7;
      check.run({.op = "gather", .variant = dim_variant(dim, dt), .inputs = {data_t(x_shape, dt), randint_t(0, x_shape[size_t(dim)], is)},
                 .grad = {is_floating(dt), false}, .tol = Tol::Reduction,
                 .fn = one([dim](const TensorList& in, Device) { return rt::gather(in[0], dim, in[1]); })});
    }
  check.run({.op = "gather", .variant = "dim=-1 transposed input", .inputs = {randn_t({6, 4}), randint_t(0, 6, {4, 3})}, .grad = {true, false},
             .tol = Tol::Reduction, .fn = one([](const TensorList& in, Device) { return rt::gather(in[0].t(), -1, in[1]); })});
  check.run({.op = "gather", .variant = "labels [N, 1] (log-likelihood pick)", .inputs = {randn_t({32, 10}), randint_t(0, 10, {32, 1})},
             .grad = {true, false}, .tol = Tol::Reduction,
             .fn = one([](const TensorList& in, Device) { return rt::gather(rt::log_softmax(in[0], 1), 1, in[1]); })});
  check.run({.op = "gather", .variant = "0-dim", .inputs = {randn_t({}), randint_t(0, 1, {})}, .grad = {true, false}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::gather(in[0], 0, in[1]); })});
}

void scatter_adds(OpCheck& check) {
  for (ScalarType dt : kDataTypes)
    for (int64_t dim : {0, 1}) {
      // self [5, 6]; index [8, 4] (dim 0) or [4, 9] (dim 1) fits src [8, 6] / [5, 9] and self outside dim.
      const Shape src_shape = dim == 0 ? Shape{8, 6} : Shape{5, 9}, idx_shape = dim == 0 ? Shape{8, 4} : Shape{4, 9};
      const bool g = is_floating(dt);
      check.run({.op = "scatter_add", .variant = dim_variant(dim, dt),
                 .inputs = {data_t({5, 6}, dt), randint_t(0, dim == 0 ? 5 : 6, idx_shape), data_t(src_shape, dt)},
                 .grad = {g, false, g}, .tol = Tol::Reduction,
                 .fn = one([dim](const TensorList& in, Device) { return rt::scatter_add(in[0], dim, in[1], in[2]); })});
    }
  // Dtypes that sum in an int64 scratch on the GPU (bool: any true).
  for (ScalarType dt : {kInt32, kUInt8, kBool})
    check.run({.op = "scatter_add", .variant = "dim=1 " + std::string(dtype_name(dt)),
               .inputs = {randint_t(0, dt == kBool ? 2 : 100, {4, 5}, dt), randint_t(0, 5, {4, 7}), randint_t(0, dt == kBool ? 2 : 100, {4, 7}, dt)},
               .tol = Tol::Exact, .fn = one([](const TensorList& in, Device) { return rt::scatter_add(in[0], 1, in[1], in[2]); })});
  // ~200 atomic additions per element; positive values keep every sum far from 0, so the bound
  // stays relative to the sum's size whatever order the additions take.
  check.run({.op = "scatter_add", .variant = "heavy repeats", .inputs = {uniform_t({3, 16}, 0, 1), randint_t(0, 3, {600, 16}), uniform_t({600, 16}, 0, 1)},
             .grad = {true, false, true}, .tol = Tol::Reduction,
             .fn = one([](const TensorList& in, Device) { return rt::scatter_add(in[0], 0, in[1], in[2]); })});
  check.run({.op = "scatter_add", .variant = "strided src and self", .inputs = {randn_t({6, 5}), randint_t(0, 5, {4, 6}), randn_t({7, 4})},
             .grad = {true, false, true}, .tol = Tol::Reduction,
             .fn = one([](const TensorList& in, Device) { return rt::scatter_add(in[0].t(), 0, in[1], in[2].t()); })});
  check.run({.op = "scatter_add", .variant = "counts (int64 histogram)", .inputs = {randint_t(0, 10, {1000})}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device d) {
               const auto opts = TensorOptions(kInt64).with_device(d);
               return rt::scatter_add(rt::zeros({10}, opts), 0, in[0], rt::ones({1000}, opts));
             })});
}

void index_selects(OpCheck& check) {
  const Shape x_shape{5, 6, 7};
  for (ScalarType dt : kDataTypes)
    for (int64_t dim : {0, 1, 2})
      for (ScalarType it : {kInt64, kInt32}) {
        if (it == kInt32 && dt != kFloat32) continue;
        check.run({.op = "index_select", .variant = dim_variant(dim, dt) + " index " + std::string(dtype_name(it)),
                   .inputs = {data_t(x_shape, dt), randint_t(0, x_shape[size_t(dim)], {9}, it)}, .grad = {is_floating(dt), false},
                   .tol = Tol::Reduction, .fn = one([dim](const TensorList& in, Device) { return rt::index_select(in[0], dim, in[1]); })});
      }
  check.run({.op = "index_select", .variant = "permuted input", .inputs = {randn_t({7, 5, 6}), randint_t(0, 6, {4})}, .grad = {true, false},
             .tol = Tol::Reduction,
             .fn = one([](const TensorList& in, Device) { return rt::index_select(in[0].permute({1, 2, 0}), 1, in[1]); })});
  check.run({.op = "index_select", .variant = "rows of a wide table, many repeats", .inputs = {randn_t({50, 300}), randint_t(0, 50, {2000})},
             .grad = {true, false}, .tol = Tol::Reduction,
             .fn = one([](const TensorList& in, Device) { return rt::index_select(in[0], 0, in[1]); })});
  check.run({.op = "index_select", .variant = "empty index", .inputs = {randn_t({4, 3}), randint_t(0, 4, {0})}, .grad = {true, false},
             .tol = Tol::Exact, .fn = one([](const TensorList& in, Device) { return rt::index_select(in[0], 0, in[1]); })});
  check.run({.op = "index_select", .variant = "0-dim input and index", .inputs = {randn_t({}), randint_t(0, 1, {})}, .grad = {true, false},
             .tol = Tol::Exact, .fn = one([](const TensorList& in, Device) { return rt::index_select(in[0], 0, in[1]); })});
  // x[idx0, :, idx1] as Python's advanced indexing computes it (python/src/indexing.cpp):
  // permute the indexed dims to the front, flatten them, index_select with the linear index.
  check.run({.op = "index_select", .variant = "advanced indexing x[i, :, j]", .inputs = {randn_t({4, 3, 5}), randint_t(0, 4, {6}), randint_t(0, 5, {6})},
             .grad = {true, false, false}, .tol = Tol::Reduction, .fn = one([](const TensorList& in, Device) {
               const Tensor linear = in[1] * rt::scalar_to_tensor(int64_t(5)) + in[2];
               return rt::index_select(in[0].permute({0, 2, 1}).reshape({20, 3}), 0, linear);
             })});
}

void one_hots(OpCheck& check) {
  check.run({.op = "one_hot", .variant = "num_classes=-1", .inputs = {randint_t(0, 7, {4, 5})}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::one_hot(in[0]); })});
  check.run({.op = "one_hot", .variant = "num_classes=10, int32 labels", .inputs = {randint_t(0, 10, {12}, kInt32)}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::one_hot(in[0], 10); })});
  check.run({.op = "one_hot", .variant = "empty labels", .inputs = {randint_t(0, 3, {0, 2})}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::one_hot(in[0], 3); })});
}

}  // namespace

void add_index_cases(OpCheck& check) {
  gathers(check);
  scatter_adds(check);
  index_selects(check);
  one_hots(check);
}

}  // namespace rt::op_check
