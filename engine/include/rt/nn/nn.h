// rt/nn/nn.h — every nn module, init scheme and utility (PyTorch's torch.nn for C++).
//
//   #include "rt/nn/nn.h"
//   auto model = std::make_shared<rt::nn::Sequential>(std::make_shared<rt::nn::Linear>(64, 128),
//                                                     std::make_shared<rt::nn::ReLU>(),
//                                                     std::make_shared<rt::nn::Linear>(128, 10));
//   auto loss = rt::cross_entropy((*model)(x), y);
//
// Start with rt/nn/module.h (registration, names, state_dict, scopes).
#pragma once
#include "rt/export.h"
#include "rt/nn/activation.h"
#include "rt/nn/attention.h"
#include "rt/nn/container.h"
#include "rt/nn/conv.h"
#include "rt/nn/dropout.h"
#include "rt/nn/embedding.h"
#include "rt/nn/flatten.h"
#include "rt/nn/init.h"
#include "rt/nn/linear.h"
#include "rt/nn/module.h"
#include "rt/nn/normalization.h"
#include "rt/nn/pooling.h"
#include "rt/nn/state_dict.h"
#include "rt/nn/transformer.h"
#include "rt/nn/utils.h"

RT_API_BEGIN

RT_API_END
