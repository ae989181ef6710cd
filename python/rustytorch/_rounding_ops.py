"""Rounding written over engine ops: trunc is div(x, 1, rounding_mode="trunc"); floor, ceil and round
(half to even) step from it; frac is x - trunc(x).

Their gradients are torch's: zero for round/trunc/fix/floor/ceil, one for frac. Integer tensors round to
themselves (round with decimals and frac refuse them, as torch 1.13 does)."""
from . import _C

__all__ = ["round", "trunc", "fix", "floor", "ceil", "frac", "round_", "trunc_", "fix_", "floor_", "ceil_", "frac_"]


def _is_integral(x):
    return not x.is_floating_point()


def _trunc(x):
    # div's "trunc" mode keeps infinities, NaN and the sign of zero, and has a zero gradient.
    return _C.div(x, 1, rounding_mode="trunc")


def _round_half_even(x):
    t = _trunc(x)
    floor = t - (t > x).to(x.dtype)
    rest = x - floor  # in [0, 1) and exact for finite x; NaN for infinities, so they stay as they are
    odd = _C.fmod(floor, 2).ne(0)
    up = rest.gt(0.5).logical_or(rest.eq(0.5).logical_and(odd))
    rounded = floor + up.to(x.dtype)
    return _C.where(rounded.eq(0), x * 0, rounded)  # x * 0 keeps the sign: round(-0.3) is -0.0, as in torch


def round(input, *, decimals=0):
    """Rounds to the nearest integer, halves to the even one (round(2.5) is 2.0); with decimals, to that many
    decimal places (negative: to tens, hundreds, ...), computed as torch does, in the input's dtype:
    round(x * 10**decimals) / 10**decimals."""
    if _is_integral(input):
        if decimals != 0:
            raise RuntimeError(f"round(decimals={decimals}) is not implemented for integer tensors "
                               f"({input.dtype}), as in torch; convert to a floating dtype first")
        return input.clone()
    if decimals == 0:
        return _round_half_even(input)
    if decimals > 0:
        scale = 10.0 ** decimals
        return _round_half_even(input * scale) / scale
    scale = 10.0 ** -decimals
    return _round_half_even(input / scale) * scale


def trunc(input):
    """Rounds towards zero (trunc(-1.7) is -1.0); integer tensors are returned as a copy."""
    return input.clone() if _is_integral(input) else _trunc(input)


def fix(input):
    """Alias of trunc."""
    return trunc(input)


def floor(input):
    """Rounds down (floor(-1.2) is -2.0); infinities, NaN and signed zeros are kept."""
    if _is_integral(input):
        return input.clone()
    t = _trunc(input)
    return _C.where(t > input, t - 1, t)


def ceil(input):
    """Rounds up (ceil(-1.7) is -1.0, ceil(-0.5) is -0.0); infinities and NaN are kept."""
    if _is_integral(input):
        return input.clone()
    t = _trunc(input)
    return _C.where(t < input, t + 1, t)


def frac(input):
    """The fractional part, input - trunc(input), with input's sign (frac(-1.5) is -0.5)."""
    if _is_integral(input):
        raise RuntimeError(f"frac is only defined for floating point tensors, got {input.dtype}; convert first, "
                           "e.g. x.double().frac()")
    return input - _trunc(input)


def _in_place(fn, name):
    def method(self, *args, **kwargs):
        return self.copy_(fn(self, *args, **kwargs))
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place {fn.__name__} (self.copy_ of the result; autograd as for copy_)."
    return method


round_ = _in_place(round, "round_")
trunc_ = _in_place(trunc, "trunc_")
fix_ = _in_place(fix, "fix_")
floor_ = _in_place(floor, "floor_")
ceil_ = _in_place(ceil, "ceil_")
frac_ = _in_place(frac, "frac_")
