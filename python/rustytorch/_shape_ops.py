"""Reordering, diagonal and grid ops written over engine ops (index_select, narrow, cat, where, ...).

Each function follows torch's semantics; because it is composed of differentiable engine ops, autograd
derives its backward. Results are new tensors where torch would return a view (diagonal, meshgrid keeps
expand's view)."""
from collections.abc import Sequence

from . import _C

__all__ = ["flip", "fliplr", "flipud", "roll", "rot90", "diff", "diagonal", "diag", "diag_embed", "trace",
           "tile", "repeat_interleave", "meshgrid", "cartesian_prod"]


# [SECTION] helpers

def _wrap_dim(dim, ndim):
    """A dim in [-ndim, ndim) as a non-negative index; 0-d tensors accept dims -1 and 0, as in torch."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def _as_tuple(x):
    return tuple(x) if isinstance(x, Sequence) else (x,)


def _reverse_index(n, device):
    return _C.arange(n - 1, -1, -1, dtype=_C.int64, device=device)


# [SECTION] flips and rotations

def flip(input, dims):
    """Reverses the order of elements along each dim in dims (a copy, as in torch)."""
    wrapped = [_wrap_dim(d, input.dim()) for d in _as_tuple(dims)]
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"dims has duplicates: {list(_as_tuple(dims))}")
    out = input.clone()
    if input.dim() == 0:
        return out
    for d in wrapped:
        out = out.index_select(d, _reverse_index(out.shape[d], out.device))
    return out


def fliplr(input):
    """Flips a tensor of at least 2 dims left/right (along dim 1)."""
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    """Flips a tensor of at least 1 dim up/down (along dim 0)."""
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def _roll_one(x, shift, dim):
    n = x.shape[dim]
    if n == 0 or shift % n == 0:
        return x
    s = shift % n
    return _C.cat([x.narrow(dim, n - s, s), x.narrow(dim, 0, n - s)], dim)


def roll(input, shifts, dims=None):
    """Rolls elements along dims by shifts (elements pushed past the end come back at the start).

    With dims=None the tensor is rolled as if flattened, then restored to its shape."""
    shifts = _as_tuple(shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return _roll_one(input.reshape(-1), shifts[0], 0).reshape(input.shape).clone()
    dims = _as_tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    out = input
    for shift, d in zip(shifts, dims):
        out = _roll_one(out, shift, _wrap_dim(d, input.dim()))
    return out.clone() if out is input else out


def rot90(input, k=1, dims=(0, 1)):
    """Rotates by 90 degrees k times in the plane of dims, from dims[0] towards dims[1]."""
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.dim()}")
    d0, d1 = (_wrap_dim(d, input.dim()) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k %= 4
    if k == 1:
        return flip(input, (d1,)).transpose(d0, d1)
    if k == 2:
        return flip(input, (d0, d1))
    if k == 3:
        return flip(input, (d0,)).transpose(d0, d1)
    return input.clone()


# [SECTION] differences

def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along dim (out[i] = x[i+1] - x[i], applied n times; XOR for bool).

    prepend/append are concatenated to input along dim first; each step shortens dim by one."""
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    dim = _wrap_dim(dim, input.dim())
    parts = [t for t in (prepend, input, append) if t is not None]
    x = _C.cat(parts, dim) if len(parts) > 1 else input
    for _ in range(n):
        length = x.shape[dim]
        if length == 0:
            break
        hi, lo = x.narrow(dim, 1, length - 1), x.narrow(dim, 0, length - 1)
        x = hi.logical_xor(lo) if x.dtype == _C.bool else hi - lo
    return x.clone() if x is input else x


# [SECTION] diagonals

