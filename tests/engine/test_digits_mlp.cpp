// The digits sample's trainer (samples/cpp/digits_mlp.h) must reach 95% test accuracy.
#include <catch2/catch.hpp>

#include "../../samples/cpp/digits_mlp.h"

TEST_CASE("digits MLP: Adam reaches >= 95% test accuracy") {
  digits_mlp::Config cfg;
  cfg.epochs = 12;
  cfg.verbose = false;
  cfg.data_path = RT_SOURCE_DIR "/samples/data/digits.csv.gz";
  const digits_mlp::Result r = digits_mlp::train(cfg);
  REQUIRE(r.train_size == 1437);
  REQUIRE(r.test_size == 360);
  REQUIRE(r.history.size() == 12);
  INFO("test accuracy " << r.test_accuracy);
  CHECK(r.history.front().train_loss > r.history.back().train_loss);
  REQUIRE(r.test_accuracy >= 0.95);
}
