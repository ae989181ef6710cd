// Hyperparameter checks the optimizers share: ValueError worded as PyTorch's ("Invalid learning
// rate: -1"), prefixed by the optimizer's name so a message says where it came from.
#pragma once

namespace rt::optim::detail {

// v >= 0 (NaN fails): "RMSprop: invalid learning rate: -0.1".
void check_non_negative(const char* optimizer, const char* what, double v);
// 0 <= beta < 1: "NAdam: invalid beta parameter at index 1: 1".
void check_beta(const char* optimizer, int index, double beta);
// 0 <= v <= 1: "Adadelta: invalid rho value: 1.5".
void check_unit_interval(const char* optimizer, const char* what, double v);

}  // namespace rt::optim::detail
