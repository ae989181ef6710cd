"""Parity with PyTorch for the second batch of tensor ops composed in Python (einsum, cdist, histc, bincount,
round/trunc/fix/frac, narrow_copy, index_fill, index_copy, masked_scatter, Tensor.unfold, as_tensor,
frombuffer) and for clamp with tensor bounds: forward on float32/float64/int64 and empty tensors, backward in
float64 against torch's gradients, in-place forms, and bad arguments."""
import warnings

import numpy as np
import pytest

import rustytorch as rt
from conftest import assert_close
from test_tensor_ops_more import DTYPES, check_backward, check_forward

torch = pytest.importorskip("torch")

FLOATS = ("float32", "float64")
INF = float("inf")

# (name, fn(lib, *inputs), input shapes, differentiable, dtypes)
EINSUM_CASES = [
    ("einsum_matmul", lambda m, a, b: m.einsum("ij,jk->ik", a, b), [(3, 4), (4, 5)], True, DTYPES),
    ("einsum_implicit", lambda m, a, b: (m.einsum("ij,jk", a, b), m.einsum("ba", a)), [(3, 4), (4, 5)], True,
     DTYPES),
    ("einsum_operand_list", lambda m, a, b: m.einsum("bij,bjk->bik", [a, b]), [(2, 3, 4), (2, 4, 5)], True, DTYPES),
    ("einsum_trace_diagonal", lambda m, x: (m.einsum("ii", x), m.einsum("ii->i", x), m.einsum("ii->", x)),
     [(4, 4)], True, DTYPES),
    ("einsum_repeated_three", lambda m, x, y: (m.einsum("iij->ji", x), m.einsum("iii->i", y), m.einsum("iji->j", y)),
     [(3, 3, 2), (3, 3, 3)], True, DTYPES),
    ("einsum_ellipsis_broadcast", lambda m, a, b: m.einsum("...ij,...jk->...ik", a, b), [(2, 1, 3, 4), (5, 4, 2)],
     True, DTYPES),
    ("einsum_ellipsis_implicit", lambda m, x: (m.einsum("...ij", x), m.einsum("i...j", x), m.einsum("...ii->...", x)),
     [(2, 3, 3)], True, DTYPES),
    ("einsum_ellipsis_summed", lambda m, x: (m.einsum("...ij->ij", x), m.einsum("i...->i", x)), [(2, 3, 4)], True,
     DTYPES),
    ("einsum_ellipsis_middle", lambda m, a, b: m.einsum("a...b,b...c->...ac", a, b), [(2, 3, 4), (4, 3, 5)], True,
     DTYPES),
    ("einsum_sums", lambda m, x: (m.einsum("ijk->", x), m.einsum("ijk->kj", x), m.einsum("ijk->kji", x)),
     [(2, 3, 4)], True, DTYPES),
    ("einsum_outer_dot", lambda m, a, b: (m.einsum("i,j->ij", a, b), m.einsum("i,i->", a, a), m.einsum("i,i", a, a)),
     [(3,), (4,)], True, DTYPES),
    ("einsum_three_operands", lambda m, a, b, c: m.einsum("ij,jk,kl->il", a, b, c), [(2, 3), (3, 4), (4, 5)], True,
     DTYPES),
    ("einsum_bilinear", lambda m, a, w, b: m.einsum("bn,anm,bm->ba", a, w, b), [(2, 3), (4, 3, 5), (2, 5)], True,
     DTYPES),
    ("einsum_private_sums", lambda m, a, b: (m.einsum("ij,kl->il", a, b), m.einsum("ab,cd->", a, b)),
     [(2, 3), (4, 5)], True, DTYPES),
    ("einsum_size_one_broadcast", lambda m, a, b, c: (m.einsum("ij,jk->ik", a, b), m.einsum("ij,ij->ij", a, c)),
     [(2, 1), (3, 4), (2, 4)], True, DTYPES),
    ("einsum_upper_case", lambda m, x: (m.einsum("BaAb", x), m.einsum("Bb->bB", x.sum((1, 2)))), [(1, 2, 3, 4)],
     True, DTYPES),
    ("einsum_sublist", lambda m, a, b: (m.einsum(a, [0, 1], b, [1, 2], [0, 2]), m.einsum(a, [0, 1], b, [1, 2])),
     [(2, 3), (3, 4)], True, DTYPES),
    ("einsum_sublist_ellipsis", lambda m, x: m.einsum(x, [Ellipsis, 0, 1], [Ellipsis, 1]), [(5, 2, 3)], True, DTYPES),
    ("einsum_spaces", lambda m, a, b: m.einsum(" i j , j k -> i k ", a, b), [(2, 3), (3, 4)], True, DTYPES),
    ("einsum_empty", lambda m, a, b, c: (m.einsum("ij,jk->ik", a, b), m.einsum("ij,jk->ik", c, b.t().t()[:0])),
     [(0, 3), (3, 4), (2, 0)], True, DTYPES),
    ("einsum_identity", lambda m, x: m.einsum("ij->ij", x), [(2, 3)], True, DTYPES),
]