def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal of the (dim1, dim2) planes, appended as the last dim.

    offset > 0 takes the diagonal above the main one, offset < 0 the one below."""
    d1, d2 = _wrap_dim(dim1, input.dim()), _wrap_dim(dim2, input.dim())
    if input.dim() < 2:
        raise RuntimeError(f"diagonal expects a tensor of at least 2 dims, but got {input.dim()}")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    x = input.movedim((d1, d2), (-2, -1))
    rows, cols = x.shape[-2], x.shape[-1]
    if offset >= 0:
        skip = min(offset, cols)
        x = x.narrow(-1, skip, cols - skip)
    else:
        skip = min(-offset, rows)
        x = x.narrow(-2, skip, rows - skip)
    length = min(x.shape[-2], x.shape[-1])
    square = x.narrow(-2, 0, length).narrow(-1, 0, length)
    flat = square.reshape(*square.shape[:-2], length * length)
    index = _C.arange(0, length * length, length + 1, dtype=_C.int64, device=input.device)
    return flat.index_select(-1, index)


_diagonal = diagonal  # diag()'s `diagonal` argument shadows the function, as in torch's signature


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Places the last dim of input on the diagonals of (dim1, dim2) planes of a new, zero-filled tensor.

    The planes are square with side input.shape[-1] + |offset|; offset picks the diagonal as in diagonal()."""
    out_dim = input.dim() + 1
    d1, d2 = _wrap_dim(dim1, out_dim), _wrap_dim(dim2, out_dim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = input.shape[-1] if input.dim() > 0 else 1
    x = input.reshape(*input.shape[:-1], n) if input.dim() > 0 else input.reshape(1)
    eye = _C.eye(n, dtype=_C.bool, device=input.device)
    square = _C.where(eye, x.unsqueeze(-1), x.new_zeros(()))
    pad = abs(offset)
    if pad:
        batch = tuple(square.shape[:-2])
        cols = x.new_zeros(*batch, n, pad)
        square = _C.cat([cols, square] if offset > 0 else [square, cols], -1)
        rows = x.new_zeros(*batch, pad, n + pad)
        square = _C.cat([square, rows] if offset > 0 else [rows, square], -2)
    return square.movedim((-2, -1), (d1, d2))


def diag(input, diagonal=0):
    """1-D input: a square matrix with input on the given diagonal. 2-D input: that diagonal as a 1-D tensor."""
    if input.dim() == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.dim() == 2:
        return _diagonal(input, diagonal, 0, 1)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.dim()}D")


def trace(input):
    """The sum of the main diagonal of a 2-D tensor."""
    if input.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.dim()}")
    return diagonal(input).sum()


# [SECTION] repetition and grids

def tile(input, dims):
    """Repeats input dims[i] times along each dim; a shorter dims is padded with leading 1s."""
    dims = tuple(_as_tuple(dims))
    if len(dims) < input.dim():
        dims = (1,) * (input.dim() - len(dims)) + dims
    return input.repeat(*dims)


def _repeat_counts(repeats, size):
    if isinstance(repeats, _C.Tensor):
        if repeats.dim() > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if repeats.is_floating_point() or repeats.dtype == _C.bool:
            raise RuntimeError("repeats has to be Long or Int tensor")
        counts = [int(r) for r in repeats.reshape(-1).tolist()]
        if len(counts) == 1:
            counts = counts * size
    else:
        counts = [int(repeats)] * size
    if len(counts) != size:
        raise RuntimeError("repeats must have the same size as input along dim")
    if any(c < 0 for c in counts):
        raise RuntimeError("repeats can not be negative")
    return counts


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeats each element (or slice along dim) repeats times, keeping repeats of one element adjacent.

    repeats is an int or a tensor with one count per element along dim; dim=None flattens input first.
    repeat_interleave(counts) alone returns each index i repeated counts[i] times."""
    if repeats is None:
        counts = _repeat_counts(input, input.numel())
        return _C.tensor([i for i, c in enumerate(counts) for _ in range(c)], dtype=_C.int64,
                         device=input.device)
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else _wrap_dim(dim, x.dim())
    if x.dim() == 0:
        x = x.reshape(1)
    counts = _repeat_counts(repeats, x.shape[d])
    index = _C.tensor([i for i, c in enumerate(counts) for _ in range(c)], dtype=_C.int64, device=x.device)
    if output_size is not None and output_size != index.numel():
        raise RuntimeError(f"allocated size does not match required size: {output_size} vs {index.numel()}")
    return x.index_select(d, index)


def _tensor_list(tensors, name):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"{name}: Expected 0D or 1D tensor in the tensor list but got: {t.dim()}D")
    if any(t.dtype != tensors[0].dtype for t in tensors):
        raise RuntimeError(f"{name} expects all tensors to have the same dtype")
    return tensors


def meshgrid(*tensors, indexing="ij"):
    """Coordinate grids from 0-D/1-D tensors: output i varies along dim i ("ij") and has one dim per input.

    indexing="xy" swaps the roles of the first two inputs (Cartesian, as numpy.meshgrid's default)."""
    if indexing not in ("ij", "xy"):
        raise ValueError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    tensors = _tensor_list(tensors, "meshgrid")
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    order = list(tensors)
    swap = indexing == "xy" and len(order) >= 2
    if swap:
        order[0], order[1] = order[1], order[0]
    shape = [t.numel() for t in order]
    grids = []
    for i, t in enumerate(order):
        view = [1] * len(order)
        view[i] = -1
        grids.append(t.reshape(*view).expand(*shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def cartesian_prod(*tensors):
    """All combinations of the elements of 1-D tensors, one per row (itertools.product order)."""
    tensors = _tensor_list(tensors, "cartesian_prod")
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    return _C.stack([g.reshape(-1) for g in meshgrid(*tensors, indexing="ij")], 1)
