// matmul in every shape family (2-D, batched, broadcast batch, transposed operands, 1-D), mm, bmm,
// linear, addmm; cuBLAS with TF32 off, so float32 must match the CPU closely.
#include "cases.h"

namespace rt::op_check {
namespace {

struct MatmulShapes {
  const char* variant;
  Shape a, b;
};

const MatmulShapes kMatmuls[] = {
    {"2-D", {7, 13}, {13, 5}},
    {"2-D square 64", {64, 64}, {64, 64}},
    {"batched", {3, 7, 13}, {3, 13, 5}},
    {"broadcast batch", {2, 1, 7, 13}, {4, 13, 5}},
    {"batched @ 2-D", {3, 7, 13}, {13, 5}},
    {"2-D @ batched", {7, 13}, {3, 13, 5}},
    {"1-D @ 1-D", {13}, {13}},
    {"2-D @ 1-D", {7, 13}, {13}},
    {"1-D @ 2-D", {13}, {13, 5}},
    {"1-D @ batched", {13}, {3, 13, 5}},
    {"batched @ 1-D", {3, 7, 13}, {13}},
    {"odd sizes", {33, 127}, {127, 65}},
};

}  // namespace

void add_linalg_cases(OpCheck& check) {
  for (const MatmulShapes& m : kMatmuls)
    for (ScalarType dt : {kFloat32, kFloat16, kBFloat16, kFloat64})
      check.run({.op = "matmul", .variant = m.variant, .inputs = {randn_t(m.a, dt), randn_t(m.b, dt)}, .grad = {true, true},
                 .tol = Tol::Matmul, .fn = one([](const TensorList& in, Device) { return rt::matmul(in[0], in[1]); })});
  // Transposed operands: cuBLAS reads them in place (op T) or after a copy; either way the same values.
  for (ScalarType dt : {kFloat32, kFloat16}) {
    check.run({.op = "matmul", .variant = "a^T @ b", .inputs = {randn_t({13, 7}, dt), randn_t({13, 5}, dt)}, .grad = {true, true},
               .tol = Tol::Matmul, .fn = one([](const TensorList& in, Device) { return rt::matmul(in[0].t(), in[1]); })});
    check.run({.op = "matmul", .variant = "a @ b^T", .inputs = {randn_t({7, 13}, dt), randn_t({5, 13}, dt)}, .grad = {true, true},
               .tol = Tol::Matmul, .fn = one([](const TensorList& in, Device) { return rt::matmul(in[0], in[1].t()); })});
    check.run({.op = "matmul", .variant = "a^T @ b^T batched", .inputs = {randn_t({3, 13, 7}, dt), randn_t({3, 5, 13}, dt)},
               .grad = {true, true}, .tol = Tol::Matmul,
               .fn = one([](const TensorList& in, Device) { return rt::matmul(in[0].transpose(1, 2), in[1].transpose(-1, -2)); })});
    check.run({.op = "matmul", .variant = "sliced rows and columns", .inputs = {randn_t({9, 20}, dt), randn_t({20, 11}, dt)},
               .grad = {true, true}, .tol = Tol::Matmul,
               .fn = one([](const TensorList& in, Device) { return rt::matmul(in[0].narrow(1, 3, 12), in[1].narrow(0, 2, 12).narrow(1, 1, 8)); })});
    check.run({.op = "matmul", .variant = "expanded batch (stride 0)", .inputs = {randn_t({1, 6, 4}, dt), randn_t({3, 4, 5}, dt)},
               .grad = {true, true}, .tol = Tol::Matmul,
               .fn = one([](const TensorList& in, Device) { return rt::matmul(in[0].expand({3, 6, 4}), in[1]); })});
  }
  check.run({.op = "matmul", .variant = "large", .inputs = {randn_t({256, 512}), randn_t({512, 384})}, .grad = {true, true},
             .tol = Tol::Matmul, .fn = one([](const TensorList& in, Device) { return rt::matmul(in[0], in[1]); })});
  check.run({.op = "matmul", .variant = "empty inner dim", .inputs = {randn_t({4, 0}), randn_t({0, 3})}, .grad = {true, true},
             .tol = Tol::Matmul, .fn = one([](const TensorList& in, Device) { return rt::matmul(in[0], in[1]); })});
  for (ScalarType dt : kFloatTypes) {
    check.run({.op = "mm", .inputs = {randn_t({8, 16}, dt), randn_t({16, 4}, dt)}, .grad = {true, true}, .tol = Tol::Matmul,
               .fn = one([](const TensorList& in, Device) { return rt::mm(in[0], in[1]); })});
    check.run({.op = "bmm", .inputs = {randn_t({5, 8, 16}, dt), randn_t({5, 16, 4}, dt)}, .grad = {true, true}, .tol = Tol::Matmul,
               .fn = one([](const TensorList& in, Device) { return rt::bmm(in[0], in[1]); })});
    check.run({.op = "linear", .variant = "bias", .inputs = {randn_t({6, 20}, dt), randn_t({12, 20}, dt), randn_t({12}, dt)},
               .grad = {true, true, true}, .tol = Tol::Matmul,
               .fn = one([](const TensorList& in, Device) { return rt::linear(in[0], in[1], in[2]); })});
    check.run({.op = "linear", .variant = "no bias, 3-D input", .inputs = {randn_t({2, 6, 20}, dt), randn_t({12, 20}, dt)},
               .grad = {true, true}, .tol = Tol::Matmul, .fn = one([](const TensorList& in, Device) { return rt::linear(in[0], in[1]); })});
    check.run({.op = "linear", .variant = "bias, 1-D input", .inputs = {randn_t({20}, dt), randn_t({12, 20}, dt), randn_t({12}, dt)},
               .grad = {true, true, true}, .tol = Tol::Matmul,
               .fn = one([](const TensorList& in, Device) { return rt::linear(in[0], in[1], in[2]); })});
    check.run({.op = "addmm", .inputs = {randn_t({8, 4}, dt), randn_t({8, 16}, dt), randn_t({16, 4}, dt)}, .grad = {true, true, true},
               .tol = Tol::Matmul, .fn = one([](const TensorList& in, Device) { return rt::addmm(in[0], in[1], in[2]); })});
    check.run({.op = "addmm", .variant = "beta=0.5 alpha=-2 broadcast self", .inputs = {randn_t({4}, dt), randn_t({8, 16}, dt), randn_t({16, 4}, dt)},
               .grad = {true, true, true}, .tol = Tol::Matmul,
               .fn = one([](const TensorList& in, Device) { return rt::addmm(in[0], in[1], in[2], 0.5, -2); })});
  }
}

}  // namespace rt::op_check