CDIST_CASES = [
    ("cdist_p", lambda m, a, b: tuple(m.cdist(a, b, p=p) for p in (0, 0.5, 1, 1.5, 2, 3, INF)), [(5, 3), (4, 3)], True,
     FLOATS),
    ("cdist_batched_broadcast", lambda m, a, b: (m.cdist(a, b), m.cdist(a, b, 1)), [(2, 1, 5, 3), (3, 4, 3)], True,
     FLOATS),
    ("cdist_mm_by_size", lambda m, a, b: m.cdist(a, b), [(30, 4), (6, 4)], True, FLOATS),
    ("cdist_compute_modes", lambda m, a, b: (m.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
                                             m.cdist(a, b, compute_mode="donot_use_mm_for_euclid_dist")),
     [(30, 4), (6, 4)], True, FLOATS),
    ("cdist_empty", lambda m, a, b, c, d: (m.cdist(a, b), m.cdist(b, a), m.cdist(c, d), m.cdist(c, d, p=INF)),
     [(0, 3), (4, 3), (3, 0), (2, 0)], True, FLOATS),
]

ROUNDING_CASES = [
    ("round", lambda m, x: (m.round(x * 3), (x * 3).round(), m.round(x * 30, decimals=1), (x * 300).round(decimals=-1),
                            m.round(x, decimals=3)), [(4, 5)], True, FLOATS),
    ("trunc_fix_frac", lambda m, x: (m.trunc(x * 3), (x * 3).fix(), m.fix(x), m.frac(x * 3), (x * 3).frac()),
     [(4, 5)], True, FLOATS),
    ("floor_ceil", lambda m, x: (m.floor(x * 3), (x * 3).floor(), m.ceil(x * 3), (x * 3).ceil()), [(4, 5)], True,
     FLOATS),
    ("rounding_in_place", lambda m, x: ((x * 3).round_(), (x * 3).trunc_(), (x * 3).fix_(), (x * 3).frac_(),
                                        (x * 30).round_(decimals=1), (x * 3).floor_(), (x * 3).ceil_()),
     [(4, 5)], True, FLOATS),
    ("rounding_integers", lambda m, x: (m.round(x), x.trunc(), m.fix(x), m.floor(x), x.ceil()), [(3, 4)], False,
     ("int64",)),
    ("rounding_empty", lambda m, x: (m.round(x), m.trunc(x), m.frac(x), m.round(x, decimals=2), m.floor(x)),
     [(0, 3)], True, FLOATS),
]

