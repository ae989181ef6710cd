"""SGD with momentum, dampening, Nesterov, weight decay and maximize (torch.optim.SGD).

    opt = rt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)

Per parameter p with gradient g (PyTorch's single-tensor update; state "momentum_buffer"):
    g = -g if maximize;  g = g + weight_decay * p
    buf = g (first step) or momentum * buf + (1 - dampening) * g;  g = g + momentum * buf if nesterov else buf
    p = p - lr * g
Parameters on a GPU take one fused kernel per parameter (rt::optim::sgd_step_, the same arithmetic).
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
        loss = self._run_closure(closure)
        with rt.no_grad():
            for group in self.param_groups:
                self._update_group(group)
        return loss

    def _update_group(self, group):
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        weight_decay, nesterov = group["weight_decay"], group["nesterov"]
        for p in group["params"]:
            if p.grad is None:
                continue
            d_p = -p.grad if group["maximize"] else p.grad
            state = self.state[p]
            if p.is_cuda:
                self._fused_update(p, d_p, state, group)
                continue
            if weight_decay != 0:
                d_p = d_p.add(p, alpha=weight_decay)
            if momentum != 0:
                buf = state.get("momentum_buffer")
                if buf is None:
                    with memory_category("optimizer_state"):
                        buf = d_p.detach().clone()
                else:
                    buf.mul_(momentum).add_(d_p, alpha=1 - dampening)
                state["momentum_buffer"] = buf
                d_p = d_p.add(buf, alpha=momentum) if nesterov else buf
            else:
                state["momentum_buffer"] = None
            p.add_(d_p, alpha=-lr)

    @staticmethod
    def _fused_update(p, grad, state, group):
        momentum = group["momentum"]
        buf, first = None, False
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                with memory_category("optimizer_state"):
                    buf = rt.empty_like(p)  # the first step writes the gradient into it
                first = True
            state["momentum_buffer"] = buf
        else:
            state["momentum_buffer"] = None
        _C._sgd_step_(p, buf, grad, lr=group["lr"], momentum=momentum, dampening=group["dampening"],
                      weight_decay=group["weight_decay"], nesterov=group["nesterov"], first=first)
