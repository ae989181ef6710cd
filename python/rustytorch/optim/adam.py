"""Adam (torch.optim.Adam): L2 weight decay folded into the gradient, optional AMSGrad and maximize.

    opt = rt.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), amsgrad=True)

Per parameter (PyTorch's single-tensor update; state "step" (float32 0-dim), "exp_avg" m,
"exp_avg_sq" v, "max_exp_avg_sq" when amsgrad), t = step after incrementing:
    g = g + weight_decay * p;  m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g
    denom = sqrt(amsgrad ? max(v_max, v) : v) / sqrt(1 - beta2^t) + eps
    p = p - lr / (1 - beta1^t) * m / denom
AdamW (adamw.py) reuses this update with decoupled weight decay. Parameters on a GPU take one fused
kernel per parameter (rt::optim::adam_step_, the C++ Adam's arithmetic) instead of this chain of ops.
"""
import math

import rustytorch as rt
from .. import _C

from .._memory import memory_category
from .optimizer import Optimizer


def check_adam_args(lr, betas, eps, weight_decay):
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


class Adam(Optimizer):
    _decoupled_weight_decay = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None):
        check_adam_args(lr, betas, eps, weight_decay)
        self._check_unsupported(capturable=capturable, differentiable=differentiable, fused=fused)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def step(self, closure=None):
        return self._step_each_parameter(closure)

    def _update(self, param, group):
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        weight_decay, amsgrad = group["weight_decay"], group["amsgrad"]
        grad = -param.grad if group["maximize"] else param.grad
        state = self.state[param]
        if not state:
            with memory_category("optimizer_state"):
                state["step"] = rt.tensor(0.0)
                state["exp_avg"] = rt.zeros_like(param)
                state["exp_avg_sq"] = rt.zeros_like(param)
                if amsgrad:
                    state["max_exp_avg_sq"] = rt.zeros_like(param)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        state["step"].add_(1)
        if amsgrad and "max_exp_avg_sq" not in state:
            raise RuntimeError(f"{type(self).__name__}: amsgrad=True but the loaded state of a parameter has no "
                               "'max_exp_avg_sq'; it was saved with amsgrad=False")
        if param.is_cuda:
            _C._adam_step_(param, exp_avg, exp_avg_sq, state["max_exp_avg_sq"] if amsgrad else None, grad, lr=lr,
                           beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay,
                           decoupled_weight_decay=self._decoupled_weight_decay, step=float(state["step"].item()))
            return
        if weight_decay != 0:
            if self._decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        step = float(state["step"].item())
        bias_correction1 = 1 - beta1 ** step
        bias_correction2_sqrt = math.sqrt(1 - beta2 ** step)
        if amsgrad:
            max_sq = state["max_exp_avg_sq"]
            max_sq.copy_(rt.maximum(max_sq, exp_avg_sq))
            denom = (max_sq.sqrt() / bias_correction2_sqrt).add_(eps)
        else:
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
        param.addcdiv_(exp_avg, denom, value=-lr / bias_correction1)