INDEX_CASES = [
    # torch 1.13 has no derivative for narrow_copy (test_narrow_copy_gradient checks ours against narrow's).
    ("narrow_copy", lambda m, x: (m.narrow_copy(x, 1, 1, 2), x.narrow_copy(-1, -3, 2), x.narrow_copy(0, 0, 0)),
     [(3, 4)], False, DTYPES),
    ("index_fill", lambda m, x: (m.index_fill(x, 1, m.tensor([0, -1, 0]), -2.0), x.index_fill(0, m.tensor(2), 5)),
     [(3, 4)], True, DTYPES),
    ("index_fill_tensor_value", lambda m, x, v: m.index_fill(x, -1, m.tensor([1, 3]), v), [(3, 4), ()], True, FLOATS),
    ("index_fill_scalar_and_empty", lambda m, x, y: (m.index_fill(x, 0, m.tensor([0]), 3),
                                                     y.index_fill(1, m.tensor([], dtype=m.int64), 1)),
     [(), (2, 3)], True, DTYPES),
    ("index_copy", lambda m, x, s: m.index_copy(x, 1, m.tensor([3, 0]), s), [(3, 4), (3, 2)], True, DTYPES),
    ("index_copy_dim0", lambda m, x, s: x.index_copy(-2, m.tensor([2, 0, 1]), s), [(3, 2), (3, 2)], True, DTYPES),
    ("index_copy_empty", lambda m, x, s: m.index_copy(x, 0, m.tensor([], dtype=m.int64), s), [(3, 2), (0, 2)], True,
     DTYPES),
    ("masked_scatter", lambda m, x, s: m.masked_scatter(x, x > 0, s), [(3, 4), (20,)], True, DTYPES),
    ("masked_scatter_broadcast_mask", lambda m, x, s: x.masked_scatter(m.tensor([True, False, True, True]), s),
     [(3, 4), (3, 5)], True, DTYPES),
    ("masked_scatter_broadcast_self", lambda m, x, s: m.masked_scatter(x, s[:24].reshape(2, 3, 4) > 0, s),
     [(3, 4), (30,)], True, DTYPES),
    ("masked_scatter_none_and_empty", lambda m, x, s, e: (x.masked_scatter(x > 100, s), e.masked_scatter(e > 0, s)),
     [(3, 4), (5,), (0, 4)], True, DTYPES),
    ("index_writes_in_place", lambda m, x, s, t: ((x * 1).index_fill_(1, m.tensor([0]), 2.0),
                                                  (x * 1).index_copy_(0, m.tensor([1]), s),
                                                  (x * 1).masked_scatter_(x > 0, t)),
     [(3, 4), (1, 4), (12,)], True, FLOATS),
    ("unfold", lambda m, x: (x.unfold(0, 2, 1), x.unfold(-1, 3, 2), x.unfold(1, 5, 5), x.unfold(1, 0, 1)), [(3, 5)],
     True, DTYPES),
    ("unfold_3d_and_scalar", lambda m, x, s: (x.unfold(1, 2, 3), s.unfold(0, 1, 1)), [(2, 7, 3), ()], True, DTYPES),
    ("clamp_tensor_bounds", lambda m, x, lo, hi: (m.clamp(x, lo, hi), x.clip(min=lo), m.clamp(x, max=hi),
                                                  x.clamp(lo - 10, hi + 10)), [(3, 4), (4,), (3, 1)], True, FLOATS),
]

CASES = EINSUM_CASES + CDIST_CASES + ROUNDING_CASES + INDEX_CASES


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


def _pair(values, dtype="float64"):
    a = np.array(values, dtype=dtype)
    return rt.tensor(a), torch.tensor(a)


# [SECTION] einsum

def test_einsum_long_chain_and_views():
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s) for s in ((2, 3), (3, 4), (4, 2), (2, 5))]
    got = rt.einsum("ab,bc,cd,de->ae", *(rt.tensor(a) for a in arrays))
    want = torch.einsum("ab,bc,cd,de->ae", *(torch.tensor(a) for a in arrays))
    assert_close(got, want, "float64", "chain")
    x = rt.tensor(arrays[0])
    for eq, want in (("ij->ij", x), ("ij->ji", x.t()), ("->", x.sum())):
        operand = x if eq != "->" else want
        y = rt.einsum(eq, operand)  # a view, as torch returns: not the operand itself, but its memory
        assert y is not operand and y._shares_storage(operand) and y.tolist() == want.tolist()


