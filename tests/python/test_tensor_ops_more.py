"""Parity with PyTorch for the tensor ops composed in Python (flip, roll, rot90, diff, diag, diag_embed,
trace, tile, repeat_interleave, meshgrid, cartesian_prod, outer, kron, tensordot, cross, logaddexp,
hypot, isclose): forward on float32/float64/int64 and empty tensors, backward in float64, bad dims."""
import numpy as np
import pytest

import rustytorch as rt
from conftest import assert_close

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "int64"]


def _inputs(shapes, dtype, seed=0):
    """The same random arrays as an rt tensor and a torch tensor per shape."""
    rng = np.random.default_rng(seed)
    out = []
    for shape in shapes:
        a = rng.integers(-5, 6, size=shape) if dtype == "int64" else rng.standard_normal(shape)
        a = a.astype(dtype)
        out.append((rt.tensor(a), torch.tensor(a)))
    return out


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def check_forward(fn, shapes, dtype):
    pairs = _inputs(shapes, dtype)
    got = _as_tuple(fn(rt, *(r for r, _ in pairs)))
    want = _as_tuple(fn(torch, *(t for _, t in pairs)))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
        assert_close(g, w, dtype, "forward")


def check_backward(fn, shapes):
    pairs = _inputs(shapes, "float64", seed=1)
    rts = [r.requires_grad_() for r, _ in pairs]
    tts = [t.requires_grad_() for _, t in pairs]
    rng = np.random.default_rng(2)
    outs_rt, outs_t = _as_tuple(fn(rt, *rts)), _as_tuple(fn(torch, *tts))
    loss_rt, loss_t = 0, 0
    for o_rt, o_t in zip(outs_rt, outs_t):
        w = rng.standard_normal(tuple(o_t.shape))
        loss_rt = loss_rt + (o_rt * rt.tensor(w)).sum()
        loss_t = loss_t + (o_t * torch.tensor(w)).sum()
    loss_rt.backward()
    loss_t.backward()
    for r, t in zip(rts, tts):
        assert_close(r.grad, t.grad, "float64", "grad")


