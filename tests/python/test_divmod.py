"""%, //, remainder, fmod, floor_divide and div(rounding_mode=...) against PyTorch 1.13: values bit
for bit over every dtype (signs, zeros, infinities, NaN), dtype promotion, numbers on either
side, broadcasting, views, in-place forms, errors, and gradients."""
import numpy as np
import pytest

import rustytorch as rt

torch = pytest.importorskip("torch")

HALF = ("float16", "bfloat16")
FLOATS = ("float32", "float64") + HALF
INTS = ("int64", "int32", "uint8")

OPS = {
    "remainder": lambda m, a, b: m.remainder(a, b),
    "fmod": lambda m, a, b: m.fmod(a, b),
    "floor_divide": lambda m, a, b: m.floor_divide(a, b),
    "div_trunc": lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda m, a, b: m.div(a, b, rounding_mode="floor"),
    "mod_operator": lambda m, a, b: a % b,
    "floordiv_operator": lambda m, a, b: a // b,
}


def pair(array, dtype):
    """The same values as an rt and a torch tensor of `dtype` (half types rounded once, by torch)."""
    t = torch.tensor(array).to(getattr(torch, dtype))
    r = rt.tensor(t.double().numpy() if dtype in HALF else t.numpy()).to(getattr(rt, dtype))
    return r, t


def as_float64(t):
    return t.detach().to(torch.float64 if isinstance(t, torch.Tensor) else rt.float64).numpy()


def assert_same(r, t, what=""):
    """Same dtype, shape and values; -0.0 differs from 0.0 and NaN matches NaN."""
    assert str(r.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], f"{what}: dtype {r.dtype} != {t.dtype}"
    a, e = as_float64(r), as_float64(t)
    assert a.shape == e.shape, f"{what}: shape {a.shape} != {e.shape}"
    same = (a == e) & (np.signbit(a) == np.signbit(e)) | (np.isnan(a) & np.isnan(e))
    bad = np.argwhere(~same)
    if len(bad):
        first = tuple(bad[0])
        raise AssertionError(f"{what}: {len(bad)} mismatches, first at {first}: {a[first]} != {e[first]}")


def operands(dtype, n, seed):
    rng = np.random.default_rng(seed)
    if dtype in INTS:
        lo = 0 if dtype == "uint8" else -300
        a = rng.integers(lo, 256 if dtype == "uint8" else 300, n)
        b = rng.integers(1, 20, n) * (1 if dtype == "uint8" else rng.choice([-1, 1], n))
        return a.astype(dtype), b.astype(dtype)
    a = rng.standard_normal(n) * 10.0 ** rng.integers(-2, 5 if dtype in HALF else 8, n)
    b = rng.standard_normal(n) * 10.0 ** rng.integers(-2, 3, n)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 5.0])
    a[:64] = np.repeat(specials, 8)
    b[:64] = np.tile(specials, 8)  # every special against every special
    return a, b


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("op", OPS)
def test_values_match_torch(op, dtype):
    # 4096 elements: torch's vectorised CPU loop handles them all (its scalar tail rounds half
    # types differently, see rt/ops/elementwise.h).
    a, b = operands(dtype, 4096, seed=len(op) * 7 + len(dtype))
    (ra, ta), (rb, tb) = pair(a, dtype), pair(b, dtype)
    with np.errstate(all="ignore"):
        assert_same(OPS[op](rt, ra, rb), OPS[op](torch, ta, tb), f"{op} {dtype}")