def _random_einsum(rng, nrng):
    """A random equation (0-3 operands' worth of subscripts, repeats, ellipses with size-1 broadcasting, explicit
    or implicit output) and float64 operands for it."""
    sizes = {c: rng.randint(1, 4) for c in "abcdeAB"}
    ellipsis = rng.random() < 0.4
    ellipsis_shape = [rng.randint(1, 3) for _ in range(rng.randint(0, 2))]
    terms, arrays = [], []
    for _ in range(rng.randint(1, 3)):
        labels = [rng.choice("abcdeAB") for _ in range(rng.randint(0, 4))]
        shape = [sizes[c] for c in labels]
        if ellipsis and rng.random() < 0.8:
            at = rng.randint(0, len(labels))
            dims = ellipsis_shape[len(ellipsis_shape) - rng.randint(0, len(ellipsis_shape)):]
            labels[at:at] = ["..."]
            shape[at:at] = [1 if rng.random() < 0.2 else s for s in dims]
        terms.append("".join(labels))
        arrays.append(nrng.standard_normal(shape))
    equation = ",".join(terms)
    if rng.random() < 0.6:
        used = sorted({c for t in terms for c in t if c != "."})
        out = rng.sample(used, rng.randint(0, len(used)))
        if any("..." in t for t in terms) and rng.random() < 0.7:
            out.insert(rng.randint(0, len(out)), "...")
        equation += "->" + "".join(out)
    return equation, arrays


def test_einsum_random_equations_match_torch():
    import random
    rng, nrng = random.Random(0), np.random.default_rng(0)
    for _ in range(150):
        equation, arrays = _random_einsum(rng, nrng)
        theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
        want = torch.einsum(equation, *theirs)
        ours = [rt.tensor(a).requires_grad_() for a in arrays]
        got = rt.einsum(equation, *ours)
        assert_close(got, want, "float64", equation)
        w = nrng.standard_normal(tuple(want.shape))
        (want * torch.tensor(w)).sum().backward()
        (got * rt.tensor(w)).sum().backward()
        for r, t in zip(ours, theirs):
            assert_close(r.grad, t.grad, "float64", f"grad {equation}")


# [SECTION] cdist

def test_cdist_coincident_points_have_zero_distance_and_gradient():
    for mode in ("use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"):
        for p in (0.5, 1.0, 2.0, 3.0, INF):
            if p != 2.0 and mode == "use_mm_for_euclid_dist":
                continue
            data = [[0.0, 1.0], [0.0, 1.0], [2.0, -1.0]]
            x_rt, x_t = _pair(data)
            x_rt.requires_grad_()
            x_t.requires_grad_()
            d_rt, d_t = rt.cdist(x_rt, x_rt, p, mode), torch.cdist(x_t, x_t, p, mode)
            assert_close(d_rt, d_t, "float64", f"p={p} {mode}")
            d_rt.sum().backward()
            d_t.sum().backward()
            assert np.isfinite(x_rt.grad.numpy()).all()
            assert_close(x_rt.grad, x_t.grad, "float64", f"grad p={p} {mode}")


# [SECTION] histc and bincount

def test_histc_edges_nan_and_data_range():
    x_rt, x_t = _pair([0.0, 1.0, 2.0, -0.5, 2.5, 1.5, 0.5])
    for args in ((4, 0, 2), (3, 0, 0), (5, 1, 1), (2, -1.0, 3.0)):
        assert_close(rt.histc(x_rt, *args), torch.histc(x_t, *args), "float64", str(args))
    # NaN is not counted (torch 1.13 puts it in the first bin when min and max are given; later torch skips it).
    with_nan = rt.tensor([float("nan"), 1.0, 0.0], dtype=rt.float64)
    assert rt.histc(with_nan, 4, 0, 2).tolist() == [1.0, 0.0, 1.0, 0.0]
    e_rt, e_t = _pair([], "float32")
    assert_close(e_rt.histc(3), e_t.histc(3), "float32", "empty")
    for dtype in FLOATS:
        x_rt, x_t = _pair(np.random.default_rng(4).standard_normal(50), dtype)
        assert_close(x_rt.histc(bins=13), torch.histc(x_t, bins=13), dtype, dtype)


def test_histc_has_no_gradient_as_in_torch():
    x = rt.randn(10, requires_grad=True)
    h = rt.histc(x, 4)
    assert not h.requires_grad and h.grad_fn is None
    assert not torch.histc(torch.randn(10, requires_grad=True), 4).requires_grad


