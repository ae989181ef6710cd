// rt/optim/optim.h — every optimizer and LR scheduler (PyTorch's torch.optim for C++).
//
//   #include "rt/optim/optim.h"
//   rt::optim::AdamW opt(model->parameters(), {.lr = 3e-4});
//   rt::optim::CosineAnnealingLR sched(opt, /*T_max=*/100);
//
// Start with rt/optim/optimizer.h (groups, state, state_dict).
#pragma once
#include "rt/export.h"
#include "rt/optim/adadelta.h"
#include "rt/optim/adagrad.h"
#include "rt/optim/adam.h"
#include "rt/optim/adamax.h"
#include "rt/optim/adamw.h"
#include "rt/optim/cyclic_lr.h"
#include "rt/optim/functional.h"
#include "rt/optim/lr_scheduler.h"
#include "rt/optim/nadam.h"
#include "rt/optim/optimizer.h"
#include "rt/optim/radam.h"
#include "rt/optim/rmsprop.h"
#include "rt/optim/sgd.h"

RT_API_BEGIN

RT_API_END
