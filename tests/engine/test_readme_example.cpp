// The README's C++ example, compiled and run, so the README stays true.
#include <catch2/catch.hpp>
#include <filesystem>

#include "rt/rt.h"

TEST_CASE("README C++ example runs and saves a loadable checkpoint") {
  const auto path = std::filesystem::temp_directory_path() / "rt_readme_model.safetensors";
  rt::manual_seed(0);
  auto [images, labels] = rt::data::load_digits();

  auto model = std::make_shared<rt::nn::Sequential>(
      std::make_shared<rt::nn::Linear>(64, 128), std::make_shared<rt::nn::ReLU>(),
      std::make_shared<rt::nn::Linear>(128, 10));
  rt::optim::Adam opt(model->parameters(), {.lr = 1e-3});

  auto loss = rt::cross_entropy((*model)(images), labels);
  opt.zero_grad();
  loss.backward();
  opt.step();
  const float before = loss.item<float>();
  const float after = rt::cross_entropy((*model)(images), labels).item<float>();
  CHECK(after < before);

  auto sd = model->state_dict();
  rt::io::save_safetensors(path, {sd.begin(), sd.end()});
  auto back = rt::io::load_state_dict(path);
  CHECK(back.count("0.weight") == 1);
  CHECK(back.at("2.bias").sizes() == rt::Shape{10});
  std::filesystem::remove(path);
}