def test_bincount_counts_weights_and_minlength():
    values = [0, 3, 3, 1, 7, 3]
    i_rt, i_t = _pair(values, "int64")
    assert_close(rt.bincount(i_rt), torch.bincount(i_t), "int64", "counts")
    assert_close(i_rt.bincount(minlength=10), i_t.bincount(minlength=10), "int64", "minlength")
    assert_close(rt.bincount(i_rt, minlength=3), torch.bincount(i_t, minlength=3), "int64", "short minlength")
    for wdtype in ("float32", "float64", "int64", "bool"):
        w = np.random.default_rng(5).standard_normal(len(values))
        w_rt, w_t = _pair(w > 0 if wdtype == "bool" else w, wdtype)
        got, want = rt.bincount(i_rt, w_rt, 9), torch.bincount(i_t, w_t, 9)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        assert_close(got, want, str(want.dtype).split(".")[-1], wdtype)
    for idtype in ("int32", "uint8"):
        got, want = rt.bincount(_pair(values, idtype)[0]), torch.bincount(_pair(values, idtype)[1])
        assert_close(got, want, "int64", idtype)
    e_rt, e_t = _pair([], "int64")
    for kwargs in ({}, {"minlength": 4}):
        got, want = rt.bincount(e_rt, **kwargs), torch.bincount(e_t, **kwargs)
        assert got.dtype == rt.int64 and want.dtype == torch.int64
        assert_close(got, want, "int64", f"empty {kwargs}")


def test_bincount_weights_get_their_gradient():
    index = rt.tensor([0, 2, 2, 1])
    weights = rt.tensor([1.0, 2.0, 3.0, 4.0], dtype=rt.float64, requires_grad=True)
    out = rt.bincount(index, weights)
    (out * rt.tensor([10.0, 20.0, 30.0], dtype=rt.float64)).sum().backward()
    assert weights.grad.tolist() == [10.0, 30.0, 30.0, 20.0]


# [SECTION] rounding

SPECIAL = [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -0.3, 0.3, 3.7, -0.0, 0.0, INF, -INF, float("nan"), 1e300, -4.5e15,
           0.49999999999999994, 2.0 ** 52 + 1]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["round", "trunc", "fix", "floor", "ceil", "frac"])
def test_rounding_special_values_and_signed_zeros(name, dtype):
    x_rt, x_t = _pair([v for v in SPECIAL if dtype == "float64" or abs(v) < 3e38], dtype)
    got, want = getattr(rt, name)(x_rt).numpy(), getattr(torch, name)(x_t).numpy()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", FLOATS)
def test_round_decimals_halves_like_torch(dtype):
    x_rt, x_t = _pair([1.25, 2.35, -0.125, 1234.5678, 15.0, 25.0, -35.0, 0.05, INF, float("nan")], dtype)
    for decimals in (1, 2, 3, -1, -2):
        got, want = rt.round(x_rt, decimals=decimals), torch.round(x_t, decimals=decimals)
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=f"decimals={decimals}")


def test_in_place_rounding_on_a_leaf_is_refused_and_results_are_new():
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        rt.ones(3, requires_grad=True).round_()
    x = rt.tensor([1.5, -2.5])
    assert x.round_() is x and x.tolist() == [2.0, -2.0]
    y = rt.tensor([1.5])
    rt.trunc(y).add_(1)
    assert y.tolist() == [1.5]


# [SECTION] index writes and windows

def test_narrow_copy_gradient():
    check_backward(lambda m, x: (m.narrow_copy(x, 1, 1, 2) if m is rt else m.narrow(x, 1, 1, 2).clone()), [(3, 4)])


