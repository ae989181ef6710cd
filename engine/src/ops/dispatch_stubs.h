// Internal: the kernels the engine's ops dispatch by device (rt/dispatch_stub.h), one stub each.
//
//   Tensor out = make_tensor(shape, dtype, device);            // the op has checked shapes and dtypes
//   if (!out.is_cpu()) return dispatch::binary(out.device(), dispatch::BinaryOp::Add, out, a, b, 1.0);
//
// The calling op has resolved the device (op_device.h) and allocated its outputs there. The CUDA
// backend registers a kernel for every stub (engine/src/cuda/ops_*.cpp); they make the launch:
// broadcast inputs are expanded to out's shape, 0-dim CPU operands (Python numbers) become scalar
// kernels, scratch memory comes from the device's caching allocator, and the launch goes to the
// device's stream. A build without CUDA registers none, and has no GPU tensors to call them with.
// CPU kernels are registered for matmul, clamp, where, fill, softmax, softmax_backward, layer_norm and
// random_fill (those ops call their stub for every device); the other ops still run their CPU loops inline and call the stub off the host, until their
// CPU kernels move here too. A device without a kernel for a stub gets the stub's DeviceError.
#pragma once
#include <cstdint>
#include <optional>
#include <span>

#include "cpu/im2col.h"
#include "../../kernels/cuda/binary.h"
#include "../../kernels/cuda/cross_entropy.h"
#include "../../kernels/cuda/optimizer_step.h"
#include "../../kernels/cuda/pooling.h"
#include "../../kernels/cuda/reduce.h"
#include "../../kernels/cuda/ternary.h"
#include "../../kernels/cuda/unary.h"
#include "../../kernels/cuda/unary_backward.h"
#include "rt/dispatch_stub.h"
#include "rt/export.h"
#include "rt/tensor.h"

// Exported from rt_engine (rt/export.h): tests and plugins register and call kernels on these stubs.
RT_API_BEGIN

