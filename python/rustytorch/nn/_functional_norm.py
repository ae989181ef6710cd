"""group_norm, instance_norm and local_response_norm (torch.nn.functional), composed over the engine's
layer_norm and avg_pool2d so autograd gives their backward.

    y = F.group_norm(x, 4, weight, bias)            # x [N, C, *], C divisible by 4
    y = F.instance_norm(x, running_mean, running_var, use_input_stats=True, momentum=0.1)
    y = F.local_response_norm(x, size=5)            # x [N, C, *]

group_norm and instance_norm normalise each [N, group] (or [N, C]) slice with layer_norm over its
flattened elements (biased variance), then apply the per-channel weight and bias. instance_norm with
running stats updates them in place with the batch average of the per-instance mean and unbiased
variance, as torch does; use_input_stats=False normalises with the running stats instead.
"""
from .. import _C
from .._grad_mode import no_grad
from ._functional_padding import pad as _pad

__all__ = ["group_norm", "instance_norm", "local_response_norm"]


def _affine(out, weight, bias):
    shape = (out.shape[1],) + (1,) * (out.dim() - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def _check_channels(op, name, tensor, channels):
    if tensor is not None and tensor.numel() != channels:
        raise ValueError(f"{op}: {name} must hold one value per channel ({channels}), got shape "
                         f"{list(tensor.shape)}")


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalise each group of C / num_groups channels of every sample over those channels and all spatial
    positions, then scale and shift per channel."""
    if input.dim() < 2:
        raise ValueError(f"group_norm: expected an input of at least 2 dims [N, C, *], got shape "
                         f"{list(input.shape)}")
    n, c = input.shape[0], input.shape[1]
    if not isinstance(num_groups, int) or num_groups <= 0 or c % num_groups:
        raise ValueError(f"group_norm: expected number of channels in input to be divisible by num_groups, but got "
                         f"input of shape {list(input.shape)} and num_groups={num_groups}")
    _check_channels("group_norm", "weight", weight, c)
    _check_channels("group_norm", "bias", bias, c)
    grouped = input.reshape(n, num_groups, -1)
    out = _C.layer_norm(grouped, (grouped.shape[2],), None, None, eps).reshape(input.shape)
    return _affine(out, weight, bias)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalise every channel of every sample over its spatial positions ([N, C, *] input)."""
    if input.dim() < 3:
        raise ValueError(f"instance_norm: expected an input of at least 3 dims [N, C, *], got shape "
                         f"{list(input.shape)}")
    n, c = input.shape[0], input.shape[1]
    for name, tensor in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                         ("bias", bias)):
        _check_channels("instance_norm", name, tensor, c)
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise ValueError("instance_norm: use_input_stats=False needs running_mean and running_var")
        shape = (c,) + (1,) * (input.dim() - 2)
        out = (input - running_mean.reshape(shape)) * (running_var.reshape(shape) + eps).rsqrt()
        return _affine(out, weight, bias)
    flat = input.reshape(n, c, -1)
    spatial = flat.shape[2]
    if spatial <= 1:
        raise ValueError(f"instance_norm: expected more than 1 spatial element when training, got input size "
                         f"{list(input.shape)}")
    if running_mean is not None or running_var is not None:
        if momentum is None:
            raise ValueError("instance_norm: momentum=None (a cumulative average) is not supported; pass a float")
        with no_grad():
            stats = flat.detach()
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_(stats.mean(2).mean(0) * momentum)
            if running_var is not None:
                running_var.mul_(1 - momentum).add_(stats.var(2, unbiased=True).mean(0) * momentum)
    out = _C.layer_norm(flat, (spatial,), None, None, eps).reshape(input.shape)
    return _affine(out, weight, bias)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha * mean of x^2 over `size` neighbouring channels) ^ beta, the neighbourhood zero-padded
    by size // 2 before and (size - 1) // 2 after each channel."""
    if input.dim() < 3:
        raise ValueError(f"local_response_norm: expected 3D or higher dimensionality input (got {input.dim()} "
                         "dimensions)")
    if not isinstance(size, int) or size <= 0:
        raise ValueError(f"local_response_norm: size must be a positive int, got {size!r}")
    if input.numel() == 0:
        return input
    n, c = input.shape[0], input.shape[1]
    squares = (input * input).reshape(n, 1, c, -1)
    squares = _pad(squares, (0, 0, size // 2, (size - 1) // 2))
    mean = _C.avg_pool2d(squares, (size, 1), (1, 1), 0, False, True).reshape(input.shape)
    return input / (mean * alpha + k).pow(beta)
