// rt_bench — times the bench/ workloads on the RustyTorch++ engine and prints JSON
// (seconds per iteration), the same workloads and timing method as bench/torch_bench.py.
//
//   build/bin/rt_bench --threads 2                  # all workloads
//   build/bin/rt_bench --only add_1elem matmul_1024
//
// bench/compare.py runs both and prints the ratio table.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "rt/nn/nn.h"
#include "rt/optim/optim.h"
#include "rt/parallel.h"
#include "rt/rt.h"

namespace {

double timeit(const std::function<void()>& fn, int iters, int repeats = 5, int warmup = 3) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> samples;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) fn();
    const auto t1 = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double>(t1 - t0).count() / iters);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

double bench_add_overhead() {
  auto a = rt::ones({1}), b = rt::ones({1});
  rt::Tensor c;
  return timeit([&] { c = a + b; }, 200000);
}

double bench_matmul() {
  rt::manual_seed(0);
  auto a = rt::randn({1024, 1024}), b = rt::randn({1024, 1024});
  rt::Tensor c;
  return timeit([&] { c = rt::matmul(a, b); }, 5);
}

double bench_mlp_adam() {
  using namespace rt::nn;
  rt::manual_seed(0);
  auto model = std::make_shared<Sequential>(std::make_shared<Linear>(784, 512), std::make_shared<ReLU>(),
                                            std::make_shared<Linear>(512, 512), std::make_shared<ReLU>(),
                                            std::make_shared<Linear>(512, 10));
  rt::optim::Adam opt(model->parameters(), {.lr = 1e-3});
  auto x = rt::randn({128, 784});
  auto y = rt::randint(0, 10, {128});
  return timeit([&] {
    opt.zero_grad();
    rt::cross_entropy((*model)(x), y).backward();
    opt.step();
  }, 20);
}

double bench_cnn_sgd() {
  using namespace rt::nn;
  rt::manual_seed(0);
  auto model = std::make_shared<Sequential>(
      std::make_shared<Conv2d>(1, 32, 3, Conv2dOptions{.padding = {1}}), std::make_shared<ReLU>(),
      std::make_shared<MaxPool2d>(2), std::make_shared<Conv2d>(32, 64, 3, Conv2dOptions{.padding = {1}}),
      std::make_shared<ReLU>(), std::make_shared<MaxPool2d>(2), std::make_shared<Flatten>(),
      std::make_shared<Linear>(64 * 7 * 7, 128), std::make_shared<ReLU>(), std::make_shared<Linear>(128, 10));
  rt::optim::SGD opt(model->parameters(), {.lr = 0.01, .momentum = 0.9});
  auto x = rt::randn({64, 1, 28, 28});
  auto y = rt::randint(0, 10, {64});
  return timeit([&] {
    opt.zero_grad();
    rt::cross_entropy((*model)(x), y).backward();
    opt.step();
  }, 5);
}

// ResNet-18's BasicBlock: conv3x3-BN-ReLU-conv3x3-BN plus the input (through a strided 1x1 conv and
// BN where the shape changes), then ReLU. The same model as torch_bench.py's resnet_block_sgd_step.
class BasicBlock : public rt::nn::Module {
 public:
  BasicBlock(int64_t in, int64_t out, int64_t stride) : Module("BasicBlock") {
    using namespace rt::nn;
    conv1 = register_module("conv1", std::make_shared<Conv2d>(in, out, 3, Conv2dOptions{.stride = {stride}, .padding = {1}, .bias = false}));
    bn1 = register_module("bn1", std::make_shared<BatchNorm2d>(out));
    conv2 = register_module("conv2", std::make_shared<Conv2d>(out, out, 3, Conv2dOptions{.padding = {1}, .bias = false}));
    bn2 = register_module("bn2", std::make_shared<BatchNorm2d>(out));
    if (stride != 1 || in != out) {
      down_conv = register_module("down_conv", std::make_shared<Conv2d>(in, out, 1, Conv2dOptions{.stride = {stride}, .bias = false}));
      down_bn = register_module("down_bn", std::make_shared<BatchNorm2d>(out));
    }
  }
  rt::Tensor forward(const rt::Tensor& x) override {
    const rt::Tensor h = (*bn2)((*conv2)(rt::relu((*bn1)((*conv1)(x)))));
    return rt::relu(h + (down_conv ? (*down_bn)((*down_conv)(x)) : x));
  }

