#include "rt/data/dataloader.h"

#include <numeric>
#include <random>

#include "rt/generator.h"

namespace rt::data {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform in [0, n) by rejection, so every standard library gives the same draws.
uint64_t bounded(std::mt19937_64& gen, uint64_t n) {
  const uint64_t threshold = (0 - n) % n;  // 2^64 mod n: values below it would bias the result
  for (;;) {
    const uint64_t r = gen();
    if (r >= threshold) return r % n;
  }
}

uint64_t seed_from_default_generator() {
  Generator& g = default_generator();
  uint32_t words[4];
  philox4x32(g.reserve(1), g.seed(), words);
  return uint64_t(words[0]) | uint64_t(words[1]) << 32;
}

}  // namespace

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(options) {
  if (!dataset_) throw ValueError("DataLoader: the dataset is null");
  if (options_.batch_size < 1)
    throw ValueError("DataLoader: batch_size must be at least 1, got " + std::to_string(options_.batch_size));
  if (options_.seed) seed_ = *options_.seed;
  else if (options_.shuffle) seed_ = seed_from_default_generator();
}

int64_t DataLoader::size() const {
  const int64_t n = dataset_->size(), b = options_.batch_size;
  return options_.drop_last ? n / b : (n + b - 1) / b;
}

std::vector<int64_t> DataLoader::epoch_indices(uint64_t epoch) const {
  std::vector<int64_t> order(size_t(dataset_->size()));
  std::iota(order.begin(), order.end(), int64_t(0));
  if (!options_.shuffle) return order;
  std::mt19937_64 gen(splitmix64(seed_ ^ splitmix64(epoch)));
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[size_t(bounded(gen, i))]);
  return order;
}

Example DataLoader::batch(const std::vector<int64_t>& order, int64_t batch) const {
  const int64_t n = int64_t(order.size()), b = options_.batch_size;
  const int64_t batches = options_.drop_last ? n / b : (n + b - 1) / b;
  if (batch < 0 || batch >= batches)
    throw IndexError("DataLoader: batch " + std::to_string(batch) + " is out of range for an epoch of " +
                     std::to_string(batches) + " batches");
  const int64_t begin = batch * b;
  const int64_t count = std::min(b, n - begin);
  return dataset_->get_batch(std::span<const int64_t>(order.data() + begin, size_t(count)));
}

DataLoader::Iterator DataLoader::begin() {
  auto order = std::make_shared<const std::vector<int64_t>>(epoch_indices(epoch_));
  ++epoch_;
  return Iterator(this, std::move(order), 0);
}

const Example& DataLoader::Iterator::operator*() const {
  if (!order_) throw ValueError("DataLoader: dereferenced an end() or default-constructed iterator");
  if (!current_) current_ = loader_->batch(*order_, batch_);
  return *current_;
}

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  ++batch_;
  current_.reset();
  return *this;
}

}  // namespace rt::data
