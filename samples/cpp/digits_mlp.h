// digits_mlp.h — the digits MLP trainer behind samples/cpp/digits_mlp.cpp (and its test).
//
//   digits_mlp::Config cfg;
//   cfg.epochs = 10;
//   digits_mlp::Result r = digits_mlp::train(cfg);   // prints one line per epoch
//   std::printf("test accuracy %.2f%%\n", 100 * r.test_accuracy);
//
// A 64-128-10 MLP (Linear, ReLU, Linear) trained with Adam and cross-entropy on the 8x8 digits
// (rt/data/digits.h), pixels scaled to [0, 1]. rt::manual_seed(cfg.seed) fixes everything:
// the 80/20 train/test split (a randperm), the initial weights and the batch order.
#pragma once
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "rt/data/dataloader.h"
#include "rt/data/dataset.h"
#include "rt/data/digits.h"
#include "rt/nn/nn.h"
#include "rt/optim/optim.h"
#include "rt/rt.h"

namespace digits_mlp {

struct Config {
  int epochs = 20;
  int64_t batch_size = 32;
  int64_t hidden = 128;
  double lr = 2e-3;
  uint64_t seed = 0;
  std::string data_path;  // empty: rt::data::find_sample_data("digits.csv.gz")
  bool verbose = true;
};

struct EpochStats {
  int epoch = 0;
  double train_loss = 0;      // mean over the epoch's batches
  double train_accuracy = 0;  // on the batches as they were trained
  double test_accuracy = 0;
};

struct Result {
  std::vector<EpochStats> history;
  double test_accuracy = 0;  // after the last epoch
  int64_t train_size = 0, test_size = 0;
};

inline int64_t count_correct(const rt::Tensor& logits, const rt::Tensor& labels) {
  return rt::eq(rt::argmax(logits, 1), labels).sum().item<int64_t>();
}

inline Result train(const Config& cfg) {
  rt::manual_seed(cfg.seed);
  const rt::data::Digits digits = cfg.data_path.empty() ? rt::data::load_digits() : rt::data::load_digits(cfg.data_path);
  const rt::Tensor x = digits.images / 16.0;
  const int64_t n = x.size(0), n_train = n * 8 / 10;
  const rt::Tensor perm = rt::randperm(n);
  const rt::Tensor train_idx = perm.narrow(0, 0, n_train), test_idx = perm.narrow(0, n_train, n - n_train);
  const rt::Tensor test_x = x.index_select(0, test_idx), test_y = digits.labels.index_select(0, test_idx);
  auto train_set = std::make_shared<rt::data::TensorDataset>(x.index_select(0, train_idx),
                                                             digits.labels.index_select(0, train_idx));
  rt::data::DataLoader loader(train_set, {.batch_size = cfg.batch_size, .shuffle = true});

  auto model = std::make_shared<rt::nn::Sequential>(std::make_shared<rt::nn::Linear>(64, cfg.hidden),
                                                    std::make_shared<rt::nn::ReLU>(),
                                                    std::make_shared<rt::nn::Linear>(cfg.hidden, 10));
  rt::optim::Adam opt(model->parameters(), {.lr = cfg.lr});

  Result result;
  result.train_size = n_train;
  result.test_size = n - n_train;
  for (int epoch = 1; epoch <= cfg.epochs; ++epoch) {
    model->train();
    double loss_sum = 0;
    int64_t batches = 0, correct = 0;
    for (const rt::data::Example& batch : loader) {
      rt::Tensor logits = (*model)(batch.data);
      rt::Tensor loss = rt::cross_entropy(logits, batch.target);
      opt.zero_grad();
      loss.backward();
      opt.step();
      loss_sum += loss.item<double>();
      ++batches;
      rt::NoGradGuard ng;
      correct += count_correct(logits, batch.target);
    }
    model->eval();
    EpochStats s;
    s.epoch = epoch;
    s.train_loss = loss_sum / double(batches);
    s.train_accuracy = double(correct) / double(n_train);
    {
      rt::NoGradGuard ng;
      s.test_accuracy = double(count_correct((*model)(test_x), test_y)) / double(n - n_train);
    }
    if (cfg.verbose)
      std::printf("epoch %3d/%d  loss %.4f  train acc %6.2f%%  test acc %6.2f%%\n", epoch, cfg.epochs, s.train_loss,
                  100 * s.train_accuracy, 100 * s.test_accuracy);
    result.history.push_back(s);
    result.test_accuracy = s.test_accuracy;
  }
  return result;
}

}  // namespace digits_mlp
