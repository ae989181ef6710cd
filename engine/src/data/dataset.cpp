#include "rt/data/dataset.h"

#include <cstring>

#include "cpu/loops.h"
#include "rt/ops/view.h"

namespace rt::data {
namespace {

std::string describe(const Tensor& t) { return format_shape(t.sizes()) + " " + std::string(dtype_name(t.dtype())); }

Tensor batch_of(int64_t n, const Shape& sample, ScalarType dtype) {
  Shape shape{n};
  shape.insert(shape.end(), sample.begin(), sample.end());
  return make_tensor(shape, dtype);
}

// Copies row i of contiguous `dst` from `rows`, a list of contiguous same-sized blocks.
void copy_rows(Tensor& dst, const std::vector<const char*>& rows, size_t row_bytes) {
  char* out = static_cast<char*>(dst.raw_data());
  const int64_t n = int64_t(rows.size());
#pragma omp parallel for if (n * int64_t(row_bytes) >= cpu::kParallelGrain * 4) schedule(static)
  for (int64_t i = 0; i < n; ++i) std::memcpy(out + size_t(i) * row_bytes, rows[size_t(i)], row_bytes);
}

Tensor stack_field(const std::vector<Example>& examples, Tensor Example::*field, const char* what) {
  const Tensor& first = examples[0].*field;
  std::vector<Tensor> keep;  // contiguous copies of non-contiguous inputs live until copied
  std::vector<const char*> rows;
  for (size_t i = 0; i < examples.size(); ++i) {
    const Tensor& t = examples[i].*field;
    if (!t.device().is_cpu())
      throw DeviceError(std::string("collate: ") + what + " of example " + std::to_string(i) + " is on " +
                        t.device().str() + "; datasets must return CPU tensors");
    if (t.dtype() != first.dtype())
      throw DTypeError(std::string("collate: ") + what + " of example " + std::to_string(i) + " is " + describe(t) +
                       " but example 0's is " + describe(first) + "; every example of a batch needs one dtype");
    if (t.sizes() != first.sizes())
      throw ShapeError(std::string("collate: ") + what + " of example " + std::to_string(i) + " has shape " +
                       format_shape(t.sizes()) + " but example 0's has " + format_shape(first.sizes()) +
                       ". Hint: every example of a batch needs one shape; pad or resize them in the dataset");
    keep.push_back(rt::contiguous(detach(t)));
    rows.push_back(static_cast<const char*>(keep.back().raw_data()));
  }
  Tensor out = batch_of(int64_t(examples.size()), first.sizes(), first.dtype());
  copy_rows(out, rows, first.nbytes());
  return out;
}

// Rows `indices` of a contiguous tensor, gathered into a new one.
Tensor gather_rows(const Tensor& src, std::span<const int64_t> indices) {
  const Shape row_shape(src.sizes().begin() + 1, src.sizes().end());
  Tensor out = batch_of(int64_t(indices.size()), row_shape, src.dtype());
  const size_t row_bytes = size_t(numel_of(row_shape)) * src.element_size();
  std::vector<const char*> rows(indices.size());
  const char* base = static_cast<const char*>(src.raw_data());
  for (size_t i = 0; i < indices.size(); ++i) rows[i] = base + size_t(indices[i]) * row_bytes;
  copy_rows(out, rows, row_bytes);
  return out;
}

}  // namespace

Example Dataset::get_batch(std::span<const int64_t> indices) const {
  std::vector<Example> examples;
  examples.reserve(indices.size());
  for (int64_t i : indices) examples.push_back(get(i));
  return collate(examples);
}

Example collate(const std::vector<Example>& examples) {
  if (examples.empty()) throw ValueError("collate: cannot make a batch of zero examples");
  const bool labelled = examples[0].target.defined();
  for (size_t i = 0; i < examples.size(); ++i) {
    if (!examples[i].data.defined())
      throw ValueError("collate: example " + std::to_string(i) + " has undefined data");
    if (examples[i].target.defined() != labelled)
      throw ValueError("collate: example " + std::to_string(i) + (labelled ? " has no target" : " has a target") +
                       " but example 0 " + (labelled ? "has one" : "has none") +
                       "; a dataset's examples must all have targets or all lack them");
  }
  Example batch;
  batch.data = stack_field(examples, &Example::data, "data");
  if (labelled) batch.target = stack_field(examples, &Example::target, "target");
  return batch;
}

TensorDataset::TensorDataset(const Tensor& data, const Tensor& targets) {
  if (!data.defined() || data.dim() < 1)
    throw ShapeError("TensorDataset: data must be a tensor of at least 1 dimension (one row per example), got " +
                     (data.defined() ? format_shape(data.sizes()) : std::string("an undefined tensor")));
  if (targets.defined() && (targets.dim() < 1 || targets.size(0) != data.size(0)))
    throw ShapeError("TensorDataset: data " + format_shape(data.sizes()) + " and targets " +
                     format_shape(targets.sizes()) + " must have the same size in dimension 0 (one target per example)");
  if (!data.device().is_cpu() || (targets.defined() && !targets.device().is_cpu()))
    throw DeviceError("TensorDataset: data and targets must be CPU tensors");
  data_ = rt::contiguous(detach(data));
  if (targets.defined()) targets_ = rt::contiguous(detach(targets));
  size_ = data.size(0);
}

Example TensorDataset::get(int64_t index) const {
  if (index < 0 || index >= size_)
    throw IndexError("TensorDataset: index " + std::to_string(index) + " is out of range for a dataset of " +
                     std::to_string(size_) + " examples");
  return {select(data_, 0, index), targets_.defined() ? select(targets_, 0, index) : Tensor()};
}

Example TensorDataset::get_batch(std::span<const int64_t> indices) const {
  for (int64_t i : indices)
    if (i < 0 || i >= size_)
      throw IndexError("TensorDataset: index " + std::to_string(i) + " is out of range for a dataset of " +
                       std::to_string(size_) + " examples");
  if (indices.empty()) throw ValueError("TensorDataset: cannot make a batch of zero examples");
  return {gather_rows(data_, indices), targets_.defined() ? gather_rows(targets_, indices) : Tensor()};
}

}  // namespace rt::data
