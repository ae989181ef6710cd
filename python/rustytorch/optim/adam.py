"""Adam (torch.optim.Adam): L2 weight decay folded into the gradient, optional AMSGrad and maximize.

    opt = rt.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), amsgrad=True)

Per parameter (PyTorch's single-tensor update; state "step" (float32 0-dim), "exp_avg" m,
"exp_avg_sq" v, "max_exp_avg_sq" when amsgrad), t = step after incrementing:
    g = g + weight_decay * p;  m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g
    denom = sqrt(amsgrad ? max(v_max, v) : v) / sqrt(1 - beta2^t) + eps
    p = p - lr / (1 - beta1^t) * m / denom
    (m = m + (1 - beta1) * (g - m) as lerp_, the C++ Adam's and PyTorch 2's arithmetic)
AdamW (adamw.py) reuses this update with decoupled weight decay. Each group is one call
(_C._fused_adam_, rt::optim::fused_adam_): one pass over float32/float64 CPU parameters at the CPU's
instruction-set level, the fused kernel per parameter on a GPU, the chain of ops for anything else.
"""

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
        return self._step_each_group(closure)

    def _update_group(self, group):
        """One _fused_adam_ call for the group (rt::optim::fused_adam_): every parameter with a gradient,
        one op and one pass; parameters the CPU pass cannot take run the per-parameter update inside it."""
        amsgrad = group["amsgrad"]
        params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps = [], [], [], [], [], []
        for param in group["params"]:
            if param.grad is None:
                continue
            state = self.state[param]
            if not state:
                with memory_category("optimizer_state"):
                    state["step"] = rt.tensor(0.0)
                    state["exp_avg"] = rt.zeros_like(param)
                    state["exp_avg_sq"] = rt.zeros_like(param)
                    if amsgrad:
                        state["max_exp_avg_sq"] = rt.zeros_like(param)
            if amsgrad and "max_exp_avg_sq" not in state:
                raise RuntimeError(f"{type(self).__name__}: amsgrad=True but the loaded state of a parameter has no "
                                   "'max_exp_avg_sq'; it was saved with amsgrad=False")
            params.append(param)
            grads.append(param.grad)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            steps.append(state["step"])
            if amsgrad:
                max_sqs.append(state["max_exp_avg_sq"])
        _C._fused_adam_(params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps, lr=group["lr"], betas=group["betas"],
                        eps=group["eps"], weight_decay=group["weight_decay"],
                        decoupled_weight_decay=self._decoupled_weight_decay, maximize=group["maximize"])
