// engine/src/cuda/ops.h in a build without CUDA: no tensor can live on a GPU there (creating
// one throws), so these are unreachable; if something calls them anyway, they say so.
#include "cuda/ops.h"
#include "rt/error.h"

namespace rt::cuda::ops {
namespace {
[[noreturn]] void not_built(const char* op) {
  throw DeviceError(std::string(op) + " on a CUDA tensor: CUDA support was not built into this rustytorch");
}
}  // namespace

void binary(BinaryOp, const Tensor&, const Tensor&, const Tensor&, double) { not_built("binary op"); }
void binary_scalar(BinaryOp, const Tensor&, const Tensor&, const Scalar&) { not_built("binary op"); }
void clamp(const Tensor&, const Tensor&, const std::optional<Scalar>&, const std::optional<Scalar>&) { not_built("clamp"); }
void compare(CompareOp, const Tensor&, const Tensor&, const Tensor&, ScalarType) { not_built("comparison"); }
void ternary(TernaryOp, const Tensor&, const Tensor&, const Tensor&, const Tensor&, double) { not_built("addcmul_/addcdiv_"); }
void where(const Tensor&, const Tensor&, const Tensor&, const Tensor&) { not_built("where"); }
void unary(UnaryOp, const Tensor&, const Tensor&, const cuda_kernels::UnaryParams&) { not_built("unary op"); }
void unary_backward(UnaryBackwardOp, const Tensor&, const Tensor&, const Tensor&, const cuda_kernels::UnaryParams&) {
  not_built("backward of a unary op");
}
void fill(const Tensor&, const Scalar&) { not_built("fill_"); }
void reduce(ReduceOp, const Tensor&, const Tensor&, uint32_t, int64_t) { not_built("reduction"); }
void reduce_with_indices(bool, const Tensor&, const Tensor&, const Tensor&, int64_t) { not_built("max/min along a dim"); }
void matmul(const Tensor&, const Tensor&, const Tensor&, double, double) { not_built("matmul"); }
void conv2d(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const cpu::ConvGeometry&, int64_t) {
  not_built("conv2d");
}
void conv2d_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                     const cpu::ConvGeometry&, int64_t) {
  not_built("convolution_backward");
}
void max_pool2d(const Tensor&, const Tensor&, const Tensor&, const PoolWindow&) { not_built("max_pool2d"); }
void max_pool2d_backward(const Tensor&, const Tensor&, const Tensor&, const PoolWindow&) { not_built("max_pool2d"); }
void avg_pool2d(const Tensor&, const Tensor&, const PoolWindow&, bool) { not_built("avg_pool2d"); }
void avg_pool2d_backward(const Tensor&, const Tensor&, const PoolWindow&, bool) { not_built("avg_pool2d"); }
void adaptive_avg_pool2d(const Tensor&, const Tensor&) { not_built("adaptive_avg_pool2d"); }
void adaptive_avg_pool2d_backward(const Tensor&, const Tensor&) { not_built("adaptive_avg_pool2d"); }
void softmax(const Tensor&, const Tensor&, int64_t, bool) { not_built("softmax"); }
void softmax_backward(const Tensor&, const Tensor&, const Tensor&, int64_t, bool) { not_built("softmax_backward"); }

void random_fill(const Tensor&, bool, double, double) { not_built("random fill"); }
void dropout(const Tensor&, const Tensor&, const Tensor&, double) { not_built("dropout"); }
void dropout_backward(const Tensor&, const Tensor&, const Tensor&, double) { not_built("dropout_backward"); }
void embedding(const Tensor&, const Tensor&, const Tensor&) { not_built("embedding"); }
void embedding_backward(const Tensor&, const Tensor&, const Tensor&, int64_t) { not_built("embedding_backward"); }
void layer_norm(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, int64_t, double) {
  not_built("layer_norm");
}
void layer_norm_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                         const Tensor&, const Tensor&, int64_t) {
  not_built("layer_norm_backward");
}
void batch_norm(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                const Tensor&, bool, double, double) {
  not_built("batch_norm");
}
void batch_norm_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                         const Tensor&, const Tensor&, bool) {
  not_built("batch_norm_backward");
}
void adam_step(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const cuda_kernels::AdamStepParams&) {
  not_built("Adam step");
}
void sgd_step(const Tensor&, const Tensor&, const Tensor&, const cuda_kernels::SgdStepParams&) { not_built("SGD step"); }
void class_loss(const Tensor&, const ClassLossArgs&) { not_built("cross_entropy"); }
void class_loss_backward(const Tensor&, const Tensor&, const ClassLossArgs&) { not_built("cross_entropy_backward"); }

}  // namespace rt::cuda::ops
