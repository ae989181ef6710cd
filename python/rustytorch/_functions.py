"""Module-level functions that are compositions or plain Python in torch too."""
from . import _C

__all__ = ["allclose", "isclose", "equal", "is_tensor", "is_floating_point", "numel", "get_default_dtype",
           "set_default_dtype", "is_nonzero", "promote_types", "rsub"]


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    other = other if isinstance(other, _C.Tensor) else _C.tensor(other, dtype=input.dtype)
    a, b = input.double() if input.is_floating_point() else input, other.double() if other.is_floating_point() else other
    close = (a - b).abs() <= (b.abs() * rtol + atol)
    close = close.logical_or(a.eq(b))
    if equal_nan and input.is_floating_point():
        close = close.logical_or(a.isnan().logical_and(b.isnan()))
    return close


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _C.Tensor.all(isclose(input, other, rtol, atol, equal_nan)).item()


def equal(input, other):
    return tuple(input.shape) == tuple(other.shape) and bool(_C.Tensor.all(input.eq(other)).item())


def is_tensor(obj):
    return isinstance(obj, _C.Tensor)


def is_floating_point(input):
    return input.is_floating_point()


def numel(input):
    return input.numel()


def is_nonzero(input):
    if input.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def get_default_dtype():
    return _C.float32


def set_default_dtype(d):
    if d != _C.float32:
        raise NotImplementedError(f"set_default_dtype({d!r}): only float32 is supported as the default dtype; pass "
                                  "dtype= to factories instead")


def promote_types(type1, type2):
    return (_C._zeros((), dtype=type1) + _C._zeros((), dtype=type2)).dtype


def rsub(input, other, *, alpha=1):
    return _C.sub(other, input, alpha=alpha)
