"""Pooling beyond the engine's 2-D ops (torch.nn.functional): max/avg pooling in 1-D and 3-D, max
pooling with return_indices, avg_pool2d's divisor_override, adaptive max pooling and adaptive_avg_pool1d.

    y = F.max_pool1d(x, 3, stride=2)                          # x [N, C, L]
    y, idx = F.adaptive_max_pool2d(x, (4, 4), return_indices=True)
    y = F.avg_pool3d(x, 2, divisor_override=3)                 # x [N, C, D, H, W]

1-D pooling is the engine's 2-D op on an [N, C, 1, L] view; 3-D pooling pools H and W with the 2-D op,
then D with a (k, 1) window: a box's max, count and sum factor over its dims. Max pooling with indices
gathers every window through a precomputed table of flat input positions (padding masked with -inf),
takes the argmax, and gathers the values at those positions, so the gradient reaches the one element
torch's picks. Indices are flat positions in each input plane (d * H * W + h * W + w), as torch's.
"""
import math

import numpy as np

from .. import _C

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_max_pool1d",
           "adaptive_max_pool2d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_avg_pool1d"]


def _ntuple(value, n, op, name):
    if isinstance(value, int):
        return (value,) * n
    value = tuple(value)
    if len(value) == 1:
        value = value * n
    if len(value) != n or not all(isinstance(v, int) for v in value):
        raise ValueError(f"{op}: {name} must be an int or a tuple of {n} ints, got {value}")
    return value


def _batched(op, input, n):
    """input as [B, C, spatial...] with B >= 1, and the shape to give the result's leading dims back."""
    if input.dim() not in (n + 1, n + 2):
        raise ValueError(f"{op}: expected a {n + 1}-D (unbatched) or {n + 2}-D (batched) input, got shape "
                         f"{list(input.shape)}")
    lead = tuple(input.shape[:-n])
    return input.reshape(-1, 1, *input.shape[-n:]) if input.dim() == n + 1 else input, lead


def _window_args(op, n, input, kernel_size, stride, padding, dilation, ceil_mode):
    """Checked (kernel, stride, padding, dilation, output sizes); torch's output-size rule, ceil_mode included."""
    kernel = _ntuple(kernel_size, n, op, "kernel_size")
    stride = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) else \
        _ntuple(stride, n, op, "stride")
    padding = _ntuple(padding, n, op, "padding")
    dilation = _ntuple(dilation, n, op, "dilation")
    for name, value in (("kernel_size", kernel), ("stride", stride), ("dilation", dilation)):
        if any(v <= 0 for v in value):
            raise ValueError(f"{op}: {name} must be positive, got {value}")
    if any(p < 0 or 2 * p > k for p, k in zip(padding, kernel)):
        raise ValueError(f"{op}: padding {padding} should be at most half of the kernel size {kernel}. Hint: "
                         "use a larger kernel_size or less padding")
    sizes = tuple(input.shape[-n:])
    outs, spans = [], []
    for size, k, s, p, d in zip(sizes, kernel, stride, padding, dilation):
        span = size + 2 * p - d * (k - 1) - 1
        out = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (out - 1) * s >= size + p:
            out -= 1
        outs.append(out)
        spans.append(span)
    if min(spans) < 0 or min(outs) <= 0:
        raise ValueError(f"{op}: input of shape {list(input.shape)} is too small for kernel_size {kernel} with "
                         f"padding {padding} and dilation {dilation} (output size {outs})")
    return kernel, stride, padding, dilation, tuple(outs)


# [SECTION] max pooling with indices through window tables

def _max_pool_table(op, x, coords, valid, outs, return_indices):
    """x [B, C, spatial...]; coords/valid [prod(outs), window] numpy: flat input positions and which are real."""
    b, c = x.shape[0], x.shape[1]
    flat = x.reshape(b, c, -1)
    table = _C.tensor(np.where(valid, coords, 0).reshape(-1), dtype=_C.int64, device=x.device)
    windows = flat.index_select(2, table).reshape(b, c, *valid.shape)
    if not valid.all():
        pad = _C.tensor(~valid, dtype=_C.bool, device=x.device)
        windows = windows.masked_fill(pad, -math.inf)
    best = windows.argmax(-1, keepdim=True)
    positions = table.reshape(valid.shape).expand(b, c, *valid.shape).gather(3, best).squeeze(3)
    values = flat.gather(2, positions).reshape(b, c, *outs)
    return (values, positions.reshape(b, c, *outs)) if return_indices else values


