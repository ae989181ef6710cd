// adam_step_ and sgd_step_ (rt/optim/functional.h): the fused kernel where it applies (CUDA, and the
// CPU's in fused_steps.cpp), the optimizers' chain of ops elsewhere.
#include "rt/optim/functional.h"

#include <cmath>

#include "ops/dispatch_stubs.h"
#include "options_state.h"
#include "rt/autograd/grad_mode.h"
#include "rt/error.h"
#include "rt/op_observer.h"
#include "rt/ops/elementwise.h"

namespace rt::optim {

namespace {
void require_step(double step, const char* op) {
  if (!(step >= 1.0))
    throw ValueError(std::string(op) + ": step must be the count after incrementing it (>= 1), got " +
                     std::to_string(step));
}
}  // namespace

void adam_step_(const Tensor& param, const Tensor& exp_avg, const Tensor& exp_avg_sq, const Tensor& max_exp_avg_sq,
                const Tensor& grad_in, const AdamStepOptions& h, double step) {
  require_step(step, "adam_step_");
  NoGradGuard no_grad;
  if (detail::fusable(param, grad_in) && detail::states_fit(param, {&exp_avg, &exp_avg_sq, &max_exp_avg_sq})) {
    OpGuard guard("_fused_adam_", param, grad_in);  // an op, so the profiler links the kernel to it
    dispatch::adam_step(param.device(), param, exp_avg, exp_avg_sq, max_exp_avg_sq, grad_in,
                         {h.lr, h.beta1, h.beta2, h.eps, h.weight_decay, h.decoupled_weight_decay, step});
    return;
  }
  Tensor p = param, m = exp_avg, v = exp_avg_sq, grad = grad_in;
  if (h.weight_decay != 0.0) {
    if (h.decoupled_weight_decay) p.mul_(1.0 - h.lr * h.weight_decay);
    else grad = grad.add(p, h.weight_decay);
  }
  rt::lerp_(m, grad, 1.0 - h.beta1);
  rt::addcmul_(v.mul_(h.beta2), grad, grad, 1.0 - h.beta2);
  const double step_size = h.lr / (1.0 - std::pow(h.beta1, step));
  const double bias_correction2_sqrt = std::sqrt(1.0 - std::pow(h.beta2, step));
  Tensor denom;
  if (max_exp_avg_sq.defined()) {
    Tensor vmax = max_exp_avg_sq;
    vmax.copy_(rt::maximum(vmax, v));
    denom = rt::sqrt(vmax);
  } else {
    denom = rt::sqrt(v);
  }
  denom.div_(bias_correction2_sqrt).add_(h.eps);
  rt::addcdiv_(p, m, denom, -step_size);
}

void sgd_step_(const Tensor& param, const Tensor& momentum_buffer, const Tensor& grad_in, const SGDOptions& o,
               bool first) {
  NoGradGuard no_grad;
  if (o.momentum != 0.0 && !momentum_buffer.defined())
    throw ValueError("sgd_step_: momentum " + std::to_string(o.momentum) +
                     " needs a momentum buffer of the parameter's shape; pass one (empty_like(param) on the first step)");
  if (detail::fusable(param, grad_in) && (o.momentum == 0.0 || detail::states_fit(param, {&momentum_buffer}))) {
    OpGuard guard("_fused_sgd_", param, grad_in);
    dispatch::sgd_step(param.device(), param, o.momentum != 0.0 ? momentum_buffer : Tensor(), grad_in,
                        {o.lr, o.momentum, o.dampening, o.weight_decay, o.nesterov, first});
    return;
  }
  Tensor p = param, grad = grad_in;
  if (o.weight_decay != 0.0) grad = grad.add(p, o.weight_decay);
  if (o.momentum != 0.0) {
    Tensor buf = momentum_buffer;
    if (first) buf.copy_(grad);
    else buf.mul_(o.momentum).add_(grad, 1.0 - o.dampening);
    grad = o.nesterov ? grad.add(buf, o.momentum) : buf;
  }
  p.add_(grad, -o.lr);
}

}  // namespace rt::optim