def test_index_copy_repeated_index_keeps_the_last_slice():
    x_rt, x_t = _pair(np.zeros((5, 2)))
    s_rt, s_t = _pair(np.arange(8.0).reshape(4, 2))
    idx = [3, 1, 3, 3]
    got = x_rt.index_copy(0, rt.tensor(idx), s_rt)
    want = x_t.index_copy(0, torch.tensor(idx), s_t)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_index_writes_leave_the_input_alone():
    x = rt.arange(6.0).reshape(2, 3)
    rt.index_fill(x, 1, rt.tensor([0]), 9.0)
    rt.index_copy(x, 0, rt.tensor([1]), rt.ones(1, 3))
    rt.masked_scatter(x, x > 2, rt.zeros(6))
    x.unfold(1, 2, 1).add_(1)
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_index_writes_in_place_write_into_self():
    x = rt.zeros(2, 3)
    assert x.index_fill_(1, rt.tensor([2]), 1.0) is x
    x.index_copy_(0, rt.tensor([0]), rt.full((1, 3), 5.0))
    x.masked_scatter_(rt.tensor([False, True, False]), rt.tensor([7.0, 8.0]))
    assert x.tolist() == [[5.0, 7.0, 5.0], [0.0, 8.0, 1.0]]
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        rt.zeros(3, requires_grad=True).index_fill_(0, rt.tensor([0]), 1.0)


def test_index_fill_value_tensor_gets_the_gradient_of_the_filled_slices():
    value = rt.tensor(2.0, dtype=rt.float64, requires_grad=True)
    out = rt.index_fill(rt.zeros(2, 4, dtype=rt.float64), 1, rt.tensor([1, 3, 1]), value)
    (out * rt.arange(8, dtype=rt.float64).reshape(2, 4)).sum().backward()
    assert value.grad.item() == 1.0 + 3.0 + 5.0 + 7.0


# [SECTION] as_tensor and frombuffer

def test_as_tensor_shares_numpy_memory_when_it_can():
    a = np.arange(6.0).reshape(2, 3)
    t = rt.as_tensor(a)
    a[0, 0] = 9.0
    assert t[0, 0].item() == 9.0 and t.dtype == rt.float64
    t[1, 2] = -1.0
    assert a[1, 2] == -1.0
    strided = rt.as_tensor(a[:, ::2])
    a[1, 2] = 4.0
    assert strided.tolist() == [[9.0, 2.0], [3.0, 4.0]]
    converted = rt.as_tensor(a, dtype=rt.float32)
    a[0, 1] = 7.0
    assert converted.dtype == rt.float32 and converted[0, 1].item() == 1.0


def test_as_tensor_passes_tensors_through_and_copies_other_data():
    x = rt.ones(2)
    assert rt.as_tensor(x) is x and rt.as_tensor(x, dtype=rt.float32, device="cpu") is x
    assert rt.as_tensor(x, dtype=rt.float64).dtype == rt.float64
    data = [[1, 2], [3, 4]]
    t = rt.as_tensor(data)
    data[0][0] = 5
    assert t.dtype == rt.int64 and t.tolist() == [[1, 2], [3, 4]]
    assert rt.as_tensor(2.5, dtype=rt.float64).item() == 2.5
    with pytest.raises(ValueError, match="negative"):
        rt.as_tensor(np.arange(3.0)[::-1])


def test_frombuffer_shares_memory_with_the_buffer():
    buf = bytearray(16)
    t = rt.frombuffer(buf, dtype=rt.int32, count=2, offset=4)
    assert t.shape == (2,) and t.dtype == rt.int32
    t[1] = 7
    assert buf[8:12] == (7).to_bytes(4, "little")
    buf[4] = 3
    assert t[0].item() == 3
    want = torch.frombuffer(bytearray(buf), dtype=torch.int32, offset=4)
    assert rt.frombuffer(buf, dtype=rt.int32, offset=4).tolist() == want.tolist()
    f = rt.frombuffer(bytearray(8), dtype=rt.float32, requires_grad=True)
    assert f.requires_grad and f.tolist() == [0.0, 0.0]
    assert rt.frombuffer(np.arange(4, dtype=np.int64), dtype=rt.int64).tolist() == [0, 1, 2, 3]


def test_frombuffer_warns_on_a_read_only_buffer():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = rt.frombuffer(b"\x01\x00\x02\x00", dtype=rt.uint8)
    assert t.tolist() == [1, 0, 2, 0]
    assert any("not writable" in str(w.message) for w in caught)


# [SECTION] errors