# (name, fn(lib, *inputs), input shapes, differentiable, dtypes)
CASES = [
    ("flip", lambda m, x: m.flip(x, (0, -1)), [(3, 4, 2)], True, DTYPES),
    ("flip_method", lambda m, x: x.flip(1), [(2, 5)], True, DTYPES),
    ("flip_empty", lambda m, x: m.flip(x, [0, 1]), [(0, 3)], True, DTYPES),
    ("flip_no_dims", lambda m, x: m.flip(x, []), [(2, 3)], True, DTYPES),
    ("fliplr_flipud", lambda m, x: (m.fliplr(x), m.flipud(x), x.fliplr(), x.flipud()), [(3, 4, 2)], True, DTYPES),
    ("roll_flat", lambda m, x: m.roll(x, 5), [(3, 4)], True, DTYPES),
    ("roll_dim", lambda m, x: (m.roll(x, -1, 0), x.roll(7, -1)), [(3, 4)], True, DTYPES),
    ("roll_tuple", lambda m, x: m.roll(x, (1, -2), (0, 2)), [(3, 4, 5)], True, DTYPES),
    ("roll_empty", lambda m, x: m.roll(x, 2, 0), [(0, 4)], True, DTYPES),
    ("rot90", lambda m, x: tuple(m.rot90(x, k, (0, 1)) for k in range(-1, 5)), [(3, 4)], True, DTYPES),
    ("rot90_dims", lambda m, x: (x.rot90(1, [-1, 0]), m.rot90(x, 3, [2, 1])), [(2, 3, 4)], True, DTYPES),
    ("diff", lambda m, x: (m.diff(x), x.diff(dim=0), m.diff(x, n=2, dim=-1)), [(3, 5)], True, DTYPES),
    ("diff_big_n", lambda m, x: (m.diff(x, n=6), m.diff(x, n=0)), [(2, 4)], True, DTYPES),
    ("diff_prepend_append", lambda m, x, p, a: m.diff(x, 1, 1, prepend=p, append=a), [(3, 4), (3, 2), (3, 1)],
     True, DTYPES),
    ("diff_bool", lambda m, x: m.diff(x > 0), [(3, 5)], False, ("float64",)),
    ("diag_vector", lambda m, v: (m.diag(v), m.diag(v, 2), v.diag(-1)), [(4,)], True, DTYPES),
    ("diag_matrix", lambda m, x: (m.diag(x), m.diag(x, 1), x.diag(-2), m.diag(x, 5), m.diag(x, -3)), [(3, 5)], True,
     DTYPES),
    ("diag_empty", lambda m, v: m.diag(v), [(0,)], True, DTYPES),
    ("diagonal", lambda m, x: (m.diagonal(x), x.diagonal(1, -1, 0), m.diagonal(x, -1, 2, 1)), [(3, 4, 5)], True,
     DTYPES),
    ("diag_embed", lambda m, x: (m.diag_embed(x), x.diag_embed(1), m.diag_embed(x, -2, 0, 2)), [(2, 3)], True,
     DTYPES),
    ("trace", lambda m, x: (m.trace(x), x.trace()), [(4, 3)], True, DTYPES),
    ("tile", lambda m, x: (m.tile(x, (2,)), x.tile((2, 1, 3)), m.tile(x, (1, 1))), [(2, 3)], True, DTYPES),
    ("repeat_interleave_int", lambda m, x: (m.repeat_interleave(x, 2), x.repeat_interleave(3, dim=-1)),
     [(2, 3)], True, DTYPES),
    ("repeat_interleave_tensor", lambda m, x: x.repeat_interleave(m.tensor([1, 0, 3]), dim=1), [(2, 3)], True,
     DTYPES),
    ("repeat_interleave_counts", lambda m, x: (m.repeat_interleave(m.tensor([2, 0, 1])),
                                               m.repeat_interleave(x, m.tensor([2]), dim=0)), [(2, 3)], True, DTYPES),
    ("meshgrid", lambda m, a, b, c: m.meshgrid(a, b, c, indexing="ij"), [(2,), (3,), (4,)], True, DTYPES),
    ("meshgrid_xy", lambda m, a, b, c: m.meshgrid([a, b, c], indexing="xy"), [(2,), (3,), (4,)], True, DTYPES),
    ("meshgrid_scalar", lambda m, a, b: m.meshgrid(a, b, indexing="xy"), [(), (3,)], True, DTYPES),
    ("cartesian_prod", lambda m, a, b, c: m.cartesian_prod(a, b, c), [(2,), (3,), (2,)], True, DTYPES),
    ("cartesian_prod_one", lambda m, a: m.cartesian_prod(a), [(3,)], True, DTYPES),
    ("outer_ger", lambda m, a, b: (m.outer(a, b), a.ger(b), a.outer(b)), [(3,), (4,)], True, DTYPES),
    ("kron", lambda m, a, b: (m.kron(a, b), b.kron(a)), [(2, 3), (3, 1, 2)], True, DTYPES),
    ("kron_empty", lambda m, a, b: m.kron(a, b), [(0, 2), (2, 2)], True, DTYPES),
    ("tensordot_int", lambda m, a, b: (m.tensordot(a, b, 2), m.tensordot(a, b.permute(1, 2, 0), 0).sum(-1)),
     [(2, 3, 4), (3, 4, 5)], True, DTYPES),
    ("tensordot_lists", lambda m, a, b: m.tensordot(a, b, ([0, -1], [2, 0])), [(2, 3, 4), (4, 5, 2)], True, DTYPES),
    ("cross", lambda m, a, b: (m.cross(a, b, dim=1), a.cross(b, -2)), [(4, 3, 2), (4, 3, 2)], True, DTYPES),
    ("cross_default_dim_broadcast", lambda m, a, b: m.cross(a, b), [(2, 3), (1, 3)], True, DTYPES),
    ("logaddexp", lambda m, a, b: (m.logaddexp(a, b), a.logaddexp(b * 30)), [(3, 4), (4,)], True,
     ("float32", "float64")),
    ("hypot", lambda m, a, b: (m.hypot(a, b), a.hypot(b)), [(3, 4), (3, 1)], True, ("float32", "float64")),
    ("isclose", lambda m, a, b: (m.isclose(a, a + b * 1e-6), a.isclose(a + b * 1e-3, rtol=1e-2, atol=0)),
     [(3, 4), (3, 4)], False, ("float32", "float64")),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_forward(case, dtype):
    _name, fn, shapes, _grad, dtypes = case
    if dtype not in dtypes:
        pytest.skip(f"{dtype} is not a dtype torch accepts here")
    check_forward(fn, shapes, dtype)


@pytest.mark.parametrize("case", [c for c in CASES if c[3]], ids=[c[0] for c in CASES if c[3]])
def test_backward(case):
    _name, fn, shapes, _grad, _dtypes = case
    check_backward(fn, shapes)


def test_logaddexp_infinities():
    inf = float("inf")
    a = [inf, -inf, -inf, inf, 1.0, 1000.0]
    b = [inf, -inf, 2.0, -inf, -inf, 1000.0]
    got = rt.logaddexp(rt.tensor(a, dtype=rt.float64), rt.tensor(b, dtype=rt.float64))
    want = torch.logaddexp(torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64))
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_isclose_equal_nan_and_allclose():
    nan = float("nan")
    a, b = [1.0, nan, 2.0], [1.0 + 1e-9, nan, 2.1]
    for equal_nan in (False, True):
        got = rt.tensor(a).isclose(rt.tensor(b), equal_nan=equal_nan)
        want = torch.tensor(a).isclose(torch.tensor(b), equal_nan=equal_nan)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert rt.allclose(rt.tensor(a[:1]), rt.tensor(b[:1])) is True
    assert rt.tensor(a).allclose(rt.tensor(b), atol=0.2, equal_nan=True) is True


