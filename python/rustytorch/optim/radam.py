"""RAdam (torch.optim.RAdam): Adam whose adaptive step is rectified and switched on once the variance
of the second moment is tractable (Liu et al., 2019).

    opt = rt.optim.RAdam(model.parameters(), lr=1e-3)

Per parameter (PyTorch's single-tensor update; state "step" (float32 0-dim) t after incrementing,
"exp_avg" m, "exp_avg_sq" v):
    g = g + weight_decay * p;  m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g
    rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)
    p = p - lr * m / (1 - beta1^t) * [rho_t > 5: r_t * sqrt(1 - beta2^t) / (sqrt(v) + eps)]
PyTorch 1.13's RAdam takes no `maximize`, so neither does this one. The arithmetic is the engine's
(rt::optim::radam_step_, one call per parameter). `foreach` is accepted and ignored: there is one
implementation, so the results are the same either way.
"""
import rustytorch as rt
from .. import _C

from .._memory import memory_category
from .adam import check_adam_args
from .optimizer import Optimizer


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None):
        check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach)
        super().__init__(params, defaults)

    def step(self, closure=None):
        return self._step_each_parameter(closure)

    def _update(self, param, group):
        state = self.state[param]
        if not state:
            with memory_category("optimizer_state"):
                state["step"] = rt.tensor(0.0)
                state["exp_avg"] = rt.zeros_like(param)
                state["exp_avg_sq"] = rt.zeros_like(param)
        state["step"].add_(1)
        _C._radam_step_(param, param.grad, state["exp_avg"], state["exp_avg_sq"], lr=group["lr"],
                        betas=group["betas"], eps=group["eps"], weight_decay=group["weight_decay"],
                        step=float(state["step"].item()))
