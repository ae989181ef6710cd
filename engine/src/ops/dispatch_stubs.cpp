// The stubs of dispatch_stubs.h, constant-initialised so that kernels registering from other
// translation units' initialisers always find them (Note [Kernel table]).
#include "dispatch_stubs.h"

#include <array>

namespace rt::dispatch {

constinit DispatchStub<BinaryKernel> binary{"binary"};
constinit DispatchStub<BinaryScalarKernel> binary_scalar{"binary_scalar"};
constinit DispatchStub<ClampKernel> clamp{"clamp"};
constinit DispatchStub<CompareKernel> compare{"compare"};
constinit DispatchStub<TernaryKernel> ternary{"ternary"};
constinit DispatchStub<WhereKernel> where{"where"};
constinit DispatchStub<UnaryKernel> unary{"unary"};
constinit DispatchStub<UnaryBackwardKernel> unary_backward{"unary_backward"};
constinit DispatchStub<FillKernel> fill{"fill"};
constinit DispatchStub<ReduceKernel> reduce{"reduce"};
constinit DispatchStub<ReduceWithIndicesKernel> reduce_with_indices{"reduce_with_indices"};
constinit DispatchStub<MatmulKernel> matmul{"matmul"};
constinit DispatchStub<Conv2dKernel> conv2d{"conv2d"};
constinit DispatchStub<Conv2dBackwardKernel> conv2d_backward{"conv2d_backward"};
constinit DispatchStub<MaxPool2dKernel> max_pool2d{"max_pool2d"};
constinit DispatchStub<MaxPool2dBackwardKernel> max_pool2d_backward{"max_pool2d_backward"};
constinit DispatchStub<AvgPool2dKernel> avg_pool2d{"avg_pool2d"};
constinit DispatchStub<AvgPool2dBackwardKernel> avg_pool2d_backward{"avg_pool2d_backward"};
constinit DispatchStub<AdaptiveAvgPool2dKernel> adaptive_avg_pool2d{"adaptive_avg_pool2d"};
constinit DispatchStub<AdaptiveAvgPool2dBackwardKernel> adaptive_avg_pool2d_backward{"adaptive_avg_pool2d_backward"};
constinit DispatchStub<SoftmaxKernel> softmax{"softmax"};
constinit DispatchStub<SoftmaxBackwardKernel> softmax_backward{"softmax_backward"};
constinit DispatchStub<RandomFillKernel> random_fill{"random_fill"};
constinit DispatchStub<DropoutKernel> dropout{"dropout"};
constinit DispatchStub<DropoutBackwardKernel> dropout_backward{"dropout_backward"};
constinit DispatchStub<EmbeddingKernel> embedding{"embedding"};
constinit DispatchStub<EmbeddingBackwardKernel> embedding_backward{"embedding_backward"};
constinit DispatchStub<LayerNormKernel> layer_norm{"layer_norm"};
constinit DispatchStub<LayerNormBackwardKernel> layer_norm_backward{"layer_norm_backward"};
constinit DispatchStub<BatchNormKernel> batch_norm{"batch_norm"};
constinit DispatchStub<BatchNormBackwardKernel> batch_norm_backward{"batch_norm_backward"};
constinit DispatchStub<AdamStepKernel> adam_step{"adam_step"};
constinit DispatchStub<SgdStepKernel> sgd_step{"sgd_step"};
constinit DispatchStub<ClassLossKernel> class_loss{"class_loss"};
constinit DispatchStub<ClassLossBackwardKernel> class_loss_backward{"class_loss_backward"};
constinit DispatchStub<IndexSelectKernel> index_select{"index_select"};
constinit DispatchStub<GatherKernel> gather{"gather"};
constinit DispatchStub<ScatterAddKernel> scatter_add{"scatter_add"};
constinit DispatchStub<IndexAddKernel> index_add{"index_add"};

std::span<detail::DispatchStubBase* const> engine_stubs() {
  static const std::array<detail::DispatchStubBase*, 39> all = {
      &binary, &binary_scalar, &clamp, &compare, &ternary, &where, &unary, &unary_backward, &fill, &reduce,
      &reduce_with_indices, &matmul, &conv2d, &conv2d_backward, &max_pool2d, &max_pool2d_backward, &avg_pool2d,
      &avg_pool2d_backward, &adaptive_avg_pool2d, &adaptive_avg_pool2d_backward, &softmax, &softmax_backward,
      &random_fill, &dropout, &dropout_backward, &embedding, &embedding_backward, &layer_norm, &layer_norm_backward,
      &batch_norm, &batch_norm_backward, &adam_step, &sgd_step, &class_loss, &class_loss_backward, &index_select,
      &gather, &scatter_add, &index_add};
  return all;
}

}  // namespace rt::dispatch
