"""NAdam (torch.optim.NAdam): Adam with Nesterov momentum and a momentum schedule (Dozat, 2016).

    opt = rt.optim.NAdam(model.parameters(), lr=2e-3, momentum_decay=4e-3)

Per parameter (PyTorch 1.13's single-tensor update; state "step" (float32 0-dim) t after
incrementing, "mu_product" P (float32 0-dim), "exp_avg" m, "exp_avg_sq" v):
    g = g + weight_decay * p;  mu_t = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay));  P = P * mu_t
    m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g;  denom = sqrt(v / (1 - beta2^t)) + eps
    p = p - lr * (1 - mu_t) / (1 - P) * g / denom - lr * mu_{t+1} / (1 - P * mu_t * mu_{t+1}) * m / denom
The last denominator is 1.13's (later PyTorch releases use P * mu_{t+1}); rt/optim/nadam.h says more.
PyTorch 1.13's NAdam takes no `maximize`, so neither does this one. The arithmetic is the engine's
(rt::optim::nadam_step_, one call per parameter). `foreach` is accepted and ignored: there is one
implementation, so the results are the same either way.
"""
import rustytorch as rt
from .. import _C

from .._memory import memory_category
from .adam import check_adam_args
from .optimizer import Optimizer


class NAdam(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 foreach=None):
        check_adam_args(lr, betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        foreach=foreach)
        super().__init__(params, defaults)

    def step(self, closure=None):
        return self._step_each_parameter(closure)

    def _update(self, param, group):
        state = self.state[param]
        if not state:
            with memory_category("optimizer_state"):
                state["step"] = rt.tensor(0.0)
                state["mu_product"] = rt.tensor(1.0)
                state["exp_avg"] = rt.zeros_like(param)
                state["exp_avg_sq"] = rt.zeros_like(param)
        state["step"].add_(1)
        _C._nadam_step_(param, param.grad, state["exp_avg"], state["exp_avg_sq"], state["mu_product"],
                        lr=group["lr"], betas=group["betas"], eps=group["eps"], weight_decay=group["weight_decay"],
                        momentum_decay=group["momentum_decay"], step=float(state["step"].item()))