namespace rt::dispatch {

using cuda_kernels::BinaryOp;
using cuda_kernels::CompareOp;
using cuda_kernels::ReduceOp;
using cuda_kernels::TernaryOp;
using cuda_kernels::UnaryBackwardOp;
using cuda_kernels::UnaryOp;

// out = a op b (alpha as in kernels/cuda/binary.h), computed in out.dtype.
using BinaryKernel = void(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, double alpha);
extern DispatchStub<BinaryKernel> binary;
// out = a op s (binary.h's binary_scalar), computed in out.dtype.
using BinaryScalarKernel = void(BinaryOp op, const Tensor& out, const Tensor& a, const Scalar& s);
extern DispatchStub<BinaryScalarKernel> binary_scalar;
// out = clamp(x, lo, hi) in out.dtype, either bound optional.
using ClampKernel = void(const Tensor& out, const Tensor& x, const std::optional<Scalar>& lo,
                         const std::optional<Scalar>& hi);
extern DispatchStub<ClampKernel> clamp;
// out (bool) = a cmp b, compared in `compute`.
using CompareKernel = void(CompareOp op, const Tensor& out, const Tensor& a, const Tensor& b, ScalarType compute);
extern DispatchStub<CompareKernel> compare;
// out = a + value * b * c (AddCMul) or a + value * b / c (AddCDiv); out may be a (in place).
using TernaryKernel = void(TernaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& c,
                         double value);
extern DispatchStub<TernaryKernel> ternary;
// out = cond ? a : b.
using WhereKernel = void(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
extern DispatchStub<WhereKernel> where;
using UnaryKernel = void(UnaryOp op, const Tensor& out, const Tensor& x, const cuda_kernels::UnaryParams& params);
extern DispatchStub<UnaryKernel> unary;
// grad_in = f'(saved) * grad_out, f' as the CPU backward of the op (saved: its input or output).
using UnaryBackwardKernel = void(UnaryBackwardOp op, const Tensor& grad_in, const Tensor& grad_out,
                         const Tensor& saved, const cuda_kernels::UnaryParams& params);
extern DispatchStub<UnaryBackwardKernel> unary_backward;
using FillKernel = void(const Tensor& out, const Scalar& value);
extern DispatchStub<FillKernel> fill;
// out holds one element per kept position (row-major); dim_mask bit d reduces dim d, 0: all.
using ReduceKernel = void(ReduceOp op, const Tensor& out, const Tensor& in, uint32_t dim_mask, int64_t correction);
extern DispatchStub<ReduceKernel> reduce;
// max(dim)/min(dim): values and int64 indices along `dim`, one element per kept position.
using ReduceWithIndicesKernel = void(bool is_max, const Tensor& values, const Tensor& indices, const Tensor& in,
                         int64_t dim);
extern DispatchStub<ReduceWithIndicesKernel> reduce_with_indices;

// out = alpha * a @ b + beta * out, as kernels/cpu/gemm.h's batched_matmul: a [..., m, k],
// b [..., k, n], out contiguous [..., m, n], batch dims equal out's (stride 0 broadcasts).
// Through cuBLAS; operands cuBLAS cannot read in place are made contiguous first.
using MatmulKernel = void(const Tensor& out, const Tensor& a, const Tensor& b, double alpha, double beta);
extern DispatchStub<MatmulKernel> matmul;

// conv2d of contiguous input [N, groups*g.C, H, W] with weight [Cout, g.C, kH, kW] (+ bias [Cout]) into
// out [N, Cout, oH, oW]: im2col + batched GEMM per group (kernels/cuda/im2col.h). The backward
// writes whichever of grad_input, grad_weight, grad_bias is defined.
using Conv2dKernel = void(const Tensor& out, const Tensor& input, const Tensor& weight, const Tensor& bias,
                         const cpu::ConvGeometry& g, int64_t groups);
extern DispatchStub<Conv2dKernel> conv2d;
using Conv2dBackwardKernel = void(const Tensor& grad_input, const Tensor& grad_weight, const Tensor& grad_bias,
                         const Tensor& grad_out, const Tensor& input, const Tensor& weight,
                         const cpu::ConvGeometry& g, int64_t groups);
extern DispatchStub<Conv2dBackwardKernel> conv2d_backward;

// 2-D pooling over the last two dims of contiguous tensors (kernels/cuda/pooling.h).
using cuda_kernels::PoolWindow;
using MaxPool2dKernel = void(const Tensor& out, const Tensor& indices, const Tensor& input, const PoolWindow& w);
extern DispatchStub<MaxPool2dKernel> max_pool2d;
using MaxPool2dBackwardKernel = void(const Tensor& grad_input, const Tensor& grad_out, const Tensor& indices,
                         const PoolWindow& w);
extern DispatchStub<MaxPool2dBackwardKernel> max_pool2d_backward;
using AvgPool2dKernel = void(const Tensor& out, const Tensor& input, const PoolWindow& w, bool count_include_pad);
extern DispatchStub<AvgPool2dKernel> avg_pool2d;
using AvgPool2dBackwardKernel = void(const Tensor& grad_input, const Tensor& grad_out, const PoolWindow& w,
                         bool count_include_pad);
extern DispatchStub<AvgPool2dBackwardKernel> avg_pool2d_backward;
// adaptive_avg_pool2d to out's last two sizes (PyTorch's floor/ceil windows), and its backward.
using AdaptiveAvgPool2dKernel = void(const Tensor& out, const Tensor& input);
extern DispatchStub<AdaptiveAvgPool2dKernel> adaptive_avg_pool2d;
using AdaptiveAvgPool2dBackwardKernel = void(const Tensor& grad_input, const Tensor& grad_out);
extern DispatchStub<AdaptiveAvgPool2dBackwardKernel> adaptive_avg_pool2d_backward;

// Softmax or log-softmax of x along dim, and its backward from the output y.
using SoftmaxKernel = void(const Tensor& out, const Tensor& x, int64_t dim, bool log);
extern DispatchStub<SoftmaxKernel> softmax;
using SoftmaxBackwardKernel = void(const Tensor& grad_in, const Tensor& y, const Tensor& grad, int64_t dim, bool log);
extern DispatchStub<SoftmaxBackwardKernel> softmax_backward;

// Fills contiguous floating t from the default generator's Philox stream, reserving the
// counters the CPU would (kernels/cuda/random_fill.h): normal ? N(a, b) : U[a, b).
using RandomFillKernel = void(const Tensor& t, bool normal, double a, double b);
extern DispatchStub<RandomFillKernel> random_fill;
// Inverted dropout of contiguous x (0 < p < 1): out = x * mask / (1 - p), mask (bool) drawn as
// the CPU's dropout draws it; and its backward.
using DropoutKernel = void(const Tensor& out, const Tensor& mask, const Tensor& x, double p);
extern DispatchStub<DropoutKernel> dropout;
using DropoutBackwardKernel = void(const Tensor& grad_input, const Tensor& grad_out, const Tensor& mask, double scale);
extern DispatchStub<DropoutBackwardKernel> dropout_backward;
// Rows of weight [V, D] gathered by int64 indices (IndexError for an index outside [0, V)),
// and the scatter-add backward into grad_weight [V, D] (zeroed here), skipping padding_idx.
using EmbeddingKernel = void(const Tensor& out, const Tensor& weight, const Tensor& indices);
extern DispatchStub<EmbeddingKernel> embedding;
using EmbeddingBackwardKernel = void(const Tensor& grad_weight, const Tensor& grad_out, const Tensor& indices,
                         int64_t padding_idx);
extern DispatchStub<EmbeddingBackwardKernel> embedding_backward;

// layer_norm over the last D elements of contiguous x; mean/rstd float64 [M]. The backward
// writes whichever of grad_input, grad_weight, grad_bias is defined.
using LayerNormKernel = void(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& x,
                         const Tensor& weight, const Tensor& bias, int64_t D, double eps);
extern DispatchStub<LayerNormKernel> layer_norm;
using LayerNormBackwardKernel = void(const Tensor& grad_input, const Tensor& grad_weight, const Tensor& grad_bias,
                         const Tensor& grad_out, const Tensor& x, const Tensor& weight, const Tensor& mean,
                         const Tensor& rstd, int64_t D);
extern DispatchStub<LayerNormBackwardKernel> layer_norm_backward;

// batch_norm over contiguous x [N, C, *]: running stats updated in place when training;
// save_mean/save_invstd float64 [C] for the backward (kernels/cuda/batch_norm.h).
using BatchNormKernel = void(const Tensor& out, const Tensor& save_mean, const Tensor& save_invstd, const Tensor& x,
                         const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                         const Tensor& running_var, bool training, double momentum, double eps);
extern DispatchStub<BatchNormKernel> batch_norm;
using BatchNormBackwardKernel = void(const Tensor& grad_input, const Tensor& grad_weight, const Tensor& grad_bias,
                         const Tensor& grad_out, const Tensor& x, const Tensor& weight, const Tensor& save_mean,
                         const Tensor& save_invstd, bool training);
extern DispatchStub<BatchNormBackwardKernel> batch_norm_backward;

// Fused in-place optimizer updates of one contiguous parameter (kernels/cuda/optimizer_step.h),
// the same arithmetic as the CPU's chain of ops. Undefined max_exp_avg_sq: no amsgrad; undefined
// momentum_buffer: no momentum.
using AdamStepKernel = void(const Tensor& param, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                         const Tensor& max_exp_avg_sq, const Tensor& grad,
                         const cuda_kernels::AdamStepParams& params);
extern DispatchStub<AdamStepKernel> adam_step;
using SgdStepKernel = void(const Tensor& param, const Tensor& momentum_buffer, const Tensor& grad,
                         const cuda_kernels::SgdStepParams& params);
extern DispatchStub<SgdStepKernel> sgd_step;

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
using ClassLossKernel = void(const Tensor& out, const ClassLossArgs& a);
extern DispatchStub<ClassLossKernel> class_loss;
using ClassLossBackwardKernel = void(const Tensor& grad_input, const Tensor& grad_out, const ClassLossArgs& a);
extern DispatchStub<ClassLossBackwardKernel> class_loss_backward;

// ---- indexing (kernels/cuda/index.h) ---------------------------------------------------------
// `index` is int64 and contiguous; `out` is contiguous; `t` and `src` may be views with any
// strides; 0-dim operands were made 1-element vectors. A bad index throws rt::IndexError (the CUDA
// kernels check on the device and wait for the stream once to read the flag).

// out = t.index_select(dim, index): index 1-D, out's sizes t's with out.size(dim) = index.numel().
using IndexSelectKernel = void(const Tensor& out, const Tensor& t, int64_t dim, const Tensor& index);
extern DispatchStub<IndexSelectKernel> index_select;
// out = t.gather(dim, index): out has index's sizes, which fit in t outside dim.
using GatherKernel = void(const Tensor& out, const Tensor& t, int64_t dim, const Tensor& index);
extern DispatchStub<GatherKernel> gather;
// out[p with p[dim] = index[p]] += src[p] for p over index's shape, in place; any dtype.
// Floating sums use atomics: their order, and so the last bits, are not fixed.
using ScatterAddKernel = void(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src);
extern DispatchStub<ScatterAddKernel> scatter_add;
// out[..., index[k], ...] += src[..., k, ...] in place (index_add, the backward of index_select):
// index 1-D with src.size(dim) values, src's sizes out's outside dim.
using IndexAddKernel = void(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src);
extern DispatchStub<IndexAddKernel> index_add;

// Every stub above, for tests and tools that check what a backend registered.
std::span<detail::DispatchStubBase* const> engine_stubs();

}  // namespace rt::dispatch

RT_API_END
