"""Index and mask writes, copies and windows written over engine ops (index_select, scatter_add, nonzero, where):
narrow_copy, index_fill, index_copy, masked_scatter, and Tensor.unfold.

The out-of-place forms build the result with where(), so autograd derives the backward: the positions written
get no gradient from the result, the written values get theirs. The in-place forms (index_fill_, ...) copy_
that result into self; copy_ brings autograd's in-place checks (a leaf that requires grad, a view in a graph)."""
from . import _C
from ._shape_ops import _wrap_dim

__all__ = ["narrow_copy", "index_fill", "index_copy", "masked_scatter"]


# [SECTION] helpers

def _check_index(index, size, op, allow_negative):
    """index as a 1-D int64 tensor with negative entries wrapped (where allowed); out of range is IndexError."""
    if not isinstance(index, _C.Tensor):
        raise TypeError(f"{op}(): index must be a Tensor, got {type(index).__name__}")
    if index.dtype != _C.int64:
        raise IndexError(f"{op}(): Expected dtype int64 for index, got {index.dtype}")
    if index.dim() > 1:
        raise IndexError(f"{op}(): Index has to be a vector/scalar, got a {index.dim()}-D index")
    index = index.reshape(-1)
    if index.numel() == 0:
        return index
    low, high = int(index.min().item()), int(index.max().item())
    lowest = -size if allow_negative else 0
    for bad in (low, high):
        if not lowest <= bad < size:
            raise IndexError(f"{op}(): index {bad} is out of bounds for dimension with size {size}")
    return _C.where(index.lt(0), index + size, index) if low < 0 else index


def _along(t, dim, ndim):
    """A 1-D tensor over dim reshaped to broadcast against a tensor of ndim dims."""
    shape = [1] * ndim
    shape[dim] = t.shape[0]
    return t.reshape(*shape)


def _as_1d(input):
    return input.reshape(1) if input.dim() == 0 else input


def _hits(index, size, device):
    """How many times each position 0..size-1 occurs in index (int64)."""
    counts = _C._zeros((size,), dtype=_C.int64, device=device)
    return counts.scatter_add(0, index, _C.ones_like(index))


# [SECTION] narrow_copy

def narrow_copy(input, dim, start, length):
    """narrow() as a new tensor instead of a view; a negative start counts from the end."""
    dim = _wrap_dim(dim, input.dim())
    if start < 0:
        start += input.shape[dim]
    return input.narrow(dim, start, length).clone()


# [SECTION] index_fill and index_copy

def index_fill(input, dim, index, value):
    """A copy of input with the slices at index along dim set to value (a number or a 0-d tensor, cast to
    input's dtype; a tensor value gets the sum of those slices' gradients). Negative indices count from the end."""
    x = _as_1d(input)
    dim = _wrap_dim(dim, input.dim())
    index = _check_index(index, x.shape[dim], "index_fill_", allow_negative=True)
    if isinstance(value, _C.Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.dim()} dimension(s).")
        value = value.to(x.dtype)
    else:
        value = _C._full((), value, dtype=x.dtype, device=x.device)
    mask = _hits(index, x.shape[dim], x.device).gt(0)
    return _C.where(_along(mask, dim, x.dim()), value, x).reshape(input.shape)


def _last_occurrence(index, size):
    """The position in index that writes each slot 0..size-1 (the last one when index repeats) and whether
    any does."""
    counts = _hits(index, size, index.device)
    positions = _C.arange(index.numel(), dtype=_C.int64, device=index.device)
    if index.numel() > 1 and int(counts.max().item()) > 1:  # keep each repeated index's last entry
        ordered, order = _C.sort(index, stable=True)
        last = _C.cat([ordered[1:].ne(ordered[:-1]), _C._full((1,), True, dtype=_C.bool, device=index.device)])
        index, positions = ordered.masked_select(last), order.masked_select(last)
    slot = _C._zeros((size,), dtype=_C.int64, device=index.device).scatter_add(0, index, positions)
    return slot, counts.gt(0)


