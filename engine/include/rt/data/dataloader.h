// rt/data/dataloader.h — batches over a dataset, shuffled reproducibly per epoch.
//
//   auto ds = std::make_shared<rt::data::TensorDataset>(images, labels);
//   rt::data::DataLoader loader(ds, {.batch_size = 64, .shuffle = true, .seed = 42});
//   for (int epoch = 0; epoch < 10; ++epoch)
//     for (const rt::data::Example& batch : loader) {      // each range-for is one epoch
//       auto loss = rt::cross_entropy(model.forward(batch.data), batch.target);
//       ...
//     }
//   loader.size();          // batches per epoch
//   loader.set_epoch(7);    // resume: the next loop iterates epoch 7's order
//
// Contracts
// - Each call to begin() iterates one epoch, number epoch(), and then advances epoch() by one;
//   a loader constructed with the same dataset size and options yields the same batches in the
//   same order, epoch after epoch.
// - Without shuffle, epoch order is 0, 1, ..., size-1. With shuffle, the order of epoch e is a
//   Fisher-Yates shuffle driven by a std::mt19937_64 seeded from (seed, e), with our own bounded
//   draws (not std::shuffle or std::uniform_int_distribution, whose outputs differ between
//   standard libraries): identical on every platform and thread count, independent of
//   rt::default_generator() and of rt::randperm.
// - options.seed unset: the seed is drawn once, at construction, from rt::default_generator()
//   (only when shuffle is on), so rt::manual_seed(s) before constructing makes runs reproducible
//   as in PyTorch. seed() reports the seed in use.
// - Batches have batch_size examples; the last one of an epoch has the remaining
//   size % batch_size examples unless drop_last is set, which drops it.
// - Batches come from dataset->get_batch() (see rt/data/dataset.h): data [B, ...], target [B, ...]
//   or undefined. A batch is built when the iterator is first dereferenced. The loader shares
//   ownership of the dataset.
// - batch_size < 1 throws ValueError.
#pragma once
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <vector>

#include "rt/data/dataset.h"
#include "rt/export.h"

RT_API_BEGIN

namespace rt::data {

struct DataLoaderOptions {
  int64_t batch_size = 1;
  bool shuffle = false;
  std::optional<uint64_t> seed = std::nullopt;  // shuffle seed; see the contracts above when unset
  bool drop_last = false;
};

class DataLoader {
 public:
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Example;
    using difference_type = std::ptrdiff_t;
    using pointer = const Example*;
    using reference = const Example&;

    Iterator() = default;
    const Example& operator*() const;
    const Example* operator->() const { return &**this; }
    Iterator& operator++();
    void operator++(int) { ++*this; }
    bool operator==(const Iterator& o) const { return batch_ == o.batch_; }
    int64_t batch_index() const { return batch_; }

   private:
    friend class DataLoader;
    Iterator(const DataLoader* loader, std::shared_ptr<const std::vector<int64_t>> order, int64_t batch)
        : loader_(loader), order_(std::move(order)), batch_(batch) {}
    const DataLoader* loader_ = nullptr;
    std::shared_ptr<const std::vector<int64_t>> order_;
    int64_t batch_ = 0;
    mutable std::optional<Example> current_;
  };

  explicit DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options = {});

  int64_t size() const;  // batches per epoch
  const DataLoaderOptions& options() const { return options_; }
  const Dataset& dataset() const { return *dataset_; }
  uint64_t seed() const { return seed_; }
  uint64_t epoch() const { return epoch_; }
  void set_epoch(uint64_t epoch) { epoch_ = epoch; }

  // The order in which epoch `epoch` visits the dataset's indices (before batching).
  std::vector<int64_t> epoch_indices(uint64_t epoch) const;
  // Batch `batch` (0 <= batch < size()) of a visiting order from epoch_indices.
  Example batch(const std::vector<int64_t>& order, int64_t batch) const;

  Iterator begin();  // iterates epoch(), then advances it
  Iterator end() const { return Iterator(this, nullptr, size()); }

 private:
  std::shared_ptr<const Dataset> dataset_;
  DataLoaderOptions options_;
  uint64_t seed_ = 0;
  uint64_t epoch_ = 0;
};

}  // namespace rt::data

RT_API_END