def _table(sizes, starts, offsets, valids):
    """Per-dim (start [O], offset [K], valid [O, K]) -> flat coords and validity, [prod(O), prod(K)]."""
    n = len(sizes)
    coords = np.zeros([1] * (2 * n), dtype=np.int64)
    valid = np.ones([1] * (2 * n), dtype=bool)
    for i, (size, start, offset, ok) in enumerate(zip(sizes, starts, offsets, valids)):
        shape = [1] * (2 * n)
        shape[i], shape[n + i] = len(start), len(offset)
        pos = (start[:, None] + offset[None, :])
        ok = ok & (pos >= 0) & (pos < size)
        coords = coords * size + pos.reshape(shape)
        valid = valid & ok.reshape(shape)
    outs = [len(s) for s in starts]
    window = int(np.prod([len(o) for o in offsets]))
    coords = np.broadcast_to(coords, [*outs, *[len(o) for o in offsets]]).reshape(-1, window)
    valid = np.broadcast_to(valid, [*outs, *[len(o) for o in offsets]]).reshape(-1, window)
    return coords, valid


def _max_pool_indices(op, n, input, kernel_size, stride, padding, dilation, ceil_mode):
    x, lead = _batched(op, input, n)
    kernel, stride, padding, dilation, outs = _window_args(op, n, x, kernel_size, stride, padding, dilation,
                                                           ceil_mode)
    sizes = tuple(x.shape[2:])
    starts = [np.arange(o) * s - p for o, s, p in zip(outs, stride, padding)]
    offsets = [np.arange(k) * d for k, d in zip(kernel, dilation)]
    valids = [np.ones((o, k), dtype=bool) for o, k in zip(outs, kernel)]
    coords, valid = _table(sizes, starts, offsets, valids)
    values, indices = _max_pool_table(op, x, coords, valid, outs, True)
    return values.reshape(*lead, *outs), indices.reshape(*lead, *outs)


# [SECTION] max pooling

