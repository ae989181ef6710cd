"""Adamax (torch.optim.Adamax): Adam with the infinity norm in place of the second moment.

    opt = rt.optim.Adamax(model.parameters(), lr=2e-3, betas=(0.9, 0.999))

Per parameter (PyTorch's single-tensor update; state "step" (float32 0-dim) t after incrementing,
"exp_avg" m, "exp_inf" u):
    g = -g if maximize;  g = g + weight_decay * p;  m = beta1 * m + (1 - beta1) * g
    u = max(beta2 * u, |g| + eps);  p = p - lr / (1 - beta1^t) * m / u
The arithmetic is the engine's (rt::optim::adamax_step_, one call per parameter). `foreach` is
accepted and ignored: there is one implementation, so the results are the same either way.
"""
import rustytorch as rt
from .. import _C

from .._memory import memory_category
from .adam import check_adam_args
from .optimizer import Optimizer


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False):
        check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure=None):
        return self._step_each_parameter(closure)

    def _update(self, param, group):
        state = self.state[param]
        if not state:
            with memory_category("optimizer_state"):
                state["step"] = rt.tensor(0.0)
                state["exp_avg"] = rt.zeros_like(param)
                state["exp_inf"] = rt.zeros_like(param)
        state["step"].add_(1)
        _C._adamax_step_(param, param.grad, state["exp_avg"], state["exp_inf"], lr=group["lr"], betas=group["betas"],
                         eps=group["eps"], weight_decay=group["weight_decay"], maximize=group["maximize"],
                         step=float(state["step"].item()))