 private:
  std::shared_ptr<rt::nn::Conv2d> conv1, conv2, down_conv;
  std::shared_ptr<rt::nn::BatchNorm2d> bn1, bn2, down_bn;
};

class ResNetBlocks : public rt::nn::Module {
 public:
  ResNetBlocks() : Module("ResNetBlocks") {
    using namespace rt::nn;
    stem = register_module("stem", std::make_shared<Conv2d>(3, 32, 3, Conv2dOptions{.padding = {1}, .bias = false}));
    bn = register_module("bn", std::make_shared<BatchNorm2d>(32));
    blocks = {register_module("block1", std::make_shared<BasicBlock>(32, 32, 1)),
              register_module("block2", std::make_shared<BasicBlock>(32, 64, 2)),
              register_module("block3", std::make_shared<BasicBlock>(64, 64, 1))};
    fc = register_module("fc", std::make_shared<Linear>(64, 10));
  }
  rt::Tensor forward(const rt::Tensor& x) override {
    rt::Tensor h = rt::relu((*bn)((*stem)(x)));
    for (auto& b : blocks) h = (*b)(h);
    return (*fc)(rt::flatten(rt::adaptive_avg_pool2d(h, {1, 1}), 1));
  }

 private:
  std::shared_ptr<rt::nn::Conv2d> stem;
  std::shared_ptr<rt::nn::BatchNorm2d> bn;
  std::vector<std::shared_ptr<BasicBlock>> blocks;
  std::shared_ptr<rt::nn::Linear> fc;
};

double bench_resnet_blocks_sgd() {
  rt::manual_seed(0);
  auto model = std::make_shared<ResNetBlocks>();
  rt::optim::SGD opt(model->parameters(), {.lr = 0.01, .momentum = 0.9});
  auto x = rt::randn({32, 3, 32, 32});
  auto y = rt::randint(0, 10, {32});
  return timeit([&] {
    opt.zero_grad();
    rt::cross_entropy((*model)(x), y).backward();
    opt.step();
  }, 3);
}

}  // namespace

int main(int argc, char** argv) {
  const std::map<std::string, std::function<double()>> workloads = {
      {"add_1elem", bench_add_overhead},
      {"matmul_1024", bench_matmul},
      {"mlp_adam_step", bench_mlp_adam},
      {"cnn_sgd_step", bench_cnn_sgd},
      {"resnet_block_sgd_step", bench_resnet_blocks_sgd},
  };
  std::vector<std::string> only;
  int threads = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (a == "--only") {
      while (i + 1 < argc && argv[i + 1][0] != '-') only.push_back(argv[++i]);
    } else if (a == "--help" || a == "-h") {
      std::puts("usage: rt_bench [--threads N] [--only WORKLOAD...]\nworkloads: add_1elem matmul_1024 mlp_adam_step cnn_sgd_step resnet_block_sgd_step");
      return 0;
    } else {
      std::fprintf(stderr, "rt_bench: unknown argument '%s' (try --help)\n", a.c_str());
      return 2;
    }
  }
  if (threads > 0) rt::set_num_threads(threads);
  if (only.empty())
    for (const auto& [name, _] : workloads) only.push_back(name);
  std::printf("{\"threads\": %d, \"seconds\": {", rt::get_num_threads());
  for (size_t i = 0; i < only.size(); ++i) {
    auto it = workloads.find(only[i]);
    if (it == workloads.end()) {
      std::fprintf(stderr, "rt_bench: unknown workload '%s'\n", only[i].c_str());
      return 2;
    }
    std::printf("%s\"%s\": %.9g", i ? ", " : "", it->first.c_str(), it->second());
    std::fflush(stdout);
  }
  std::puts("}}");
  return 0;
}