def test_labels_from_arange():
    labels = rt.arange(10) % 3
    assert labels.dtype == rt.int64
    assert labels.tolist() == [0, 1, 2, 0, 1, 2, 0, 1, 2, 0]
    assert (rt.arange(10) // 3).tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3]


NUMBERS = [3, -3, 2.5, -0.75, True]


@pytest.mark.parametrize("dtype", ("float32", "float16", "int64", "int32", "uint8"))
@pytest.mark.parametrize("number", NUMBERS, ids=repr)
def test_python_numbers_on_either_side(dtype, number):
    rng = np.random.default_rng(3)
    if dtype in INTS:  # nonzero: they are divisors in the reflected forms
        a = rng.integers(1, 200, 64) * (1 if dtype == "uint8" else rng.choice([-1, 1], 64))
    else:
        a = rng.uniform(-40, 40, 64)
    r, t = pair(a, dtype)
    assert_same(r % number, t % number, f"tensor % {number!r}")
    assert_same(r // number, t // number, f"tensor // {number!r}")
    assert_same(r.remainder(number), t.remainder(number), f"remainder(tensor, {number!r})")
    assert_same(rt.fmod(r, number), torch.fmod(t, number), f"fmod(tensor, {number!r})")
    assert_same(r.floor_divide(number), t.floor_divide(number), f"floor_divide(tensor, {number!r})")
    # The reflected forms: number % tensor, number // tensor, remainder(number, tensor).
    assert_same(number % r, number % t, f"{number!r} % tensor")
    assert_same(number // r, number // t, f"{number!r} // tensor")
    assert_same(rt.remainder(number, r), torch.remainder(number, t), f"remainder({number!r}, tensor)")


@pytest.mark.parametrize("dtypes", [("int64", "float32"), ("int32", "int64"), ("uint8", "int64"),
                                    ("float16", "bfloat16"), ("float16", "float32"), ("float32", "float64"),
                                    ("bool", "int64"), ("int64", "bool")], ids="-".join)
def test_type_promotion(dtypes):
    rng = np.random.default_rng(5)
    a = rng.integers(1, 50, (3, 4)).astype(np.float64)
    b = rng.integers(1, 9, (4,)).astype(np.float64)
    if dtypes[0] == "bool":
        a = (a > 25)
    if dtypes[1] == "bool":
        b = np.ones(4, dtype=bool)
    ra, ta = (rt.tensor(a).to(getattr(rt, dtypes[0])), torch.tensor(a).to(getattr(torch, dtypes[0])))
    rb, tb = (rt.tensor(b).to(getattr(rt, dtypes[1])), torch.tensor(b).to(getattr(torch, dtypes[1])))
    for op in ("remainder", "fmod", "floor_divide"):
        assert_same(OPS[op](rt, ra, rb), OPS[op](torch, ta, tb), f"{op} {dtypes}")
    # 0-dim tensors rank below dimensioned ones, as in PyTorch.
    assert_same(ra % rb[0], ta % tb[0], "0-dim divisor")
    assert_same(ra[0, 0] // rb, ta[0, 0] // tb, "0-dim dividend")


@pytest.mark.parametrize("shapes", [((3, 4), (4,)), ((3, 1, 5), (4, 1)), ((1,), (2, 3)), ((2, 3), ())], ids=str)
@pytest.mark.parametrize("dtype", ("float64", "int64"))
def test_broadcasting(shapes, dtype):
    rng = np.random.default_rng(6)
    a = rng.uniform(-30, 30, shapes[0])
    b = rng.uniform(0.5, 4, shapes[1]) * rng.choice([-1, 1], shapes[1])
    if dtype == "int64":
        a, b = np.round(a), np.where(np.round(b) == 0, 2, np.round(b))
    (ra, ta), (rb, tb) = pair(np.asarray(a), dtype), pair(np.asarray(b), dtype)
    for op in OPS:
        assert_same(OPS[op](rt, ra, rb), OPS[op](torch, ta, tb), f"{op} {shapes}")
        assert_same(OPS[op](rt, rb, ra.abs() + 1), OPS[op](torch, tb, ta.abs() + 1), f"{op} {shapes} swapped")


def test_views():
    rng = np.random.default_rng(7)
    a, b = rng.uniform(-20, 20, (5, 6)), rng.uniform(0.5, 3, (6, 5))
    (ra, ta), (rb, tb) = pair(a, "float32"), pair(b, "float32")
    assert not ra.t().is_contiguous()
    for op in OPS:
        assert_same(OPS[op](rt, ra.t(), rb), OPS[op](torch, ta.t(), tb), f"{op} transposed")
        assert_same(OPS[op](rt, ra[:, ::2], rb[::2, :].t()), OPS[op](torch, ta[:, ::2], tb[::2, :].t()),
                    f"{op} strided")
        assert_same(OPS[op](rt, ra[:, :1].expand(5, 6), rb.t()), OPS[op](torch, ta[:, :1].expand(5, 6), tb.t()),
                    f"{op} expanded")


INPLACE = {
    "%=": lambda x, y: x.__imod__(y),
    "//=": lambda x, y: x.__ifloordiv__(y),
    "remainder_": lambda x, y: x.remainder_(y),
    "fmod_": lambda x, y: x.fmod_(y),
    "floor_divide_": lambda x, y: x.floor_divide_(y),
    "div_trunc_": lambda x, y: x.div_(y, rounding_mode="trunc"),
    "div_floor_": lambda x, y: x.div_(y, rounding_mode="floor"),
}


@pytest.mark.parametrize("op", INPLACE)
@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("float16", "float32"), ("int32", "int64"),
                                    ("int64", "int64"), ("float64", "int64")], ids="-".join)
def test_inplace(op, dtypes):
    rng = np.random.default_rng(8)
    a = rng.uniform(-50, 50, (3, 4))
    b = rng.uniform(1, 7, (4,)) * rng.choice([-1, 1], 4)
    if dtypes[0] in INTS or dtypes[1] in INTS:
        a, b = np.round(a), np.round(b)
    (ra, ta), (rb, tb) = pair(a, dtypes[0]), pair(b, dtypes[1])
    r_result, t_result = INPLACE[op](ra, rb), INPLACE[op](ta, tb)
    assert r_result is ra and t_result is ta
    assert_same(ra, ta, f"{op} {dtypes}")
    # With a Python number, and through the operator statement.
    for number in (3, -2.5) if dtypes[0] in FLOATS else (3, -4):
        r2, t2 = pair(a, dtypes[0])
        INPLACE[op](r2, number)
        INPLACE[op](t2, number)
        assert_same(r2, t2, f"{op} {number}")
    r3, t3 = pair(a, dtypes[0])
    r3 %= 3
    t3 %= 3
    assert_same(r3, t3, "%= statement")
    r3 //= 2
    t3 //= 2
    assert_same(r3, t3, "//= statement")


def test_inplace_bumps_version_and_writes_through_views():
    base = rt.tensor([[10.0, 11.0], [12.0, 13.0]])
    v = base._version
    column = base.t()[1]
    column %= 5
    assert base.tolist() == [[10.0, 1.0], [12.0, 3.0]]
    assert base._version > v


def test_inplace_errors_match_torch():
    for lib in (rt, torch):
        x = lib.tensor([5, 7])
        with pytest.raises(RuntimeError):
            x %= 2.5  # float result into an int64 tensor
        with pytest.raises(RuntimeError):
            x //= 2.5
        with pytest.raises(RuntimeError):
            lib.tensor([[5, 6]]).remainder_(lib.tensor([[2], [3]]))  # the result would broadcast past self
        assert x.tolist() == [5, 7]


ZERO_DIVISORS = {
    "tensor": lambda lib, dt: lib.tensor([1, 0, 2]).to(getattr(lib, dt)),
    "number": lambda lib, dt: 0,
    "0-dim": lambda lib, dt: lib.tensor(0),
}


@pytest.mark.parametrize("divisor", ZERO_DIVISORS)
@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("op", OPS)
def test_integer_division_by_zero_raises(op, dtype, divisor):
    for lib in (rt, torch):
        a = lib.tensor([7, 8, 9]).to(getattr(lib, dtype))
        with pytest.raises(RuntimeError, match="ZeroDivisionError|division by zero"):
            OPS[op](lib, a, ZERO_DIVISORS[divisor](lib, dtype))
    # rt's error is also a ZeroDivisionError, and says what was wrong.
    a = rt.tensor([7, 8, 9]).to(getattr(rt, dtype))
    with pytest.raises(ZeroDivisionError, match="integer division by zero"):
        OPS[op](rt, a, ZERO_DIVISORS[divisor](rt, dtype))


def test_division_by_zero_leaves_inplace_target_unchanged():
    a = rt.tensor([7, 8, 9])
    with pytest.raises(ZeroDivisionError):
        a //= rt.tensor([1, 0, 2])
    with pytest.raises(ZeroDivisionError):
        a %= 0
    assert a.tolist() == [7, 8, 9]
    # uint8: 256 becomes 0 first, as in torch.
    with pytest.raises(ZeroDivisionError):
        rt.tensor([5]).to(rt.uint8) % 256


def test_integer_extremes_never_crash():
    # torch's CPU kernel dies of SIGFPE on INT64_MIN // -1; rt wraps like two's complement.
    lowest = -2 ** 63
    assert (rt.tensor([lowest, 6]) // -1).tolist() == [lowest, -6]
    assert (rt.tensor([lowest]) % -1).tolist() == [0]
    assert rt.fmod(rt.tensor([lowest]), -1).tolist() == [0]
    assert rt.div(rt.tensor([-2 ** 31], dtype=rt.int32), -1, rounding_mode="trunc").tolist() == [-2 ** 31]


@pytest.mark.parametrize("op", ("remainder", "fmod", "floor_divide", "div_trunc", "mod_operator"))
def test_bool_is_refused_like_torch(op):
    for lib in (rt, torch):
        with pytest.raises(RuntimeError):
            OPS[op](lib, lib.tensor([True, False]), lib.tensor([True, True]))
    # bool with a number or an integer tensor promotes and works.
    assert_same(rt.tensor([True, False]) % 2, torch.tensor([True, False]) % 2)
    assert_same(rt.remainder(True, rt.tensor([3, -3])), torch.remainder(True, torch.tensor([3, -3])))


def test_bad_rounding_mode_and_fmod_with_a_number_first():
    for lib in (rt, torch):
        with pytest.raises(RuntimeError, match="rounding_mode"):
            lib.div(lib.tensor([1.0]), 2, rounding_mode="round")
        with pytest.raises(TypeError):
            lib.fmod(3.0, lib.tensor([2.0]))


def _grad_pair(x_np, y_np, fn):
    rx, ry = rt.tensor(x_np, requires_grad=True), rt.tensor(y_np, requires_grad=True)
    tx, ty = torch.tensor(x_np, requires_grad=True), torch.tensor(y_np, requires_grad=True)
    w = np.random.default_rng(9).standard_normal(np.broadcast_shapes(x_np.shape, y_np.shape))
    (fn(rt, rx, ry) * rt.tensor(w)).sum().backward()
    (fn(torch, tx, ty) * torch.tensor(w)).sum().backward()
    return (rx, ry), (tx, ty)


@pytest.mark.parametrize("op", ("remainder", "fmod", "mod_operator", "div_trunc", "div_floor"))
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 3), (4, 1))], ids=str)
def test_gradients_match_torch(op, shapes):
    rng = np.random.default_rng(10)
    x = rng.uniform(-20, 20, shapes[0])
    y = rng.uniform(0.5, 3, shapes[1]) * rng.choice([-1, 1], shapes[1])
    (rx, ry), (tx, ty) = _grad_pair(x, y, OPS[op])
    np.testing.assert_allclose(rx.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ry.grad.numpy(), ty.grad.numpy(), rtol=1e-12, atol=1e-12)
    # The node names torch gives them.
    r_out = OPS[op](rt, rx, ry)
    t_out = OPS[op](torch, tx, ty)
    assert type(t_out.grad_fn).__name__ == r_out.grad_fn.name()