def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return _max_pool_indices("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return _max_pool_indices("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return _max_pool_indices("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over windows of [N, C, L] (or [C, L]); with return_indices also the argmax positions."""
    if return_indices:
        return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    x, lead = _batched("max_pool1d", input, 1)
    k, s, p, d, outs = _window_args("max_pool1d", 1, x, kernel_size, stride, padding, dilation, ceil_mode)
    out = _C.max_pool2d(x.unsqueeze(2), (1, k[0]), (1, s[0]), (0, p[0]), (1, d[0]), ceil_mode)
    return out.reshape(*lead, outs[0])


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The engine's max_pool2d; return_indices=True also gives the argmax positions (h * W + w)."""
    if return_indices:
        return max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _C.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over windows of [N, C, D, H, W] (or [C, D, H, W]); with return_indices also the argmax positions."""
    if return_indices:
        return max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    x, lead = _batched("max_pool3d", input, 3)
    k, s, p, d, outs = _window_args("max_pool3d", 3, x, kernel_size, stride, padding, dilation, ceil_mode)
    planes = x.reshape(-1, x.shape[2], x.shape[3], x.shape[4])
    hw = _C.max_pool2d(planes, k[1:], s[1:], p[1:], d[1:], ceil_mode)
    out = _C.max_pool2d(hw.reshape(hw.shape[0], 1, x.shape[2], -1), (k[0], 1), (s[0], 1), (p[0], 0), (d[0], 1),
                        ceil_mode)
    return out.reshape(*lead, *outs)


# [SECTION] average pooling

def _include_pad_sizes(size, k, s, p, out):
    """Per-window divisor with count_include_pad=True: the window clipped to the padded input."""
    start = np.arange(out) * s - p
    return np.minimum(start + k, size + p) - start


def _divisor_override(x, out, kernel, stride, padding, outs, divisor_override):
    """out computed with count_include_pad=True -> window sums / divisor_override."""
    if not isinstance(divisor_override, int) or divisor_override == 0:
        raise ValueError(f"divisor_override must be a non-zero int, got {divisor_override!r}")
    n = len(kernel)
    counts = np.ones([1] * n)
    for i in range(n):
        shape = [1] * n
        shape[i] = outs[i]
        counts = counts * _include_pad_sizes(x.shape[2 + i], kernel[i], stride[i], padding[i], outs[i]).reshape(shape)
    return out * _C.tensor(counts / divisor_override, dtype=out.dtype, device=out.device)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """Mean over windows of [N, C, L] (or [C, L])."""
    x, lead = _batched("avg_pool1d", input, 1)
    k, s, p, _, outs = _window_args("avg_pool1d", 1, x, kernel_size, stride, padding, 1, ceil_mode)
    out = _C.avg_pool2d(x.unsqueeze(2), (1, k[0]), (1, s[0]), (0, p[0]), ceil_mode, count_include_pad)
    return out.reshape(*lead, outs[0])


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """The engine's avg_pool2d; divisor_override divides each window's sum by that number instead."""
    if divisor_override is None:
        return _C.avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad)
    x, lead = _batched("avg_pool2d", input, 2)
    k, s, p, _, outs = _window_args("avg_pool2d", 2, x, kernel_size, stride, padding, 1, ceil_mode)
    out = _C.avg_pool2d(x, k, s, p, ceil_mode, True)
    return _divisor_override(x, out, k, s, p, outs, divisor_override).reshape(*lead, *outs)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over windows of [N, C, D, H, W] (or [C, D, H, W]); divisor_override as in avg_pool2d."""
    x, lead = _batched("avg_pool3d", input, 3)
    k, s, p, _, outs = _window_args("avg_pool3d", 3, x, kernel_size, stride, padding, 1, ceil_mode)
    include = count_include_pad or divisor_override is not None
    planes = x.reshape(-1, x.shape[2], x.shape[3], x.shape[4])
    hw = _C.avg_pool2d(planes, k[1:], s[1:], p[1:], ceil_mode, include)
    out = _C.avg_pool2d(hw.reshape(hw.shape[0], 1, x.shape[2], -1), (k[0], 1), (s[0], 1), (p[0], 0), ceil_mode,
                        include)
    out = out.reshape(x.shape[0], x.shape[1], *outs)
    if divisor_override is not None:
        out = _divisor_override(x, out, k, s, p, outs, divisor_override)
    return out.reshape(*lead, *outs)


# [SECTION] adaptive pooling

def _adaptive_sizes(op, n, x, output_size):
    sizes = tuple(x.shape[2:])
    if output_size is None or isinstance(output_size, int):
        output_size = (output_size,) * n
    output_size = tuple(output_size)
    if len(output_size) == 1:
        output_size = output_size * n
    if len(output_size) != n:
        raise ValueError(f"{op}: output_size must be an int or a tuple of {n} ints, got {output_size}")
    outs = tuple(size if o is None else o for o, size in zip(output_size, sizes))
    if any(not isinstance(o, int) or o <= 0 for o in outs):
        raise ValueError(f"{op}: output_size must hold positive ints, got {output_size}")
    if min(sizes) <= 0:
        raise ValueError(f"{op}: input of shape {list(x.shape)} has an empty spatial dim")
    return sizes, outs


def _adaptive_max(op, n, input, output_size, return_indices):
    x, lead = _batched(op, input, n)
    sizes, outs = _adaptive_sizes(op, n, x, output_size)
    starts, offsets, valids = [], [], []
    for size, out in zip(sizes, outs):
        start = (np.arange(out) * size) // out
        end = -((-(np.arange(out) + 1) * size) // out)
        width = int((end - start).max())
        starts.append(start)
        offsets.append(np.arange(width))
        valids.append(np.arange(width)[None, :] < (end - start)[:, None])
    coords, valid = _table(sizes, starts, offsets, valids)
    result = _max_pool_table(op, x, coords, valid, outs, return_indices)
    if return_indices:
        return result[0].reshape(*lead, *outs), result[1].reshape(*lead, *outs)
    return result.reshape(*lead, *outs)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max over output_size windows covering [N, C, L] (or [C, L]): window i spans
    [floor(i * L / out), ceil((i + 1) * L / out))."""
    return _adaptive_max("adaptive_max_pool1d", 1, input, output_size, return_indices)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """2-D adaptive max pooling; an output_size entry of None keeps that input size."""
    return _adaptive_max("adaptive_max_pool2d", 2, input, output_size, return_indices)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    return _adaptive_max("adaptive_max_pool1d", 1, input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    return _adaptive_max("adaptive_max_pool2d", 2, input, output_size, True)


def adaptive_avg_pool1d(input, output_size):
    """Mean over output_size windows covering [N, C, L] (or [C, L]); the engine's 2-D op on [N, C, 1, L]."""
    x, lead = _batched("adaptive_avg_pool1d", input, 1)
    _, outs = _adaptive_sizes("adaptive_avg_pool1d", 1, x, output_size)
    return _C.adaptive_avg_pool2d(x.unsqueeze(2), (1, outs[0])).reshape(*lead, outs[0])