def index_copy(input, dim, index, source):
    """A copy of input with slice index[i] along dim replaced by slice i of source.

    source has input's shape except along dim, where it has len(index) entries. Indices must be in
    [0, size). When one repeats (torch leaves the outcome undefined), the last of its slices is copied and only
    that one gets a gradient; finding it sorts the index, which the engine does on the CPU only."""
    x, src = _as_1d(input), _as_1d(source)
    dim = _wrap_dim(dim, input.dim())
    index = _check_index(index, x.shape[dim], "index_copy_", allow_negative=False)
    if src.dim() != x.dim():
        raise RuntimeError(f"index_copy_(): When source and destination are not scalars, their dimensionality "
                           f"must match. Source dimensionality ({source.dim()}), destination dimensionality "
                           f"({input.dim()})")
    for d in range(x.dim()):
        if d != dim and src.shape[d] != x.shape[d]:
            raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice shapes. Destination "
                               f"slice shape: {x.shape[d]} at dimension {d} and source slice shape: {src.shape[d]} "
                               f"at dimension {d}.")
    if src.shape[dim] != index.numel():
        raise RuntimeError(f"index_copy_(): Number of indices ({index.numel()}) should be equal to "
                           f"source.size(dim) ({src.shape[dim]})")
    if src.dtype != x.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{x.dtype} and (source) {src.dtype}")
    slot, written = _last_occurrence(index, x.shape[dim])
    # Slots nothing writes read an appended zero slice, so that source stays in the graph (with zero gradients)
    # even when nothing is copied.
    padded = _C.cat([src, src.new_zeros(*src.shape[:dim], 1, *src.shape[dim + 1:])], dim)
    rows = padded.index_select(dim, _C.where(written, slot, slot.new_full((), index.numel())))
    return _C.where(_along(written, dim, x.dim()), rows, x).reshape(input.shape)


# [SECTION] masked_scatter

def _check_mask(mask, op):
    if mask.dtype == _C.uint8:
        return mask.ne(0)
    if mask.dtype != _C.bool:
        raise RuntimeError(f"{op}: only supports boolean masks, but got mask with dtype {mask.dtype}")
    return mask


def masked_scatter(input, mask, source):
    """A copy of input where the positions mask selects (broadcast with input) take source's elements in order:
    the k-th True position, counting in row-major order, gets source.flatten()[k]. source needs at least as many
    elements as mask has True values; the rest are unused (and get no gradient)."""
    mask = _check_mask(mask, "masked_scatter_")
    if source.dtype != input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got {input.dtype} "
                           f"and {source.dtype}")
    shape = tuple(_C.broadcast_shapes(tuple(input.shape), tuple(mask.shape)))
    x, m = input.expand(*shape).reshape(-1), mask.expand(*shape).reshape(-1)
    selected = m.nonzero().reshape(-1)
    needed = selected.numel()
    if needed > source.numel():
        raise RuntimeError(f"masked_scatter: Number of elements of source ({source.numel()}) < number of ones in "
                           f"mask ({needed})")
    # The k-th selected position reads source element k; the others read an appended zero, so that source stays
    # in the graph (with zero gradients) even when the mask selects nothing.
    flat = source.reshape(-1)
    padded = _C.cat([flat, flat.new_zeros(1)])
    pad = flat.numel()
    to_source = _C.arange(needed, dtype=_C.int64, device=m.device) - pad
    slot = _C._full((m.numel(),), pad, dtype=_C.int64, device=m.device).scatter_add(0, selected, to_source)
    return _C.where(m, padded.index_select(0, slot), x).reshape(*shape)


def masked_scatter_(self, mask, source):
    """In-place masked_scatter: mask must broadcast to self's shape."""
    shape = tuple(_C.broadcast_shapes(tuple(self.shape), tuple(mask.shape)))
    if shape != tuple(self.shape):
        raise RuntimeError(f"masked_scatter_: the mask of shape {list(mask.shape)} does not broadcast to self's "
                           f"shape {list(self.shape)}")
    return self.copy_(masked_scatter(self, mask, source))


def index_fill_(self, dim, index, value):
    """In-place index_fill."""
    return self.copy_(index_fill(self, dim, index, value))


def index_copy_(self, dim, index, source):
    """In-place index_copy."""
    return self.copy_(index_copy(self, dim, index, source))


# [SECTION] unfold (a Tensor method only, as in torch)

def unfold(self, dimension, size, step):
    """All windows of `size` elements along dimension, `step` apart, as a new last dim of length size;
    dimension shrinks to the number of windows, (length - size) // step + 1. A copy (torch returns a view)."""
    x = _as_1d(self)
    dim = _wrap_dim(dimension, self.dim())
    length = x.shape[dim]
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {length} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    count = (length - size) // step + 1
    starts = _C.arange(0, count * step, step, dtype=_C.int64, device=x.device)
    index = (starts.unsqueeze(1) + _C.arange(size, dtype=_C.int64, device=x.device).unsqueeze(0)).reshape(-1)
    windows = x.index_select(dim, index)
    windows = windows.reshape(*x.shape[:dim], count, size, *x.shape[dim + 1:])
    out = windows.movedim(dim + 1, -1)
    return out.reshape(size) if self.dim() == 0 else out