EINSUM_BAD = [
    (lambda m: m.einsum("ij,jk->ik", m.ones(2, 3)), ValueError, "fewer operands were provided"),
    (lambda m: m.einsum("ij", m.ones(2, 3), m.ones(3)), ValueError, "more operands were provided"),
    (lambda m: m.einsum("i1", m.ones(2, 3)), RuntimeError, "invalid subscript given at index 1"),
    (lambda m: m.einsum("ijk", m.ones(2, 3)), RuntimeError, r"subscripts in the equation \(3\) does not match"),
    (lambda m: m.einsum("...ijk", m.ones(2, 3)), RuntimeError, r"is more than the number of dimensions \(2\)"),
    (lambda m: m.einsum("ij->ii", m.ones(2, 2)), RuntimeError, "output subscript i appears more than once"),
    (lambda m: m.einsum("ij->k", m.ones(2, 2)), RuntimeError, "output subscript k does not appear"),
    (lambda m: m.einsum("ii", m.ones(2, 3)), RuntimeError, "subscript i is repeated for operand 0 but the sizes"),
    (lambda m: m.einsum("ij,jk", m.ones(2, 3), m.ones(4, 2)), RuntimeError, "operands do not broadcast"),
    (lambda m: m.einsum("...i...", m.ones(2, 3)), RuntimeError, "more than one ellipsis"),
    (lambda m: m.einsum("i.j", m.ones(2, 3)), RuntimeError, "'.' for operand 0 that is not part of any ellipsis"),
    (lambda m: m.einsum("ij"), ValueError, "at least one operand"),
    (lambda m: m.einsum("ij", [[1, 2]]), TypeError, "operand 0 is a list"),
    (lambda m: m.einsum(m.ones(2), [60]), ValueError, r"not within the valid range \[0, 52\)"),
]

