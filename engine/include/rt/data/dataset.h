// rt/data/dataset.h — indexable collections of examples, and how examples become batches.
//
//   auto ds = std::make_shared<rt::data::TensorDataset>(images, labels);  // [N, 64] and [N]
//   rt::data::Example e = ds->get(0);                    // e.data [64], e.target [] (a view)
//   std::vector<int64_t> idx = {3, 1, 4};
//   rt::data::Example b = ds->get_batch(idx);            // b.data [3, 64], b.target [3]
//
//   struct Squares : rt::data::Dataset {                 // your own dataset
//     int64_t size() const override { return 100; }
//     rt::data::Example get(int64_t i) const override {
//       return {rt::full({1}, double(i)), rt::scalar_tensor(double(i * i))};
//     }
//   };
//
// Contracts
// - get(i) is called with 0 <= i < size() (TensorDataset throws IndexError otherwise) and must
//   not depend on earlier calls: rt::data::DataLoader calls it in any order.
// - Every example of a dataset has data of one shape and dtype, and targets of one shape and
//   dtype, or no target at all (an undefined Tensor) for unlabelled data.
// - get_batch(indices) returns the examples stacked along a new dimension 0: data
//   [len(indices), ...data shape], target [len(indices), ...target shape] (undefined when the
//   examples have none). The default calls get() for each index and collate()s; datasets with a
//   faster way (TensorDataset copies rows straight out of its tensors) override it.
// - Batches are new contiguous CPU tensors with no autograd history.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt::data {

struct Example {
  Tensor data;
  Tensor target;  // undefined for unlabelled data
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  virtual Example get(int64_t index) const = 0;
  virtual Example get_batch(std::span<const int64_t> indices) const;
};

// Stacks examples along a new dimension 0 (PyTorch's default_collate for tensors). Throws
// ShapeError/DTypeError naming the first example that differs from example 0, and ValueError
// for an empty list or a mix of examples with and without targets.
Example collate(const std::vector<Example>& examples);

// Rows of `data` (and `targets`) as examples, like torch.utils.data.TensorDataset.
class TensorDataset : public Dataset {
 public:
  // data: at least 1-D; targets: undefined or at least 1-D with targets.size(0) == data.size(0)
  // (ShapeError otherwise). Both are kept detached and contiguous (copied only if needed).
  explicit TensorDataset(const Tensor& data, const Tensor& targets = {});

  int64_t size() const override { return size_; }
  Example get(int64_t index) const override;  // views of row `index`
  Example get_batch(std::span<const int64_t> indices) const override;

  const Tensor& data() const { return data_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor data_, targets_;
  int64_t size_ = 0;
};

}  // namespace rt::data

RT_API_END
