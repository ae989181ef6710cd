"""RMSprop (torch.optim.RMSprop): plain or centered, with optional momentum, weight decay and maximize.

    opt = rt.optim.RMSprop(model.parameters(), lr=1e-2, alpha=0.99, momentum=0.9, centered=True)

Per parameter (PyTorch's single-tensor update; state "step" (int, as PyTorch 1.13 keeps it),
"square_avg" v, "momentum_buffer" b when momentum > 0, "grad_avg" a when centered):
    g = -g if maximize;  g = g + weight_decay * p;  v = alpha * v + (1 - alpha) * g * g
    denom = sqrt(v - a * a) + eps with a = alpha * a + (1 - alpha) * g when centered, else sqrt(v) + eps
    b = momentum * b + g / denom; p = p - lr * b    (momentum > 0), else p = p - lr * g / denom
The arithmetic is the engine's (rt::optim::rmsprop_step_, one call per parameter). `foreach` is
accepted and ignored: there is one implementation, so the results are the same either way.
"""
import rustytorch as rt
from .. import _C

from .._memory import memory_category
from .optimizer import Optimizer


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 foreach=None, maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        self._check_unsupported(differentiable=differentiable)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        return self._step_each_parameter(closure)

    def _update(self, param, group):
        state = self.state[param]
        momentum, centered = group["momentum"], group["centered"]
        with memory_category("optimizer_state"):
            if not state:
                state["step"] = 0
                state["square_avg"] = rt.zeros_like(param)
            if momentum > 0 and "momentum_buffer" not in state:
                state["momentum_buffer"] = rt.zeros_like(param)
            if centered and "grad_avg" not in state:
                state["grad_avg"] = rt.zeros_like(param)
        state["step"] += 1
        _C._rmsprop_step_(param, param.grad, state["square_avg"], state["grad_avg"] if centered else None,
                          state["momentum_buffer"] if momentum > 0 else None, lr=group["lr"], alpha=group["alpha"],
                          eps=group["eps"], weight_decay=group["weight_decay"], momentum=momentum, centered=centered,
                          maximize=group["maximize"])