@pytest.mark.parametrize("op", ("remainder", "fmod"))
def test_gradients_match_finite_differences(op):
    """Central differences in float64, away from the jumps where x / y is an integer."""
    rng = np.random.default_rng(11)
    x = rng.uniform(0.5, 1.0, (2, 3)) * 7 * rng.choice([-1, 1], (2, 3))
    y = rng.uniform(0.5, 1.0, (3,)) * rng.choice([-1, 1], 3)
    assert np.min(np.abs(x[..., None] / y[None, None, :] - np.round(x[..., None] / y[None, None, :]))) > 1e-3
    f = OPS[op]
    rx, ry = rt.tensor(x, requires_grad=True), rt.tensor(y, requires_grad=True)
    w = rng.standard_normal((2, 3))
    (f(rt, rx, ry) * rt.tensor(w)).sum().backward()
    eps = 1e-6
    for t, arr, grad in ((rx, x, rx.grad.numpy()), (ry, y, ry.grad.numpy())):
        for idx in np.ndindex(arr.shape):
            plus, minus = arr.copy(), arr.copy()
            plus[idx] += eps
            minus[idx] -= eps
            args_p = (plus, y) if t is rx else (x, plus)
            args_m = (minus, y) if t is rx else (x, minus)
            fp = float((f(rt, rt.tensor(args_p[0]), rt.tensor(args_p[1])) * rt.tensor(w)).sum())
            fm = float((f(rt, rt.tensor(args_m[0]), rt.tensor(args_m[1])) * rt.tensor(w)).sum())
            wrt = "x" if t is rx else "y"
            assert grad[idx] == pytest.approx((fp - fm) / (2 * eps), abs=1e-5), f"{op} d/d{wrt}{idx}"


def test_no_derivative_where_torch_has_none():
    for lib in (rt, torch):
        x = lib.tensor([5.5, -3.2], requires_grad=True)
        y = lib.tensor([2.0, 2.0], requires_grad=True)
        for out in (x // y, lib.floor_divide(x, 2), 3.0 % y, 3.0 // y):
            assert out.requires_grad
            with pytest.raises(RuntimeError, match="derivative for .* is not implemented"):
                out.sum().backward()
        z = x * 1
        z //= 2
        with pytest.raises(RuntimeError, match="not implemented"):
            z.sum().backward()
    assert rt.floor_divide(rt.tensor([1.0], requires_grad=True), 2).grad_fn.name() == "NotImplemented"
