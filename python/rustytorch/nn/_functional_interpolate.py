"""F.interpolate (and the deprecated F.upsample, F.upsample_nearest, F.upsample_bilinear), composed from
engine ops so autograd gives the backward. rt.nn.functional re-exports them.

    F.interpolate(x, scale_factor=2)                                   # nearest, [N, C, H, W] -> [N, C, 2H, 2W]
    F.interpolate(x, size=(17, 31), mode="bilinear", align_corners=True)
    F.interpolate(x, scale_factor=0.5, mode="area")                    # adaptive average pooling
    F.interpolate(seq, size=40, mode="linear")                         # [N, C, L]

Modes: nearest and nearest-exact (3-D, 4-D, 5-D), area (3-D, 4-D, 5-D), linear (3-D), bilinear (4-D),
bicubic (4-D; torch's cubic convolution with A = -0.75, taps clamped at the borders), trilinear (5-D).
Every mode is separable, so the output is built one spatial axis at a time, last axis first: each output
position reads k input positions along the axis (1 for nearest, 2 for linear, 4 for cubic, the pooling
window for area) through one index_select and sums them with per-position weights. The indices and weights
follow torch's source-coordinate rules (align_corners, scale_factor given or recomputed), including the
float32 index arithmetic of the nearest modes, so results match torch's bit for bit in the nearest modes
and to rounding elsewhere. (torch 1.13's nearest backward, and its forward on channels-last inputs such as
those with one channel, ignore a given scale_factor when out == in or out == 2 * in; rt always follows the
scale, as torch's forward does on contiguous inputs, and its gradient is the adjoint of its forward.)
antialias=True is not implemented and is refused.
"""
import math
import numbers
import struct
import warnings

from .. import _C

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]

