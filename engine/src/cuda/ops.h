// Internal: the engine's ops on CUDA tensors, called from engine/src/ops/*.cpp when an op's
// operands are on a GPU (docs/cuda.md lists which ops have one).
//
//   if (out.is_cuda()) return cuda::ops::binary(BinaryOp::Add, out, a, b, alpha);
//
// The calling op has already checked shapes and dtypes, resolved the device (op_device.h) and
// allocated `out` there; these functions make the launch: broadcast inputs are expanded to
// out's shape, 0-dim CPU operands (Python numbers) become scalar kernels, scratch memory comes
// from the device's caching allocator, and the launch goes to the device's stream. Built with
// the CUDA backend (engine/src/cuda/ops_*.cpp); engine/src/cuda/stub/ otherwise, where they
// cannot be reached (no tensor can be on a GPU) and throw if they are.
#pragma once
#include <cstdint>
#include <optional>

#include "../../kernels/cpu/im2col.h"
#include "../../kernels/cuda/binary.h"
#include "../../kernels/cuda/cross_entropy.h"
#include "../../kernels/cuda/optimizer_step.h"
#include "../../kernels/cuda/pooling.h"
#include "../../kernels/cuda/reduce.h"
#include "../../kernels/cuda/ternary.h"
#include "../../kernels/cuda/unary.h"
#include "../../kernels/cuda/unary_backward.h"
#include "rt/tensor.h"

namespace rt::cuda::ops {

using cuda_kernels::BinaryOp;
using cuda_kernels::CompareOp;
using cuda_kernels::ReduceOp;
using cuda_kernels::TernaryOp;
using cuda_kernels::UnaryBackwardOp;
using cuda_kernels::UnaryOp;

// out = a op b (alpha as in kernels/cuda/binary.h), computed in out.dtype.
void binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, double alpha = 1.0);
// out = a op s (binary.h's binary_scalar), computed in out.dtype.
void binary_scalar(BinaryOp op, const Tensor& out, const Tensor& a, const Scalar& s);
// out = clamp(x, lo, hi) in out.dtype, either bound optional.
void clamp(const Tensor& out, const Tensor& x, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi);
// out (bool) = a cmp b, compared in `compute`.
void compare(CompareOp op, const Tensor& out, const Tensor& a, const Tensor& b, ScalarType compute);
// out = a + value * b * c (AddCMul) or a + value * b / c (AddCDiv); out may be a (in place).
void ternary(TernaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& c, double value);
// out = cond ? a : b.
void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
void unary(UnaryOp op, const Tensor& out, const Tensor& x, const cuda_kernels::UnaryParams& params = {});
// grad_in = f'(saved) * grad_out, f' as the CPU backward of the op (saved: its input or output).
void unary_backward(UnaryBackwardOp op, const Tensor& grad_in, const Tensor& grad_out, const Tensor& saved,
                    const cuda_kernels::UnaryParams& params = {});
void fill(const Tensor& out, const Scalar& value);
// out holds one element per kept position (row-major); dim_mask bit d reduces dim d, 0: all.
void reduce(ReduceOp op, const Tensor& out, const Tensor& in, uint32_t dim_mask, int64_t correction = 0);
// max(dim)/min(dim): values and int64 indices along `dim`, one element per kept position.
void reduce_with_indices(bool is_max, const Tensor& values, const Tensor& indices, const Tensor& in, int64_t dim);

// out = alpha * a @ b + beta * out, as cpu::matmul_into (kernels/cpu/gemm.h): a [..., m, k],
// b [..., k, n], out contiguous [..., m, n], batch dims equal out's (stride 0 broadcasts).
// Through cuBLAS; operands cuBLAS cannot read in place are made contiguous first.
void matmul(const Tensor& out, const Tensor& a, const Tensor& b, double alpha = 1.0, double beta = 0.0);

// conv2d of contiguous input [N, groups*g.C, H, W] with weight [Cout, g.C, kH, kW] (+ bias [Cout]) into
// out [N, Cout, oH, oW]: im2col + batched GEMM per group (kernels/cuda/im2col.h). The backward
// writes whichever of grad_input, grad_weight, grad_bias is defined.
void conv2d(const Tensor& out, const Tensor& input, const Tensor& weight, const Tensor& bias,
            const cpu::ConvGeometry& g, int64_t groups);
void conv2d_backward(const Tensor& grad_input, const Tensor& grad_weight, const Tensor& grad_bias,
                     const Tensor& grad_out, const Tensor& input, const Tensor& weight, const cpu::ConvGeometry& g,
                     int64_t groups);

