"""Products and pointwise functions written over engine ops (mul, matmul, cat, where, log1p, ...).

Each follows torch's semantics; autograd derives the backward from the engine ops they are made of."""
from collections.abc import Sequence

from . import _C
from ._shape_ops import _wrap_dim

__all__ = ["outer", "ger", "kron", "tensordot", "cross", "logaddexp", "hypot"]


def outer(input, vec2):
    """The outer product of two 1-D tensors: out[i, j] = input[i] * vec2[j]."""
    for name, t in (("self", input), ("vec2", vec2)):
        if t.dim() != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.dim()}-D")
    return input.unsqueeze(1) * vec2.unsqueeze(0)


def ger(input, vec2):
    """Alias of outer (torch's older name)."""
    return outer(input, vec2)


def kron(input, other):
    """The Kronecker product: blocks other * input[i...] laid out on input's grid.

    The shorter shape is padded with leading 1s; out.shape[k] = input.shape[k] * other.shape[k]."""
    ndim = max(input.dim(), other.dim())
    a_shape = (1,) * (ndim - input.dim()) + tuple(input.shape)
    b_shape = (1,) * (ndim - other.dim()) + tuple(other.shape)
    a_view, b_view = [], []
    for a, b in zip(a_shape, b_shape):
        a_view += [a, 1]
        b_view += [1, b]
    product = input.reshape(*a_view) * other.reshape(*b_view)
    return product.reshape(*(a * b for a, b in zip(a_shape, b_shape)))


def _contraction_dims(a, b, dims):
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(a.dim() - dims, a.dim())), list(range(dims))
    if isinstance(dims, _C.Tensor):
        dims = dims.tolist()
    if not (isinstance(dims, Sequence) and len(dims) == 2):
        raise RuntimeError("tensordot expects dims to be an int or a pair of dim lists")
    dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    return [_wrap_dim(d, a.dim()) for d in dims_a], [_wrap_dim(d, b.dim()) for d in dims_b]


def _prod(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


def tensordot(a, b, dims=2):
    """Sums the products of a and b over the contracted dims: dims=n pairs a's last n dims with b's first n;
    dims=(dims_a, dims_b) pairs the listed dims. The result has a's free dims then b's."""
    dims_a, dims_b = _contraction_dims(a, b, dims)
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[da]} in dim "
                               f"{da} and second has size {b.shape[db]} in dim {db}")
    free_a = [d for d in range(a.dim()) if d not in dims_a]
    free_b = [d for d in range(b.dim()) if d not in dims_b]
    inner = _prod(a.shape[d] for d in dims_a)
    a2 = a.permute(*free_a, *dims_a).reshape(_prod(a.shape[d] for d in free_a), inner)
    b2 = b.permute(*dims_b, *free_b).reshape(inner, _prod(b.shape[d] for d in free_b))
    return _C.matmul(a2, b2).reshape(*(a.shape[d] for d in free_a), *(b.shape[d] for d in free_b))


def _default_cross_dim(shape):
    for d, size in enumerate(shape):
        if size == 3:
            return d
    raise RuntimeError("no dimension of size 3 in input")


def cross(input, other, dim=None):
    """The 3-vector cross product along dim. The inputs must have the same number of dims and broadcast
    against each other; dim=None takes the first dim of size 3, as torch.cross does (linalg.cross uses -1)."""
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    shape = tuple(_C.broadcast_shapes(tuple(input.shape), tuple(other.shape)))
    a, b = input.expand(*shape), other.expand(*shape)
    d = _default_cross_dim(shape) if dim is None else _wrap_dim(dim, len(shape))
    if shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {d} must have length 3. Got {input.shape[d]} and "
                           f"{other.shape[d]}")
    a1, a2, a3 = (a.narrow(d, i, 1) for i in range(3))
    b1, b2, b3 = (b.narrow(d, i, 1) for i in range(3))
    return _C.cat([a2 * b3 - a3 * b2, a3 * b1 - a1 * b3, a1 * b2 - a2 * b1], d)


def _require_floating(name, *tensors):
    for t in tensors:
        if isinstance(t, _C.Tensor) and not t.is_floating_point():
            raise RuntimeError(f"{name}: expected floating point tensors, but got {t.dtype}")


def _as_tensor_pair(input, other):
    if not isinstance(other, _C.Tensor):
        other = _C.tensor(other, dtype=input.dtype, device=input.device)
    return input, other


def logaddexp(input, other):
    """log(exp(input) + exp(other)) without overflow: max + log1p(exp(-|input - other|)).

    Equal infinities give that infinity (the difference would be NaN)."""
    _require_floating("logaddexp", input, other)
    input, other = _as_tensor_pair(input, other)
    larger = _C.maximum(input, other)
    stable = larger + (-(input - other).abs()).exp().log1p()
    same_inf = input.isinf().logical_and(input.eq(other))
    return _C.where(same_inf, larger, stable)


def hypot(input, other):
    """sqrt(input**2 + other**2), elementwise with broadcasting.

    Computed as written, in the inputs' dtype: where a square exceeds the dtype's range the result is inf
    (torch rescales and stays finite there)."""
    _require_floating("hypot", input, other)
    input, other = _as_tensor_pair(input, other)
    return (input * input + other * other).sqrt()
