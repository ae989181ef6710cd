// Elementwise ops, fills and reductions on CUDA tensors (see engine/src/ops/dispatch_stubs.h).
#include "../../kernels/cuda/copy.h"
#include "../../kernels/cuda/ternary.h"
#include "../../kernels/cuda/unary_backward.h"
#include "cuda/device_state.h"
#include "cuda/tensor_args.h"
#include "ops/dispatch_stubs.h"
#include "rt/ops/view.h"

namespace rt::cuda::ops {
using dispatch::BinaryOp;
using dispatch::CompareOp;
using dispatch::ReduceOp;
using dispatch::TernaryOp;
using dispatch::UnaryBackwardOp;
using dispatch::UnaryOp;
namespace {

bool is_host_scalar(const Tensor& t) { return t.dim() == 0 && t.device().is_cpu(); }

// x viewed with out's shape (stride 0 in broadcast dims).
cuda_kernels::TensorArg expanded(const Tensor& x, const Tensor& out) {
  return detail::arg(x.sizes() == out.sizes() ? x : rt::expand(x, out.sizes()));
}

// An operand on out's device: 0-dim CPU tensors (Python numbers) are copied over.
Tensor on_device(const Tensor& t, const Tensor& out) { return t.device() == out.device() ? t : t.to(out.device()); }

void binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, double alpha) {
  detail::DeviceGuard guard(out.device().index);
  const auto s = detail::stream_of(out.device());
  if (is_host_scalar(b) && !is_host_scalar(a))
    return cuda_kernels::binary_scalar(op, detail::arg(out), expanded(a, out), b.item(), false, alpha, s);
  if (is_host_scalar(a) && !is_host_scalar(b))
    return cuda_kernels::binary_scalar(op, detail::arg(out), expanded(b, out), a.item(), true, alpha, s);
  const Tensor ad = on_device(a, out);
  const Tensor bd = on_device(b, out);
  cuda_kernels::binary(op, detail::arg(out), expanded(ad, out), expanded(bd, out), alpha, s);
}

void binary_scalar(BinaryOp op, const Tensor& out, const Tensor& a, const Scalar& s) {
  detail::DeviceGuard guard(out.device().index);
  cuda_kernels::binary_scalar(op, detail::arg(out), expanded(a, out), s, false, 1.0, detail::stream_of(out.device()));
}

void clamp(const Tensor& out, const Tensor& x, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  detail::DeviceGuard guard(out.device().index);
  cuda_kernels::clamp(detail::arg(out), expanded(x, out), lo.value_or(Scalar(0.0)), hi.value_or(Scalar(0.0)),
                      lo.has_value(), hi.has_value(), detail::stream_of(out.device()));
}

void compare(CompareOp op, const Tensor& out, const Tensor& a, const Tensor& b, ScalarType compute) {
  detail::DeviceGuard guard(out.device().index);
  const auto s = detail::stream_of(out.device());
  if (is_host_scalar(b) && !is_host_scalar(a))
    return cuda_kernels::compare_scalar(op, detail::arg(out), expanded(a, out), b.item(), compute, s);
  const Tensor ad = on_device(a, out);
  const Tensor bd = on_device(b, out);
  cuda_kernels::compare(op, detail::arg(out), expanded(ad, out), expanded(bd, out), compute, s);
}

void ternary(TernaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& c, double value) {
  detail::DeviceGuard guard(out.device().index);
  cuda_kernels::ternary(op, detail::arg(out), expanded(on_device(a, out), out), expanded(on_device(b, out), out),
                        expanded(on_device(c, out), out), value, detail::stream_of(out.device()));
}

void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  detail::DeviceGuard guard(out.device().index);
  cuda_kernels::where(detail::arg(out), expanded(on_device(cond, out), out), expanded(on_device(a, out), out),
                      expanded(on_device(b, out), out), detail::stream_of(out.device()));
}

void unary(UnaryOp op, const Tensor& out, const Tensor& x, const cuda_kernels::UnaryParams& params) {
  detail::DeviceGuard guard(out.device().index);
  cuda_kernels::unary(op, detail::arg(out), expanded(x, out), params, detail::stream_of(out.device()));
}

void unary_backward(UnaryBackwardOp op, const Tensor& grad_in, const Tensor& grad_out, const Tensor& saved,
                    const cuda_kernels::UnaryParams& params) {
  detail::DeviceGuard guard(grad_in.device().index);
  cuda_kernels::unary_backward(op, detail::arg(grad_in), expanded(on_device(grad_out, grad_in), grad_in),
                               expanded(on_device(saved, grad_in), grad_in), params, detail::stream_of(grad_in.device()));
}

void fill(const Tensor& out, const Scalar& value) {
  if (out.numel() == 0) return;
  detail::DeviceGuard guard(out.device().index);
  cuda_kernels::fill(detail::arg(out), value, detail::stream_of(out.device()));
}

void reduce(ReduceOp op, const Tensor& out, const Tensor& in, uint32_t dim_mask, int64_t correction) {
  detail::DeviceGuard guard(out.device().index);
  const auto in_arg = detail::arg(in);
  const size_t bytes = cuda_kernels::reduce_scratch_bytes(op, in_arg, dim_mask);
  Tensor scratch = detail::scratch(in.device(), bytes);
  cuda_kernels::reduce(op, detail::arg(out), in_arg, dim_mask, correction,
                       scratch.defined() ? scratch.device_data() : nullptr, bytes, detail::stream_of(out.device()));
}

void reduce_with_indices(bool is_max, const Tensor& values, const Tensor& indices, const Tensor& in, int64_t dim) {
  detail::DeviceGuard guard(values.device().index);
  const auto in_arg = detail::arg(in);
  const size_t bytes = cuda_kernels::reduce_scratch_bytes(is_max ? ReduceOp::ArgMax : ReduceOp::ArgMin, in_arg, 1u << dim);
  Tensor scratch = detail::scratch(in.device(), bytes);
  cuda_kernels::reduce_with_indices(is_max, detail::arg(values), detail::arg(indices), in_arg, int(dim),
                                    scratch.defined() ? scratch.device_data() : nullptr, bytes,
                                    detail::stream_of(values.device()));
}

}  // namespace

RT_REGISTER_KERNEL(dispatch::binary, DeviceType::CUDA, binary);
RT_REGISTER_KERNEL(dispatch::binary_scalar, DeviceType::CUDA, binary_scalar);
RT_REGISTER_KERNEL(dispatch::clamp, DeviceType::CUDA, clamp);
RT_REGISTER_KERNEL(dispatch::compare, DeviceType::CUDA, compare);
RT_REGISTER_KERNEL(dispatch::ternary, DeviceType::CUDA, ternary);
RT_REGISTER_KERNEL(dispatch::where, DeviceType::CUDA, where);
RT_REGISTER_KERNEL(dispatch::unary, DeviceType::CUDA, unary);
RT_REGISTER_KERNEL(dispatch::unary_backward, DeviceType::CUDA, unary_backward);
RT_REGISTER_KERNEL(dispatch::fill, DeviceType::CUDA, fill);
RT_REGISTER_KERNEL(dispatch::reduce, DeviceType::CUDA, reduce);
RT_REGISTER_KERNEL(dispatch::reduce_with_indices, DeviceType::CUDA, reduce_with_indices);

}  // namespace rt::cuda::ops
