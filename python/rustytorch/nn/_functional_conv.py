"""conv3d and conv_transpose1d/2d/3d (torch.nn.functional), composed over engine ops so autograd gives
their backward.

    y = F.conv3d(x, w, b, stride=1, padding=1)                              # x [N, C, D, H, W]
    up = F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1)  # w [C_in, C_out / groups, kH, kW]

conv1d and conv2d are the engine's ops; padding="same" with an even total (asymmetric) padding pads the
input's end by the extra zero first, as torch does. conv3d gathers the kernel's depth taps of the (zero-padded) input with one index_select, folds the
output depth into the batch and the taps into the channels, and makes one engine conv2d call.

conv_transpose is the adjoint of a convolution: one matmul multiplies every input pixel by the kernel
(the "columns", [N, C_out, k..., I...]), then each spatial dim is folded onto the output (col2im) by a
matmul with a constant 0/1 matrix S[o, (k, i)] = 1 where o == i * stride - padding + k * dilation. The
folding is separable per dim, so it costs less than the first matmul, and no zero-stuffed input is built.
"""
import functools

import numpy as np

from .. import _C
from ._functional_padding import pad as _pad

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]


def _ntuple(value, n, op, name):
    if isinstance(value, int):
        return (value,) * n
    value = tuple(value)
    if len(value) == 1:
        value = value * n
    if len(value) != n or not all(isinstance(v, int) for v in value):
        raise ValueError(f"{op}: {name} must be an int or a tuple of {n} ints, got {value}")
    return value


def _check_positive(op, **values):
    for name, value in values.items():
        if any(v <= 0 for v in value):
            raise ValueError(f"{op}: {name} must be positive, got {value}")


def _batched(op, input, n):
    """input with a batch dim, and whether one was added (torch accepts an unbatched C x spatial input)."""
    if input.dim() == n + 2:
        return input, False
    if input.dim() == n + 1:
        return input.unsqueeze(0), True
    raise ValueError(f"{op}: expected a {n + 1}-D (unbatched) or {n + 2}-D (batched) input, got shape "
                     f"{list(input.shape)}")


# [SECTION] conv1d, conv2d, conv3d

