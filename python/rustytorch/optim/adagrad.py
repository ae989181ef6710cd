"""Adagrad (torch.optim.Adagrad): steps scaled by the root of each coordinate's summed squared gradients.

    opt = rt.optim.Adagrad(model.parameters(), lr=0.1, lr_decay=1e-3, initial_accumulator_value=0.1)

Per parameter (PyTorch's single-tensor update; state "step" (float32 0-dim) t after incrementing
and "sum" s, both created by the constructor for every parameter, as PyTorch does):
    g = -g if maximize;  g = g + weight_decay * p;  clr = lr / (1 + (t - 1) * lr_decay)
    s = s + g * g;  p = p - clr * g / (sqrt(s) + eps)
The arithmetic is the engine's (rt::optim::adagrad_step_, one call per parameter). `foreach` is
accepted and ignored: there is one implementation, so the results are the same either way.
"""
import rustytorch as rt
from .. import _C

from .._memory import memory_category
from .optimizer import Optimizer


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group)

    def _init_state(self, param, group):
        state = self.state[param]
        if "sum" not in state:
            with memory_category("optimizer_state"):
                state["step"] = rt.tensor(0.0)
                state["sum"] = rt.full_like(param, group["initial_accumulator_value"])

    def step(self, closure=None):
        return self._step_each_parameter(closure)

    def _update(self, param, group):
        self._init_state(param, group)  # a group added by add_param_group after construction
        state = self.state[param]
        state["step"].add_(1)
        _C._adagrad_step_(param, param.grad, state["sum"], lr=group["lr"], lr_decay=group["lr_decay"],
                          weight_decay=group["weight_decay"], eps=group["eps"], maximize=group["maximize"],
                          step=float(state["step"].item()))