_MODES = ("nearest", "nearest-exact", "area", "linear", "bilinear", "bicubic", "trilinear")
_LINEAR_DIMS = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}
_CUBIC_A = -0.75


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    if mode not in _MODES:
        raise NotImplementedError(f"interpolate: unknown mode {mode!r}; use one of "
                                  + ", ".join(repr(m) for m in _MODES))
    if mode in ("nearest", "nearest-exact", "area"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if input.dim() not in (3, 4, 5):
        raise NotImplementedError(f"interpolate: only 3-D, 4-D and 5-D inputs [N, C, *spatial] are supported "
                                  f"(got {input.dim()}-D) for mode {mode!r}")
    want = _LINEAR_DIMS.get(mode)
    if want is not None and input.dim() != want:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {want}D input")
    if antialias:
        raise NotImplementedError("interpolate(antialias=True) is not supported by rustytorch; low-pass the "
                                  "input first (e.g. F.avg_pool2d) or use mode='area' to downsample")
    if mode != "nearest" and not input.is_floating_point():
        raise TypeError(f"interpolate(mode={mode!r}) needs a floating-point input, got {input.dtype}; "
                        "convert it with .float()")
    in_sizes = list(input.shape[2:])
    out_sizes, scales = _output_sizes(input, size, scale_factor, recompute_scale_factor, mode)
    out = input
    for axis in reversed(range(len(in_sizes))):  # last axis first, as torch nests its weights
        n_in, n_out, scale = in_sizes[axis], out_sizes[axis], scales[axis]
        if mode == "nearest" and n_out == n_in and scale is None:
            continue  # index i reads i
        index, weight = _taps(mode, n_in, n_out, scale, align_corners, input.device)
        out = _apply_taps(out, axis + 2, index, weight)
    return out if out is not input else input.clone()


def _output_sizes(input, size, scale_factor, recompute_scale_factor, mode):
    """The output's spatial sizes and, per axis, the scale factor torch's kernels see (None: from sizes)."""
    dims = input.dim() - 2
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("interpolate: only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("interpolate: either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if size is not None:
        sizes = list(size) if isinstance(size, (list, tuple)) else [size] * dims
        if len(sizes) != dims:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {spatial} and output size of {size}. Please provide "
                             "input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                             "format.")
        out_sizes, scales = [int(s) for s in sizes], [None] * dims
    else:
        factors = list(scale_factor) if isinstance(scale_factor, (list, tuple)) else [scale_factor] * dims
        if len(factors) != dims:
            raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got "
                             f"input with spatial dimensions of {spatial} and scale_factor of shape "
                             f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                             "scale_factor in (s1, s2, ...,sK) format.")
        for f in factors:
            if not isinstance(f, numbers.Real):
                raise TypeError(f"interpolate: scale_factor entries must be numbers, got {f!r}")
        factors = [float(f) for f in factors]
        out_sizes = [int(math.floor(n * f)) for n, f in zip(spatial, factors)]
        recompute = recompute_scale_factor or mode == "area"
        scales = [None] * dims if recompute else factors
    if any(o <= 0 for o in out_sizes) or any(n <= 0 for n in spatial):
        raise ValueError(f"interpolate: input and output sizes should be greater than 0, but got input "
                         f"{spatial} and output {out_sizes}")
    return out_sizes, scales


def _f32(x):
    """x rounded to float32, as torch's float index arithmetic rounds it."""
    return struct.unpack("f", struct.pack("f", x))[0]


def _inverse_scale(n_in, n_out, scale):
    """torch's compute_scales_value: 1 / scale_factor when one was given, else in / out."""
    return 1.0 / scale if scale is not None and scale > 0 else n_in / n_out


def _taps(mode, n_in, n_out, scale, align_corners, device):
    """(index [n_out, k] int64, weight [n_out, k] float64 or None) for one axis."""
    f64 = _C.float64
    dst = _C.arange(n_out, dtype=f64, device=device)
    if mode in ("nearest", "nearest-exact"):
        inv = _f32(_f32(n_in / n_out) if scale is None or scale <= 0 else 1.0 / scale)
        pos = dst + 0.5 if mode == "nearest-exact" else dst
        # A float32 product of float32 operands is the float64 product rounded to float32.
        index = (pos * inv).float().floor().long().clamp_max(n_in - 1)
        return index.unsqueeze(1), None
    if mode == "area":
        i = _C.arange(n_out, dtype=_C.int64, device=device)
        start = (i * n_in) // n_out
        end = ((i + 1) * n_in + n_out - 1) // n_out
        length = end - start
        k = int(length.max().item())
        offs = _C.arange(k, dtype=_C.int64, device=device)
        index = (start.unsqueeze(1) + offs).clamp_max(n_in - 1)
        weight = (offs < length.unsqueeze(1)).double() / length.unsqueeze(1).double()
        return index, weight
    if align_corners:
        ratio = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        src = dst * ratio
    else:
        src = (dst + 0.5) * _inverse_scale(n_in, n_out, scale) - 0.5
    if mode == "bicubic":
        base = src.floor()
        t = (src - base).unsqueeze(1)
        offs = _C.arange(-1, 3, dtype=_C.int64, device=device)
        index = (base.long().unsqueeze(1) + offs).clamp(0, n_in - 1)
        a = _CUBIC_A
        near = lambda x: ((a + 2) * x - (a + 3)) * x * x + 1  # noqa: E731 -- |x| <= 1
        far = lambda x: ((a * x - 5 * a) * x + 8 * a) * x - 4 * a  # noqa: E731 -- 1 < |x| < 2
        weight = _C.cat([far(t + 1), near(t), near(1 - t), far(2 - t)], 1)
        return index, weight
    src = src.clamp_min(0.0)
    lo = src.floor().long().clamp_max(n_in - 1)
    hi = (lo + 1).clamp_max(n_in - 1)
    frac = (src - lo.double()).unsqueeze(1)
    return _C.stack([lo, hi], 1), _C.cat([1 - frac, frac], 1)


def _apply_taps(x, dim, index, weight):
    """out[..., j, ...] = sum_k weight[j, k] * x[..., index[j, k], ...] along dim."""
    n_out, k = index.shape
    picked = x.index_select(dim, index.reshape(-1))
    if weight is None:
        return picked
    picked = picked.unflatten(dim, (n_out, k))
    shape = [1] * picked.dim()
    shape[dim], shape[dim + 1] = n_out, k
    return (picked * weight.to(x.dtype).reshape(shape)).sum(dim + 1)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of interpolate, kept for old code."""
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: interpolate(..., mode='nearest')."""
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: interpolate(..., mode='bilinear', align_corners=True)."""
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
