// rt/rt.h — everything in the engine's public C++ API.
//
//   #include "rt/rt.h"
//   int main() {
//     rt::manual_seed(0);
//     rt::nn::Linear fc(784, 10);
//     rt::optim::Adam opt(fc.parameters(), {.lr = 1e-3});
//     auto loss = rt::cross_entropy(fc(rt::randn({64, 784})), rt::randint(0, 10, {64}));
//     opt.zero_grad(); loss.backward(); opt.step();
//   }
#pragma once
#include "rt/allocator.h"
#include "rt/amp/autocast.h"
#include "rt/amp/grad_scaling.h"
#include "rt/autograd/custom_function.h"
#include "rt/autograd/engine.h"
#include "rt/autograd/function.h"
#include "rt/autograd/grad_mode.h"
#include "rt/autograd/node.h"
#include "rt/backends.h"
#include "rt/data/csv.h"
#include "rt/data/dataloader.h"
#include "rt/data/dataset.h"
#include "rt/data/digits.h"
#include "rt/data/idx.h"
#include "rt/dispatch_stub.h"
#include "rt/dtype.h"
#include "rt/error.h"
#include "rt/generator.h"
#include "rt/io/safetensors.h"
#include "rt/nn/nn.h"
#include "rt/op_observer.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/linalg.h"
#include "rt/ops/linear_pointwise.h"
#include "rt/ops/nn_functional.h"
#include "rt/ops/reduce.h"
#include "rt/ops/scan.h"
#include "rt/ops/select.h"
#include "rt/ops/shape.h"
#include "rt/ops/sort.h"
#include "rt/ops/view.h"
#include "rt/optim/optim.h"
#include "rt/parallel.h"
#include "rt/tensor.h"
