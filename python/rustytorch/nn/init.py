"""rt.nn.init: fill tensors in place with PyTorch's initialisation schemes (same formulas, same names).

    w = rt.empty(128, 64)
    rt.nn.init.kaiming_uniform_(w, a=math.sqrt(5))          # nn.Linear's default weight init
    rt.nn.init.xavier_normal_(w, gain=rt.nn.init.calculate_gain("tanh"))
    rt.nn.init.trunc_normal_(w, std=0.02)                   # N(0, 0.02^2) restricted to [-2, 2]

Contracts: every function writes under rt.no_grad() (leaf Parameters are fine), draws from the
default generator (rt.manual_seed makes it reproducible) and returns its argument. Fan-based
schemes need at least 2 dims (ValueError); for a weight [out, in, k...], fan_in = in * prod(k)
and fan_out = out * prod(k).
"""
import math

import rustytorch as rt

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_",
           "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_"]


def calculate_gain(nonlinearity, param=None):
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}; use one of linear, conv1d, conv2d, sigmoid, "
                     "tanh, relu, leaky_relu, selu")


def _calculate_fan_in_and_fan_out(tensor):
    shape = tuple(tensor.shape)
    if len(shape) < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions "
                         f"(got shape {list(shape)})")
    receptive = 1
    for s in shape[2:]:
        receptive *= s
    return shape[1] * receptive, shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _is_empty(tensor):
    return tensor.numel() == 0


def uniform_(tensor, a=0.0, b=1.0):
    with rt.no_grad():
        return tensor.uniform_(a, b)


def normal_(tensor, mean=0.0, std=1.0):
    with rt.no_grad():
        return tensor.normal_(mean, std)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0):
    """N(mean, std^2) conditioned on [a, b], by redrawing the samples that fall outside."""
    if not a < b:
        raise ValueError(f"trunc_normal_: need a < b, got a={a}, b={b}")
    if std <= 0:
        raise ValueError(f"trunc_normal_: std must be positive, got {std}")
    lo, hi = (a - mean) / std, (b - mean) / std
    if hi < -6 or lo > 6:
        raise ValueError(f"trunc_normal_: [a, b] = [{a}, {b}] lies more than 6 std from the mean {mean}; "
                         "the truncated distribution is numerically empty")
    with rt.no_grad():
        tensor.normal_(mean, std)
        for _ in range(1000):
            outside = (tensor < a).logical_or(tensor > b)
            if not bool(outside.any().item()):
                return tensor
            fresh = rt.empty(tuple(tensor.shape), dtype=tensor.dtype).normal_(mean, std)
            tensor.copy_(rt.where(outside, fresh, tensor))
        raise RuntimeError("trunc_normal_: samples still outside [a, b] after 1000 redraws")


def constant_(tensor, val):
    with rt.no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    with rt.no_grad():
        return tensor.zero_()


def xavier_uniform_(tensor, gain=1.0):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -math.sqrt(3.0) * std, math.sqrt(3.0) * std)


def xavier_normal_(tensor, gain=1.0):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def _kaiming_std(tensor, a, mode, nonlinearity):
    fan = _calculate_correct_fan(tensor, mode)
    if fan == 0:
        raise ValueError(f"kaiming init: {mode} is 0 for a tensor of shape {list(tensor.shape)}")
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    if _is_empty(tensor):
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    if _is_empty(tensor):
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity))