def test_diag_keeps_infinities_off_the_diagonal_zero():
    got = rt.diag(rt.tensor([float("inf"), 1.0]))
    np.testing.assert_array_equal(got.numpy(), torch.diag(torch.tensor([float("inf"), 1.0])).numpy())


def test_diagonal_offset_past_the_edge_is_empty():
    # torch 1.13 fails here ("numel: integer multiplication overflow"); later torch returns an empty diagonal.
    x = rt.ones(3, 5)
    assert rt.diag(x, 9).shape == (0,) and rt.diag(x, -4).shape == (0,)
    assert rt.diagonal(rt.ones(2, 3, 4), -7, 1, 2).shape == (2, 0)


def test_results_are_new_tensors():
    x = rt.arange(6.0).reshape(2, 3)
    for y in (rt.flip(x, []), rt.roll(x, 3, 1), rt.rot90(x, 4), rt.diff(x, n=0)):
        y.add_(1)
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


BAD_DIMS = [
    (lambda: rt.flip(rt.zeros(2, 3), (2,)), IndexError,
     r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"),
    (lambda: rt.flip(rt.zeros(2, 3), (0, -2)), RuntimeError, "dims has duplicates"),
    (lambda: rt.roll(rt.zeros(2, 3), (1, 2), 0), RuntimeError, "shifts and dimensions must align"),
    (lambda: rt.roll(rt.zeros(2, 3), 1, -3), IndexError, "Dimension out of range"),
    (lambda: rt.rot90(rt.zeros(2, 3), 1, (0, -2)), RuntimeError, "expected rotation dims to be different"),
    (lambda: rt.rot90(rt.zeros(3), 1), RuntimeError, "expected total dims >= 2"),
    (lambda: rt.rot90(rt.zeros(2, 3), 1, (0,)), RuntimeError, "expected total rotation dims == 2"),
    (lambda: rt.fliplr(rt.zeros(3)), RuntimeError, "Input must be >= 2-d"),
    (lambda: rt.diff(rt.zeros(())), RuntimeError, "at least one-dimensional"),
    (lambda: rt.diff(rt.zeros(3), n=-1), RuntimeError, "order must be non-negative"),
    (lambda: rt.diff(rt.zeros(2, 3), dim=2), IndexError, "Dimension out of range"),
    (lambda: rt.diag(rt.zeros(2, 2, 2)), RuntimeError, "Supports 1D or 2D tensors. Got 3D"),
    (lambda: rt.diagonal(rt.zeros(2, 3), 0, 1, -1), RuntimeError, "diagonal dimensions cannot be identical"),
    (lambda: rt.diag_embed(rt.zeros(2, 3), 0, 0, 3), IndexError, "Dimension out of range"),
    (lambda: rt.trace(rt.zeros(3)), RuntimeError, "expected a matrix"),
    (lambda: rt.repeat_interleave(rt.zeros(2, 3), rt.tensor([1, 2]), dim=1), RuntimeError, "same size as input"),
    (lambda: rt.repeat_interleave(rt.zeros(3), -1), RuntimeError, "can not be negative"),
    (lambda: rt.repeat_interleave(rt.zeros(3), 1, dim=1), IndexError, "Dimension out of range"),
    (lambda: rt.meshgrid(rt.zeros(2, 2), rt.zeros(3)), RuntimeError, "Expected 0D or 1D tensor"),
    (lambda: rt.meshgrid(rt.zeros(2), rt.zeros(3), indexing="xz"), ValueError, "indexing must be one of"),
    (lambda: rt.outer(rt.zeros(2, 2), rt.zeros(3)), RuntimeError, "Expected 1-D argument self"),
    (lambda: rt.tensordot(rt.zeros(2, 3), rt.zeros(4, 2), 1), RuntimeError, "contracted dimensions need to match"),
    (lambda: rt.tensordot(rt.zeros(2, 3), rt.zeros(3, 2), ([1], [0, 1])), RuntimeError, "same length"),
    (lambda: rt.tensordot(rt.zeros(2, 3), rt.zeros(3, 2), ([2], [0])), IndexError, "Dimension out of range"),
    (lambda: rt.cross(rt.zeros(2, 3), rt.zeros(2, 3), dim=0), RuntimeError, "must have length 3"),
    (lambda: rt.cross(rt.zeros(2, 3), rt.zeros(2, 3), dim=2), IndexError, "Dimension out of range"),
    (lambda: rt.cross(rt.zeros(2, 4), rt.zeros(2, 4)), RuntimeError, "no dimension of size 3"),
    (lambda: rt.cross(rt.zeros(2, 3), rt.zeros(3)), RuntimeError, "same number of dimensions"),
    (lambda: rt.logaddexp(rt.zeros(2, dtype=rt.int64), rt.zeros(2, dtype=rt.int64)), RuntimeError,
     "expected floating point"),
]


@pytest.mark.parametrize("call,exc,message", BAD_DIMS)
def test_errors(call, exc, message):
    with pytest.raises(exc, match=message):
        call()
