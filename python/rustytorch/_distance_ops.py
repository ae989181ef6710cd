"""cdist written over engine ops: the matmul expansion ||a||^2 + ||b||^2 - 2 a.b for p=2 on large inputs (as
torch's compute_mode does), and the elementwise difference reduced with the p-norm otherwise.

Autograd derives the backward from those ops; where two points coincide the gradient is zero, as in torch."""
import math

from . import _C

__all__ = ["cdist"]

_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


def _check(x1, x2, p, compute_mode):
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.dim()}D")
        if not x.is_floating_point():
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {x.dtype}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"cdist: X1 and X2 must have the same dtype, got {x1.dtype} and {x2.dtype}")
    if not p >= 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    if compute_mode not in _MODES and compute_mode is not None:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode; expected one of {', '.join(_MODES)}")


def _euclidean_by_matmul(x1, x2):
    """sqrt(||a||^2 + ||b||^2 - 2 a.b), negative squares (rounding, for coincident points) taken as zero; a zero
    distance gets a zero gradient, as torch's _euclidean_dist gives (sqrt's would be infinite)."""
    sq1 = (x1 * x1).sum(-1, keepdim=True)
    sq2 = (x2 * x2).sum(-1, keepdim=True)
    squared = sq1 + sq2.transpose(-2, -1) - 2 * _C.matmul(x1, x2.transpose(-2, -1))
    return _sqrt_or_zero(squared)


def _sqrt_or_zero(squared):
    """sqrt where squared > 0, else 0 with a zero gradient."""
    zero = squared.le(0)
    return _C.where(zero, squared.new_zeros(()), _C.where(zero, squared.new_ones(()), squared).sqrt())


def _max_with_tied_gradients(size):
    """size.amax(-1) whose gradient goes in full to every element equal to the maximum (torch's cdist backward
    for p=inf; amax would share it between them): the tied elements summed, less the maximum (no gradient)
    counted once per extra tie."""
    largest = size.detach().amax(-1, keepdim=True)
    ties = size.eq(largest)
    extra = ties.sum(-1).to(size.dtype) - 1
    return (size * ties.to(size.dtype)).sum(-1) - extra * largest.squeeze(-1)


def _p_norm(diff, p):
    """The p-norm over the last dim of diff, with zero gradients where diff (or the whole norm) is zero, where
    |d|^p and s^(1/p) have infinite derivatives."""
    if p == 0:
        return diff.ne(0).sum(-1).to(diff.dtype)
    size = diff.abs()
    if p == 1:
        return size.sum(-1)
    if math.isinf(p):
        return _max_with_tied_gradients(size)
    zero = size.eq(0)
    powered = _C.where(zero, size.new_zeros(()), _C.where(zero, size.new_ones(()), size).pow(p))
    total = powered.sum(-1)
    empty = total.eq(0)
    return _C.where(empty, total.new_zeros(()), _C.where(empty, total.new_ones(()), total).pow(1.0 / p))


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distance between each row of x1 [..., P, M] and each row of x2 [..., R, M]: [..., P, R].

    The leading (batch) dims broadcast. For p=2 the matmul expansion is used when compute_mode asks for it,
    or by default when P or R is over 25 (torch's rule); it is faster and slightly less exact. p=0 counts the
    differing coordinates, p=inf takes the largest difference."""
    _check(x1, x2, p, compute_mode)
    batch = tuple(_C.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2])))
    a = x1.expand(*batch, *x1.shape[-2:])
    b = x2.expand(*batch, *x2.shape[-2:])
    rows, cols = a.shape[-2], b.shape[-2]
    if rows == 0 or cols == 0 or a.shape[-1] == 0:
        # No pairs, or points with no coordinates (all at distance 0): the product is that all-zero (or empty)
        # result and keeps it in the graph, as torch's is.
        return _C.matmul(a, b.transpose(-2, -1))
    use_mm = p == 2 and (compute_mode == "use_mm_for_euclid_dist"
                         or (compute_mode in (None, _MODES[0]) and (rows > 25 or cols > 25)))
    if use_mm:
        return _euclidean_by_matmul(a, b)
    return _p_norm(a.unsqueeze(-2) - b.unsqueeze(-3), p)