def _same_padding(op, stride, dilation, kernel):
    if any(s != 1 for s in stride):
        raise ValueError(f"{op}: padding='same' is not supported for strided convolutions")
    total = [d * (k - 1) for d, k in zip(dilation, kernel)]
    return tuple(t // 2 for t in total), tuple(t - t // 2 for t in total)


def _asymmetric_same(op, n, input, weight, stride, dilation):
    """(input padded at the end by the odd part of 'same' padding, symmetric padding) or None when the
    engine's 'same' is exact."""
    stride = _ntuple(stride, n, op, "stride")
    dilation = _ntuple(dilation, n, op, "dilation")
    left, right = _same_padding(op, stride, dilation, tuple(weight.shape[-n:]))
    extra = [r - p for p, r in zip(left, right)]
    if not any(extra):
        return None
    pads = []
    for e in reversed(extra):
        pads += [0, e]
    return _pad(input, tuple(pads)), left


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """The engine's conv1d; padding="same" also for an even dilated kernel (the extra zero at the end)."""
    if isinstance(padding, str) and padding == "same" and weight.dim() == 3:
        padded = _asymmetric_same("conv1d", 1, input, weight, stride, dilation)
        if padded is not None:
            return _C.conv1d(padded[0], weight, bias, stride, padded[1][0], dilation, groups)
    return _C.conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """The engine's conv2d; padding="same" also for an even dilated kernel (the extra zero at the end)."""
    if isinstance(padding, str) and padding == "same" and weight.dim() == 4:
        padded = _asymmetric_same("conv2d", 2, input, weight, stride, dilation)
        if padded is not None:
            return _C.conv2d(padded[0], weight, bias, stride, padded[1], dilation, groups)
    return _C.conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution over [N, C_in, D, H, W] (or [C_in, D, H, W]) with weight [C_out, C_in / groups, kD, kH, kW].
    padding: int, tuple, "valid" or "same" (stride 1; an odd total padding puts the extra zero at the end)."""
    op = "conv3d"
    x, unbatched = _batched(op, input, 3)
    if weight.dim() != 5:
        raise ValueError(f"{op}: expected a 5-D weight [C_out, C_in / groups, kD, kH, kW], got shape "
                         f"{list(weight.shape)}")
    stride = _ntuple(stride, 3, op, "stride")
    dilation = _ntuple(dilation, 3, op, "dilation")
    _check_positive(op, stride=stride, dilation=dilation)
    kernel = tuple(weight.shape[2:])
    c_out, c_in_group = weight.shape[0], weight.shape[1]
    if groups <= 0 or c_out % groups:
        raise ValueError(f"{op}: groups must be a positive divisor of the weight's {c_out} output channels, "
                         f"got {groups}")
    if x.shape[1] != c_in_group * groups:
        raise ValueError(f"{op}: given groups={groups}, weight of size {list(weight.shape)}, expected input"
                         f"{list(x.shape)} to have {c_in_group * groups} channels, but got {x.shape[1]} channels "
                         "instead")
    if bias is not None and tuple(bias.shape) != (c_out,):
        raise ValueError(f"{op}: bias must have shape [{c_out}], got {list(bias.shape)}")
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0, 0)
        elif padding == "same":
            padding, right = _same_padding(op, stride, dilation, kernel)
            extra = [r - p for p, r in zip(padding, right)]
            if any(extra):
                x = _pad(x, (0, extra[2], 0, extra[1], 0, extra[0]))
        else:
            raise ValueError(f"{op}: invalid padding string {padding!r}, should be one of ['valid', 'same']")
    padding = _ntuple(padding, 3, op, "padding")
    if any(p < 0 for p in padding):
        raise ValueError(f"{op}: padding must be non-negative, got {padding}")
    n, depth = x.shape[0], x.shape[2] + 2 * padding[0]
    d_out = (depth - dilation[0] * (kernel[0] - 1) - 1) // stride[0] + 1
    spatial = [x.shape[i + 2] + 2 * padding[i] - dilation[i] * (kernel[i] - 1) for i in range(3)]
    if d_out <= 0 or min(spatial) <= 0:
        raise ValueError(f"{op}: input of shape {list(input.shape)} padded by {padding} is smaller than the "
                         f"kernel {list(kernel)} dilated by {dilation}. Hint: use a larger input or more padding")
    if padding[0]:
        x = _pad(x, (0, 0, 0, 0, padding[0], padding[0]))
    taps = (np.arange(kernel[0])[:, None] * dilation[0] + np.arange(d_out)[None, :] * stride[0]).reshape(-1)
    index = _C.tensor(taps, dtype=_C.int64, device=x.device)
    h, w = x.shape[3], x.shape[4]
    cols = x.index_select(2, index).reshape(n, groups, c_in_group, kernel[0], d_out, h, w)
    cols = cols.permute(0, 4, 1, 3, 2, 5, 6).reshape(n * d_out, groups * kernel[0] * c_in_group, h, w)
    w2 = weight.permute(0, 2, 1, 3, 4).reshape(c_out, kernel[0] * c_in_group, kernel[1], kernel[2])
    out = _C.conv2d(cols, w2, bias, stride[1:], padding[1:], dilation[1:], groups)
    out = out.reshape(n, d_out, c_out, out.shape[2], out.shape[3]).permute(0, 2, 1, 3, 4)
    return out.squeeze(0) if unbatched else out


# [SECTION] conv_transpose

@functools.lru_cache(maxsize=256)
def _fold_matrix(size, kernel, stride, padding, dilation, out, left, dtype, device):
    """The 0/1 col2im matrix of one spatial dim: [out, kernel * size] when left, else its transpose."""
    s = np.zeros((out, kernel, size))
    k, i = np.meshgrid(np.arange(kernel), np.arange(size), indexing="ij")
    o = i * stride - padding + k * dilation
    keep = (o >= 0) & (o < out)
    s[o[keep], k[keep], i[keep]] = 1.0
    s = s.reshape(out, kernel * size)
    return _C.tensor(s if left else np.ascontiguousarray(s.T), dtype=dtype, device=device)


def _conv_transpose(op, n, input, weight, bias, stride, padding, output_padding, groups, dilation):
    x, unbatched = _batched(op, input, n)
    if weight.dim() != n + 2:
        raise ValueError(f"{op}: expected a {n + 2}-D weight [C_in, C_out / groups, k...], got shape "
                         f"{list(weight.shape)}")
    for name, value in (("padding", padding), ("output_padding", output_padding)):
        if isinstance(value, str):
            raise ValueError(f"{op}: {name}={value!r} is not supported: transposed convolutions take int "
                             "padding (give the output size to the module's forward instead)")
    stride = _ntuple(stride, n, op, "stride")
    padding = _ntuple(padding, n, op, "padding")
    output_padding = _ntuple(output_padding, n, op, "output_padding")
    dilation = _ntuple(dilation, n, op, "dilation")
    _check_positive(op, stride=stride, dilation=dilation)
    if any(p < 0 for p in padding + output_padding):
        raise ValueError(f"{op}: padding and output_padding must be non-negative, got {padding} and "
                         f"{output_padding}")
    if any(op_ >= s and op_ >= d for op_, s, d in zip(output_padding, stride, dilation)):
        raise ValueError(f"{op}: output padding must be smaller than either stride or dilation, but got "
                         f"output_padding={output_padding}, stride={stride}, dilation={dilation}")
    c_in = weight.shape[0]
    if groups <= 0 or c_in % groups:
        raise ValueError(f"{op}: groups must be a positive divisor of the weight's {c_in} input channels, "
                         f"got {groups}")
    if x.shape[1] != c_in:
        raise ValueError(f"{op}: given transposed=1, weight of size {list(weight.shape)}, expected input"
                         f"{list(x.shape)} to have {c_in} channels, but got {x.shape[1]} channels instead")
    c_out_group, kernel = weight.shape[1], tuple(weight.shape[2:])
    c_out = c_out_group * groups
    if bias is not None and tuple(bias.shape) != (c_out,):
        raise ValueError(f"{op}: bias must have shape [{c_out}], got {list(bias.shape)}")
    sizes = tuple(x.shape[2:])
    outs = tuple((i - 1) * s - 2 * p + d * (k - 1) + o + 1
                 for i, s, p, d, k, o in zip(sizes, stride, padding, dilation, kernel, output_padding))
    if min(outs) <= 0:
        raise ValueError(f"{op}: the output size {list(outs)} of input {list(x.shape)} is too small. Hint: use "
                         "less padding")
    batch, c_in_group = x.shape[0], c_in // groups
    # columns: every input pixel times the kernel, [N, C_out, k_n, ..., k_1, I_1, ..., I_n]; one gemm per group
    # with the batch folded into the columns (a batch-broadcast matmul would make the weight's gradient slow)
    pixels = x.reshape(batch, groups, c_in_group, -1).permute(1, 2, 0, 3).reshape(groups, c_in_group, -1)
    taps = weight.reshape(groups, c_in_group, c_out_group, *kernel).permute(0, 2, *range(n + 2, 2, -1), 1)
    cols = taps.reshape(groups, -1, c_in_group).matmul(pixels)          # [g, C_out/g * K, N * L]
    cols = cols.reshape(groups, -1, batch, pixels.shape[2] // batch).permute(2, 0, 1, 3)
    t = cols.reshape(batch, c_out, *kernel[::-1], *sizes)
    # invariant at step i: t is [N, C_out, O_1..O_i-1, k_n..k_i, I_i..I_n]
    for i in range(n):
        args = (sizes[i], kernel[i], stride[i], padding[i], dilation[i], outs[i])
        if i == n - 1:
            t = t.reshape(batch, c_out, *outs[:i], kernel[i] * sizes[i])
            t = t.matmul(_fold_matrix(*args, False, x.dtype, str(x.device)))
            break
        lead = (batch, c_out) + outs[:i] + kernel[n - 1:i:-1]
        trailing = sizes[i + 1:]
        t = t.reshape(*lead, kernel[i] * sizes[i], int(np.prod(trailing)))
        t = _fold_matrix(*args, True, x.dtype, str(x.device)).matmul(t)
        t = t.reshape(*lead, outs[i], *trailing)
        order = list(range(2 + i)) + [len(lead)] + list(range(2 + i, len(lead))) + \
            list(range(len(lead) + 1, t.dim()))
        t = t.permute(*order)
    if bias is not None:
        t = t + bias.reshape(c_out, *([1] * n))
    return t.squeeze(0) if unbatched else t


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 1-D convolution of [N, C_in, L] (or [C_in, L]) with weight [C_in, C_out / groups, k]:
    L_out = (L - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1."""
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 2-D convolution of [N, C_in, H, W] (or [C_in, H, W]) with weight [C_in, C_out / groups, kH, kW]."""
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 3-D convolution of [N, C_in, D, H, W] with weight [C_in, C_out / groups, kD, kH, kW]."""
    return _conv_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)
