"""Adadelta (torch.optim.Adadelta): steps scaled by the running RMS of past updates over that of gradients.

    opt = rt.optim.Adadelta(model.parameters(), lr=1.0, rho=0.9, eps=1e-6)

Per parameter (PyTorch's single-tensor update; state "step" (int, as PyTorch 1.13 keeps it),
"square_avg" v, "acc_delta" u):
    g = -g if maximize;  g = g + weight_decay * p;  v = rho * v + (1 - rho) * g * g
    delta = sqrt(u + eps) / sqrt(v + eps) * g;  u = rho * u + (1 - rho) * delta * delta;  p = p - lr * delta
The arithmetic is the engine's (rt::optim::adadelta_step_, one call per parameter). `foreach` is
accepted and ignored: there is one implementation, so the results are the same either way.
"""
import rustytorch as rt
from .. import _C

from .._memory import memory_category
from .optimizer import Optimizer


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, maximize=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach)
        super().__init__(params, defaults)

    def step(self, closure=None):
        return self._step_each_parameter(closure)

    def _update(self, param, group):
        state = self.state[param]
        if not state:
            with memory_category("optimizer_state"):
                state["step"] = 0
                state["square_avg"] = rt.zeros_like(param)
                state["acc_delta"] = rt.zeros_like(param)
        state["step"] += 1
        _C._adadelta_step_(param, param.grad, state["square_avg"], state["acc_delta"], lr=group["lr"],
                           rho=group["rho"], eps=group["eps"], weight_decay=group["weight_decay"],
                           maximize=group["maximize"])