// 2-D pooling over the last two dims of contiguous tensors (kernels/cuda/pooling.h).
using cuda_kernels::PoolWindow;
void max_pool2d(const Tensor& out, const Tensor& indices, const Tensor& input, const PoolWindow& w);
void max_pool2d_backward(const Tensor& grad_input, const Tensor& grad_out, const Tensor& indices, const PoolWindow& w);
void avg_pool2d(const Tensor& out, const Tensor& input, const PoolWindow& w, bool count_include_pad);
void avg_pool2d_backward(const Tensor& grad_input, const Tensor& grad_out, const PoolWindow& w, bool count_include_pad);
// adaptive_avg_pool2d to out's last two sizes (PyTorch's floor/ceil windows), and its backward.
void adaptive_avg_pool2d(const Tensor& out, const Tensor& input);
void adaptive_avg_pool2d_backward(const Tensor& grad_input, const Tensor& grad_out);

// Softmax or log-softmax of x along dim, and its backward from the output y.
void softmax(const Tensor& out, const Tensor& x, int64_t dim, bool log);
void softmax_backward(const Tensor& grad_in, const Tensor& y, const Tensor& grad, int64_t dim, bool log);

// Fills contiguous floating t from the default generator's Philox stream, reserving the
// counters the CPU would (kernels/cuda/random_fill.h): normal ? N(a, b) : U[a, b).
void random_fill(const Tensor& t, bool normal, double a, double b);
// Inverted dropout of contiguous x (0 < p < 1): out = x * mask / (1 - p), mask (bool) drawn as
// the CPU's dropout draws it; and its backward.
void dropout(const Tensor& out, const Tensor& mask, const Tensor& x, double p);
void dropout_backward(const Tensor& grad_input, const Tensor& grad_out, const Tensor& mask, double scale);
// Rows of weight [V, D] gathered by int64 indices (IndexError for an index outside [0, V)),
// and the scatter-add backward into grad_weight [V, D] (zeroed here), skipping padding_idx.
void embedding(const Tensor& out, const Tensor& weight, const Tensor& indices);
void embedding_backward(const Tensor& grad_weight, const Tensor& grad_out, const Tensor& indices, int64_t padding_idx);

// layer_norm over the last D elements of contiguous x; mean/rstd float64 [M]. The backward
// writes whichever of grad_input, grad_weight, grad_bias is defined.
void layer_norm(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& x, const Tensor& weight,
                const Tensor& bias, int64_t D, double eps);
void layer_norm_backward(const Tensor& grad_input, const Tensor& grad_weight, const Tensor& grad_bias,
                         const Tensor& grad_out, const Tensor& x, const Tensor& weight, const Tensor& mean,
                         const Tensor& rstd, int64_t D);

// batch_norm over contiguous x [N, C, *]: running stats updated in place when training;
// save_mean/save_invstd float64 [C] for the backward (kernels/cuda/batch_norm.h).
void batch_norm(const Tensor& out, const Tensor& save_mean, const Tensor& save_invstd, const Tensor& x,
                const Tensor& weight, const Tensor& bias, const Tensor& running_mean, const Tensor& running_var,
                bool training, double momentum, double eps);
void batch_norm_backward(const Tensor& grad_input, const Tensor& grad_weight, const Tensor& grad_bias,
                         const Tensor& grad_out, const Tensor& x, const Tensor& weight, const Tensor& save_mean,
                         const Tensor& save_invstd, bool training);

// Fused in-place optimizer updates of one contiguous parameter (kernels/cuda/optimizer_step.h),
// the same arithmetic as the CPU's chain of ops. Undefined max_exp_avg_sq: no amsgrad; undefined
// momentum_buffer: no momentum.
void adam_step(const Tensor& param, const Tensor& exp_avg, const Tensor& exp_avg_sq, const Tensor& max_exp_avg_sq,
               const Tensor& grad, const cuda_kernels::AdamStepParams& params);
void sgd_step(const Tensor& param, const Tensor& momentum_buffer, const Tensor& grad,
              const cuda_kernels::SgdStepParams& params);

// cross_entropy (logits) or nll_loss over contiguous x [N, C, ...] and int64 target: out is
// 0-dim or target-shaped ('none'), lse float64 [S] (logits only), total_weight float64 [1];
// the backward reads them back. Throws IndexError for a target outside [0, C).
using cuda_kernels::LossReduction;
struct ClassLossArgs {
  Tensor x, target, weight, lse, total_weight;  // weight and lse may be undefined
  int64_t ignore_index = -100;
  LossReduction reduction = LossReduction::Mean;
  double label_smoothing = 0.0;
  bool logits = true;
};
void class_loss(const Tensor& out, const ClassLossArgs& a);
void class_loss_backward(const Tensor& grad_input, const Tensor& grad_out, const ClassLossArgs& a);

}  // namespace rt::cuda::ops
