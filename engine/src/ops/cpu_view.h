// engine/src/ops/cpu_view.h — handing tensors to the CPU kernels of kernels/cpu/, which see plain
// strided views (kernels/cpu/tensor_view.h) and never tensors.
//
//   cpu::ElementwiseLoop loop = cpu_loop(out, {a, b});       // a, b broadcast to out's shape
//   cpu::binary_kernel<float>(loop, [](float x, float y) { return x + y; });
//   cpu::copy_kernel(cpu_view(dst), cpu_view(src).permuted({1, 0}));
//
// The tensors must be on the CPU (their data is read through raw_data()) and have at most
// cpu::kMaxDims dims (NotImplementedError otherwise, naming the shape).
#pragma once
#include <initializer_list>
#include <vector>

#include "cpu/loops.h"
#include "cpu/tensor_view.h"
#include "rt/tensor.h"

namespace rt {

[[noreturn]] void throw_too_many_dims_for_cpu_kernel(const Tensor& t);

inline cpu::TensorView cpu_view(const Tensor& t) {
  const int64_t nd = t.dim();
  if (nd > cpu::kMaxDims) [[unlikely]]
    throw_too_many_dims_for_cpu_kernel(t);
  cpu::TensorView v;
  v.data = static_cast<char*>(t.raw_data());
  v.dtype = t.dtype();
  v.ndim = int(nd);
  const Shape& sizes = t.sizes();
  const Shape& strides = t.strides();
  for (int i = 0; i < v.ndim; ++i) {
    v.sizes[i] = sizes[size_t(i)];
    v.strides[i] = strides[size_t(i)];
  }
  return v;
}

inline cpu::ElementwiseLoop cpu_loop(const Tensor& out, std::initializer_list<Tensor> inputs) {
  if (inputs.size() >= size_t(cpu::kMaxOperands)) throw Error("cpu_loop: too many operands");
  cpu::TensorView views[cpu::kMaxOperands - 1];
  size_t n = 0;
  for (const Tensor& t : inputs) views[n++] = cpu_view(t);
  return cpu::ElementwiseLoop(cpu_view(out), views, n);
}

inline cpu::ElementwiseLoop cpu_loop(const Tensor& out, const std::vector<Tensor>& inputs) {
  if (inputs.size() >= size_t(cpu::kMaxOperands)) throw Error("cpu_loop: too many operands");
  cpu::TensorView views[cpu::kMaxOperands - 1];
  for (size_t i = 0; i < inputs.size(); ++i) views[i] = cpu_view(inputs[i]);
  return cpu::ElementwiseLoop(cpu_view(out), views, inputs.size());
}

}  // namespace rt
