"""histc and bincount written over engine ops (comparisons, masked_select, scatter_add)."""
import math

from . import _C
from ._grad_mode import no_grad

__all__ = ["histc", "bincount"]

_INTEGRAL = (_C.int64, _C.int32, _C.uint8)


def _outer_edges(x, bins, min, max):
    """The histogram's range as torch picks it: [min, max], or the data's range when min == max, widened by one
    on each side when that is still a single point."""
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    low, high = float(min), float(max)
    if low > high:
        raise RuntimeError("torch.histc: max must be larger than min")
    if low == high and x.numel() > 0:
        low, high = float(x.min().item()), float(x.max().item())
    if low == high:
        low, high = low - 1, high + 1
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(f"torch.histc: range of [{low}, {high}] is not finite")
    return low, high


def histc(input, bins=100, min=0, max=0):
    """Counts of input's elements in `bins` equal-width bins over [min, max] (min == max: the data's range).

    Elements outside the range and NaN are not counted; max itself falls in the last bin. The result has
    input's (floating) dtype and, as in torch, no gradient."""
    if not input.is_floating_point():
        raise RuntimeError(f"histc: expected a floating point tensor, got {input.dtype}; convert first, e.g. "
                           "x.float().histc()")
    with no_grad():
        x = input.detach().reshape(-1)
        low, high = _outer_edges(x, bins, min, max)
        left = _C._full((), low, dtype=x.dtype, device=x.device)
        right = _C._full((), high, dtype=x.dtype, device=x.device)
        inside = x.masked_select(x.ge(left).logical_and(x.le(right)))
        position = ((inside - left) * bins / (right - left)).to(_C.int64).clamp_max(bins - 1)
        counts = _C._zeros((bins,), dtype=x.dtype, device=x.device)
        return counts.scatter_add(0, position, _C.ones_like(inside))


def bincount(input, weights=None, minlength=0):
    """How often each value 0, 1, ..., max(input) occurs in the non-negative 1-D integer tensor input, or the
    sum of weights at those positions; the result has at least minlength entries.

    Counts are int64; sums are float32 for float32 weights, float64 for any other weights (torch's rule). An empty
    input gives int64 zeros of length minlength, weights or not, as in torch. The weights get a gradient (torch
    1.13 has none for bincount)."""
    if input.dtype not in _INTEGRAL or input.dim() != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and (weights.dim() != 1 or weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if input.numel() == 0:
        return _C._zeros((minlength,), dtype=_C.int64, device=input.device)
    if int(input.min().item()) < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    length = max(int(input.max().item()) + 1, minlength)
    index = input.to(_C.int64)
    if weights is None:
        counts = _C._zeros((length,), dtype=_C.int64, device=input.device)
        return counts.scatter_add(0, index, _C.ones_like(index))
    dtype = _C.float32 if weights.dtype == _C.float32 else _C.float64
    sums = _C._zeros((length,), dtype=dtype, device=input.device)
    return sums.scatter_add(0, index, weights.to(dtype))

