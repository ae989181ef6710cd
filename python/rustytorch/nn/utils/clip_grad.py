"""Gradient clipping, as torch.nn.utils.clip_grad_norm_ / clip_grad_value_.

    loss.backward()
    total = rt.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)   # norm before clipping
    rt.nn.utils.clip_grad_value_(model.parameters(), 0.5)                   # clamp to [-0.5, 0.5]

Parameters without a .grad are skipped. The total norm is that of all gradients together;
every gradient is scaled in place by min(1, max_norm / (total_norm + 1e-6)).
"""
import math

import rustytorch as rt


def _grads(parameters):
    if isinstance(parameters, rt.Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    grads = _grads(parameters)
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not grads:
        return rt.tensor(0.0)
    with rt.no_grad():
        if norm_type == math.inf:
            norms = [g.detach().abs().max() for g in grads]
            total = norms[0] if len(norms) == 1 else rt.stack(norms).max()
        else:
            total = rt.stack([rt.norm(g.detach(), norm_type) for g in grads]).norm(norm_type)
        total_value = float(total.item())
        if error_if_nonfinite and not math.isfinite(total_value):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is "
                               "non-finite, so it cannot be clipped. To disable this error and scale the "
                               "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
        coef = max_norm / (total_value + 1e-6)
        if coef < 1.0:
            for g in grads:
                g.mul_(coef)
    return total


def clip_grad_value_(parameters, clip_value):
    clip_value = float(clip_value)
    with rt.no_grad():
        for g in _grads(parameters):
            g.clamp_(min=-clip_value, max=clip_value)
