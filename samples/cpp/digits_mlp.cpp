// digits_mlp — trains a 64-128-10 MLP on the 8x8 digits with Adam and reports test accuracy.
//
//   build/bin/digits_mlp                 # 20 epochs
//   build/bin/digits_mlp --quick         # 12 epochs, for smoke tests
//   build/bin/digits_mlp --epochs 50 --seed 3 --data samples/data/digits.csv.gz
//
// Exits 1 when the final test accuracy is below 95%, 2 on bad arguments or data.
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "digits_mlp.h"

namespace {

int usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [--epochs N] [--quick] [--seed S] [--lr LR] [--data digits.csv.gz]\n", argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  digits_mlp::Config cfg;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    try {
      if (arg == "--quick") cfg.epochs = 12;
      else if (arg == "--epochs" && has_value) cfg.epochs = std::stoi(argv[++i]);
      else if (arg == "--seed" && has_value) cfg.seed = std::stoull(argv[++i]);
      else if (arg == "--lr" && has_value) cfg.lr = std::stod(argv[++i]);
      else if (arg == "--data" && has_value) cfg.data_path = argv[++i];
      else if (arg == "--help" || arg == "-h") {
        usage(argv[0]);
        return 0;
      }
      else return usage(argv[0]);
    } catch (const std::exception&) {
      std::fprintf(stderr, "%s: bad value for %s\n", argv[0], arg.c_str());
      return usage(argv[0]);
    }
  }
  if (cfg.epochs < 1) return usage(argv[0]);
  try {
    const digits_mlp::Result r = digits_mlp::train(cfg);
    std::printf("train %lld / test %lld examples: final test accuracy %.2f%%\n", (long long)r.train_size,
                (long long)r.test_size, 100 * r.test_accuracy);
    if (r.test_accuracy < 0.95) {
      std::fprintf(stderr, "test accuracy %.2f%% is below 95%%\n", 100 * r.test_accuracy);
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "digits_mlp: %s\n", e.what());
    return 2;
  }
  return 0;
}