BAD = [(lambda call=call: call(rt), exc, message) for call, exc, message in EINSUM_BAD] + [
    (lambda: rt.cdist(rt.ones(3), rt.ones(2, 3)), RuntimeError, "at least 2D tensors, X1 got: 1D"),
    (lambda: rt.cdist(rt.ones(2, 3, dtype=rt.int64), rt.ones(2, 3)), RuntimeError, "floating-point dtypes"),
    (lambda: rt.cdist(rt.ones(2, 3), rt.ones(2, 4)), RuntimeError, "same number of columns. X1: 3 X2: 4"),
    (lambda: rt.cdist(rt.ones(2, 3), rt.ones(2, 3), p=-1), RuntimeError, "non-negative p values"),
    (lambda: rt.cdist(rt.ones(2, 3), rt.ones(2, 3), compute_mode="x"), ValueError, "not a valid value for compute"),
    (lambda: rt.cdist(rt.ones(2, 3), rt.ones(2, 3, dtype=rt.float64)), RuntimeError, "same dtype"),
    (lambda: rt.histc(rt.ones(3, dtype=rt.int64)), RuntimeError, "expected a floating point tensor"),
    (lambda: rt.histc(rt.ones(3), 0), RuntimeError, "bins must be > 0"),
    (lambda: rt.histc(rt.ones(3), 3, 2, 1), RuntimeError, "max must be larger than min"),
    (lambda: rt.histc(rt.ones(3), 3, -INF, 1), RuntimeError, "is not finite"),
    (lambda: rt.bincount(rt.tensor([1, -1])), RuntimeError, "non-negative integral inputs"),
    (lambda: rt.bincount(rt.tensor([[1]])), RuntimeError, "1-d non-negative integral"),
    (lambda: rt.bincount(rt.tensor([1.0])), RuntimeError, "1-d non-negative integral"),
    (lambda: rt.bincount(rt.tensor([1, 2]), rt.ones(3)), RuntimeError, "same length as input"),
    (lambda: rt.bincount(rt.tensor([1, 2]), minlength=-1), RuntimeError, "minlength should be >= 0"),
    (lambda: rt.round(rt.tensor([1, 2]), decimals=1), RuntimeError, r"round\(decimals=1\) is not implemented for"),
    (lambda: rt.frac(rt.tensor([1, 2])), RuntimeError, "only defined for floating point"),
    (lambda: rt.index_fill(rt.zeros(3), 0, rt.tensor([3]), 1.0), IndexError, "index 3 is out of bounds"),
    (lambda: rt.index_fill(rt.zeros(3), 0, rt.tensor([-4]), 1.0), IndexError, "index -4 is out of bounds"),
    (lambda: rt.index_fill(rt.zeros(3), 0, rt.tensor([1.0]), 1.0), IndexError, "Expected dtype int64 for index"),
    (lambda: rt.index_fill(rt.zeros(3), 0, rt.tensor([[1]]), 1.0), IndexError, "Index has to be a vector/scalar"),
    (lambda: rt.index_fill(rt.zeros(3), 0, rt.tensor([1]), rt.ones(2)), RuntimeError, "0-dimensional value tensor"),
    (lambda: rt.index_fill(rt.zeros(3), 1, rt.tensor([1]), 1.0), IndexError, "Dimension out of range"),
    (lambda: rt.index_copy(rt.zeros(3), 0, rt.tensor([-1]), rt.ones(1)), IndexError, "index -1 is out of bounds"),
    (lambda: rt.index_copy(rt.zeros(3, 2), 1, rt.tensor([1]), rt.ones(2, 1)), RuntimeError, "same slice shapes"),
    (lambda: rt.index_copy(rt.zeros(3, 2), 0, rt.tensor([1]), rt.ones(2, 2)), RuntimeError, "Number of indices"),
    (lambda: rt.index_copy(rt.zeros(3, 2), 0, rt.tensor([1]), rt.ones(2)), RuntimeError, "dimensionality must match"),
    (lambda: rt.index_copy(rt.zeros(3), 0, rt.tensor([1]), rt.ones(1, dtype=rt.float64)), RuntimeError,
     "same dtype"),
    (lambda: rt.masked_scatter(rt.zeros(3), rt.tensor([True, True, False]), rt.ones(1)), RuntimeError,
     r"Number of elements of source \(1\) < number of ones in mask \(2\)"),
    (lambda: rt.masked_scatter(rt.zeros(3), rt.ones(3), rt.ones(3)), RuntimeError, "only supports boolean masks"),
    (lambda: rt.masked_scatter(rt.zeros(3), rt.ones(3, dtype=rt.bool), rt.ones(3, dtype=rt.float64)), RuntimeError,
     "same dtypes"),
    (lambda: rt.zeros(3).masked_scatter_(rt.ones(2, 3, dtype=rt.bool), rt.ones(6)), RuntimeError,
     "does not broadcast to self's shape"),
    (lambda: rt.zeros(3).unfold(0, 4, 1), RuntimeError, "maximum size for tensor at dimension 0 is 3 but size is 4"),
    (lambda: rt.zeros(3).unfold(0, 1, 0), RuntimeError, "step is 0 but must be > 0"),
    (lambda: rt.zeros(3).unfold(1, 1, 1), IndexError, "Dimension out of range"),
    (lambda: rt.frombuffer([1, 2], dtype=rt.int32), ValueError, "buffer protocol"),
    (lambda: rt.frombuffer(bytearray(8), dtype=rt.int32, count=0), ValueError, "must not be 0"),
    (lambda: rt.frombuffer(bytearray(0), dtype=rt.int32), ValueError, r"buffer length \(0\)"),
    (lambda: rt.frombuffer(bytearray(8), dtype=rt.int32, offset=8), ValueError, "no greater than buffer length"),
    (lambda: rt.frombuffer(bytearray(8), dtype=rt.int32, offset=3), ValueError, "multiple of element size"),
    (lambda: rt.frombuffer(bytearray(8), dtype=rt.int32, count=3), ValueError, "must not be greater than actual"),
    (lambda: rt.frombuffer(bytearray(8), dtype=rt.bfloat16), TypeError, "no numpy equivalent"),
]


@pytest.mark.parametrize("call,exc,message", BAD)
def test_errors(call, exc, message):
    with pytest.raises(exc, match=message):
        call()


@pytest.mark.parametrize("call,exc,message", EINSUM_BAD)
def test_einsum_errors_are_errors_in_torch_too(call, exc, message):
    # torch refuses the same calls (in its own words): the rt checks do not refuse valid input.
    with pytest.raises((RuntimeError, ValueError, TypeError)):
        call(torch)
