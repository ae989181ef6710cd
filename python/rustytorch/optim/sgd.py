"""SGD with momentum, dampening, Nesterov, weight decay and maximize (torch.optim.SGD).

    opt = rt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)

Per parameter p with gradient g (PyTorch's single-tensor update; state "momentum_buffer"):
    g = -g if maximize;  g = g + weight_decay * p
    buf = g (first step) or momentum * buf + (1 - dampening) * g;  g = g + momentum * buf if nesterov else buf
    p = p - lr * g
Each group is one call (_C._fused_sgd_, rt::optim::fused_sgd_): one pass over float32/float64 CPU
parameters, the fused kernel per parameter on a GPU, the chain of ops for anything else; same arithmetic.
"""
import rustytorch as rt
from .. import _C

from .._memory import memory_category
from .optimizer import Optimizer, required


class SGD(Optimizer):
    def __init__(self, params, lr=required, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False):
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        self._check_unsupported(differentiable=differentiable)
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        return self._step_each_group(closure)

    def _update_group(self, group):
        """One _fused_sgd_ call for the group (rt::optim::fused_sgd_): one op and one pass."""
        momentum = group["momentum"]
        params, grads, bufs, first = [], [], [], []
        for p in group["params"]:
            if p.grad is None:
                continue
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if momentum == 0:
                state["momentum_buffer"] = None
                continue
            buf = state.get("momentum_buffer")
            first.append(buf is None)
            if buf is None:
                with memory_category("optimizer_state"):
                    buf = rt.empty_like(p)  # the first step writes the gradient into it
                state["momentum_buffer"] = buf
            bufs.append(buf)
        _C._fused_sgd_(params, grads, bufs, first, lr=group["lr"], momentum=momentum, dampening=group["dampening"],
                       weight_decay=group["weight_decay"], nesterov=group["nesterov"], maximize=group["maximize"])
