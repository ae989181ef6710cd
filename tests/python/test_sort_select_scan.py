"""Sorting, selection and scans against PyTorch 1.13: sort/argsort/msort/topk/kthvalue,
unique/unique_consecutive, searchsorted/bucketize, nonzero/argwhere/masked_select/take/
take_along_dim, cumsum/cumprod/cummax/cummin/logcumsumexp. Values over several dtypes and dims,
empty and 0-dim tensors, NaN ordering, ties (stable sort), gradients against torch and against
finite differences in float64, and the errors bad input gets."""
import numpy as np
import pytest

import rustytorch as rt

torch = pytest.importorskip("torch")

DTYPES = ("float32", "float64", "int64", "int32", "uint8")
NAN = float("nan")


def pair(array, dtype):
    """The same values as an rt and a torch tensor of `dtype`."""
    t = torch.tensor(np.asarray(array)).to(getattr(torch, dtype))
    return rt.tensor(t.numpy()).to(getattr(rt, dtype)), t


def assert_same(r, t, what=""):
    """Same dtype, shape and values (NaN matches NaN)."""
    assert str(r.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], f"{what}: dtype {r.dtype} != {t.dtype}"
    a, e = r.detach().numpy(), t.detach().numpy()
    assert a.shape == e.shape, f"{what}: shape {a.shape} != {e.shape}"
    if np.issubdtype(e.dtype, np.floating):
        np.testing.assert_allclose(a, e, rtol=1e-6 if e.dtype == np.float32 else 1e-12, atol=0, equal_nan=True,
                                   err_msg=what)
    else:
        np.testing.assert_array_equal(a, e, err_msg=what)


def assert_all_same(rs, ts, what=""):
    rs = rs if isinstance(rs, tuple) else (rs,)
    ts = ts if isinstance(ts, tuple) else (ts,)
    assert len(rs) == len(ts), what
    for k, (r, t) in enumerate(zip(rs, ts)):
        assert_same(r, t, f"{what} output {k}")


def values_for(dtype, shape, rng):
    """Values with ties (a small range) for integers; distinct normals for floats."""
    if dtype.startswith("float"):
        return rng.standard_normal(shape)
    return rng.integers(0, 5, size=shape)


def finite_difference_check(f, x, rng, eps=1e-6, tol=1e-6):
    """Gradient of sum(f(x) * w) from rt's backward against central differences, in float64."""
    out = f(rt.tensor(x))
    w = rng.standard_normal(tuple(out.shape))
    rx = rt.tensor(x, requires_grad=True)
    (f(rx) * rt.tensor(w)).sum().backward()
    grad = rx.grad.numpy()
    for idx in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[idx] += eps
        minus[idx] -= eps
        fp = float((f(rt.tensor(plus)) * rt.tensor(w)).sum())
        fm = float((f(rt.tensor(minus)) * rt.tensor(w)).sum())
        assert grad[idx] == pytest.approx((fp - fm) / (2 * eps), abs=tol), f"d/dx{idx}"


# ---- sort, argsort, msort, topk, kthvalue ------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", (0, 1, -1))
@pytest.mark.parametrize("descending", (False, True))
def test_sort_matches_torch_stable(dtype, dim, descending):
    rng = np.random.default_rng(1)
    r, t = pair(values_for(dtype, (4, 6), rng), dtype)
    assert_all_same(tuple(rt.sort(r, dim=dim, descending=descending, stable=True)),
                    tuple(torch.sort(t, dim=dim, descending=descending, stable=True)),
                    "sort")
    assert_same(r.argsort(dim=dim, descending=descending, stable=True),
                t.argsort(dim=dim, descending=descending, stable=True))
    assert_same(rt.msort(r), torch.msort(t))


def test_sort_puts_nan_last_ascending_and_first_descending():
    x = [3.0, NAN, -1.0, NAN, 2.0, -np.inf, np.inf]
    r, t = pair(x, "float64")
    for descending in (False, True):
        assert_all_same(tuple(r.sort(descending=descending, stable=True)),
                        tuple(t.sort(descending=descending, stable=True)), f"descending={descending}")


def test_sort_bool_and_half_types():
    r, t = pair([True, False, True, False], "bool")
    assert_all_same(tuple(r.sort(stable=True)), tuple(t.sort(stable=True)))
    x = np.array([0.5, -2.0, 3.25, 0.5])
    for dtype in ("float16", "bfloat16"):
        v, i = rt.tensor(x).to(getattr(rt, dtype)).sort(stable=True)
        assert v.float().numpy().tolist() == [-2.0, 0.5, 0.5, 3.25] and i.numpy().tolist() == [1, 0, 3, 2]


def test_sort_returns_a_named_tuple():
    v, i = rt.sort(rt.tensor([2.0, 1.0]))
    res = rt.tensor([2.0, 1.0]).sort()
    assert res.values.numpy().tolist() == [1.0, 2.0] and res.indices.numpy().tolist() == [1, 0]
    assert type(res).__name__ == "sort" and v.numpy().tolist() == [1.0, 2.0] and i.dtype == rt.int64
    assert not rt.tensor([1.0, 2.0], requires_grad=True).sort().indices.requires_grad


@pytest.mark.parametrize("shape", ((0,), (3, 0), (0, 4), ()))
def test_sort_scans_and_selection_of_empty_and_0_dim_tensors(shape):
    r, t = pair(np.ones(shape), "float32")
    assert_all_same(tuple(r.sort(-1, stable=True)), tuple(t.sort(dim=-1, stable=True)), "sort")
    assert_same(r.cumsum(-1), t.cumsum(-1))
    assert_same(r.cumprod(-1), t.cumprod(-1))
    assert_all_same(tuple(r.cummax(-1)), tuple(t.cummax(-1)), "cummax")
    assert_same(r.logcumsumexp(-1), t.logcumsumexp(-1))
    assert_same(r.nonzero(), t.nonzero())
    assert_same(rt.unique(r), torch.unique(t))
    if r.numel():
        assert_all_same(tuple(r.topk(1)), tuple(t.topk(1)), "topk")
    assert_all_same(tuple(r.topk(0)), tuple(t.topk(0)), "topk 0")


@pytest.mark.parametrize("dtype", ("float32", "float64", "int64", "int32"))
@pytest.mark.parametrize("dim", (0, 1))
def test_topk_and_kthvalue_match_torch(dtype, dim):
    rng = np.random.default_rng(2)
    # Distinct values, so that the index torch returns for each value is unique.
    r, t = pair(rng.permutation(30).reshape(5, 6).astype(np.float64), dtype)
    for k in (1, 3):
        for largest in (True, False):
            assert_all_same(tuple(rt.topk(r, k, dim, largest)), tuple(torch.topk(t, k, dim, largest)), f"topk {k}")
        for keepdim in (False, True):
            assert_all_same(tuple(r.kthvalue(k, dim, keepdim)), tuple(t.kthvalue(k, dim, keepdim)), f"kthvalue {k}")


def test_topk_and_kthvalue_with_nan():
    r, t = pair([1.0, NAN, 3.0, -2.0], "float32")
    assert_all_same(tuple(r.topk(2)), tuple(t.topk(2)))
    assert_all_same(tuple(r.topk(2, largest=False)), tuple(t.topk(2, largest=False)))
    assert_all_same(tuple(r.kthvalue(4)), tuple(t.kthvalue(4)))


@pytest.mark.parametrize("op", ("sort", "sort_descending", "topk", "topk_smallest", "kthvalue", "kthvalue_keepdim",
                                "msort"))
def test_selection_gradients_match_torch(op):
    f = {"sort": lambda m, x: m.sort(x, 1).values, "sort_descending": lambda m, x: x.sort(0, descending=True)[0],
         "topk": lambda m, x: m.topk(x, 2, 1).values, "topk_smallest": lambda m, x: x.topk(3, 0, largest=False)[0],
         "kthvalue": lambda m, x: m.kthvalue(x, 2, 1).values, "kthvalue_keepdim": lambda m, x: x.kthvalue(3, 0, True)[0],
         "msort": lambda m, x: m.msort(x)}[op]
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 5))
    rx, tx = rt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    w = rng.standard_normal(tuple(f(torch, tx).shape))
    (f(rt, rx) * rt.tensor(w)).sum().backward()
    (f(torch, tx) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(rx.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    assert f(rt, rx).grad_fn.name() == type(f(torch, tx).grad_fn).__name__
    finite_difference_check(lambda v: f(rt, v), x, rng)


# ---- unique, unique_consecutive --------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_unique_matches_torch(dtype):
    rng = np.random.default_rng(4)
    r, t = pair(rng.integers(0, 4, size=(3, 5)), dtype)
    for inv in (False, True):
        for cnt in (False, True):
            assert_all_same(rt.unique(r, return_inverse=inv, return_counts=cnt),
                            torch.unique(t, return_inverse=inv, return_counts=cnt), f"unique {inv} {cnt}")
            assert_all_same(r.unique_consecutive(return_inverse=inv, return_counts=cnt),
                            t.unique_consecutive(return_inverse=inv, return_counts=cnt), "unique_consecutive")
    for dim in (0, 1, -1):
        assert_all_same(rt.unique(r, dim=dim, return_inverse=True, return_counts=True),
                        torch.unique(t, dim=dim, return_inverse=True, return_counts=True), f"unique dim {dim}")
        assert_all_same(rt.unique_consecutive(r, dim=dim, return_inverse=True, return_counts=True),
                        torch.unique_consecutive(t, dim=dim, return_inverse=True, return_counts=True), f"dim {dim}")


def test_unique_of_repeated_slices_and_0_dim():
    r, t = pair([[1, 2], [1, 2], [0, 5]], "int64")
    assert_all_same(rt.unique(r, dim=0, return_inverse=True, return_counts=True),
                    torch.unique(t, dim=0, return_inverse=True, return_counts=True))
    r, t = pair(3.0, "float32")
    assert_all_same(rt.unique(r, return_inverse=True), torch.unique(t, return_inverse=True))


def test_unique_sorted_false_still_finds_every_value_and_nan_stays_distinct():
    x = rt.tensor([3, 1, 2, 1, 5])
    assert sorted(rt.unique(x, sorted=False).numpy().tolist()) == [1, 2, 3, 5]
    v = rt.unique(rt.tensor([2.0, NAN, NAN, 1.0])).numpy()
    assert v[:2].tolist() == [1.0, 2.0] and np.isnan(v[2:]).all() and v.shape == (4,)


def test_unique_values_have_no_derivative_as_in_torch():
    for lib in (rt, torch):
        x = lib.tensor([3.0, 1.0, 3.0], requires_grad=True)
        for out in (lib.unique(x), lib.unique_consecutive(x)):
            assert out.requires_grad
            with pytest.raises((RuntimeError, NotImplementedError), match="derivative for .* not implemented"):
                out.sum().backward()


# ---- searchsorted, bucketize ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("right", (False, True))
def test_searchsorted_and_bucketize_match_torch(dtype, right):
    rng = np.random.default_rng(5)
    seq = np.sort(rng.integers(0, 10, size=(3, 7)), axis=1)
    vals = rng.integers(-1, 11, size=(3, 4))
    rs, ts = pair(seq, dtype)
    rv, tv = pair(vals, dtype)
    assert_same(rt.searchsorted(rs, rv, right=right), torch.searchsorted(ts, tv, right=right))
    side = "right" if right else "left"
    assert_same(rt.searchsorted(rs[1], rv, side=side, out_int32=True), torch.searchsorted(ts[1], tv, side=side, out_int32=True))
    assert_same(rt.bucketize(rv, rs[0], right=right), torch.bucketize(tv, ts[0], right=right))
    assert_same(rt.searchsorted(rs[0], 4, right=right), torch.searchsorted(ts[0], 4, right=right))
    assert_same(rt.bucketize(4, rs[0], right=right), torch.bucketize(4, ts[0], right=right))


def test_searchsorted_with_sorter_nan_and_mixed_dtypes():
    r, t = pair([3.0, 1.0, 2.0], "float32")
    rv, tv = pair([2.5, 0.0, 9.0], "float32")
    assert_same(rt.searchsorted(r, rv, sorter=r.argsort()), torch.searchsorted(t, tv, sorter=t.argsort()))
    r, t = pair([1.0, NAN], "float64")
    rv, tv = pair([0.5, 1.5, NAN], "float64")
    assert_same(rt.searchsorted(r, rv), torch.searchsorted(t, tv))
    assert_same(rt.searchsorted(rt.tensor([1, 2, 3]), rt.tensor([1.5, 2.0])),
                torch.searchsorted(torch.tensor([1, 2, 3]), torch.tensor([1.5, 2.0])))


def test_searchsorted_errors():
    seq = rt.tensor([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ValueError, match="side and right can't be set to opposites"):
        rt.searchsorted(seq[0], rt.tensor([1.0]), side="left", right=True)
    with pytest.raises(ValueError, match="side can only be 'left' or 'right'"):
        rt.searchsorted(seq[0], rt.tensor([1.0]), side="middle")
    with pytest.raises(RuntimeError, match=r"leading dimensions.*\[2, 2\].*\[3, 1\]"):
        rt.searchsorted(seq, rt.tensor([[1.0], [2.0], [3.0]]))
    with pytest.raises(RuntimeError, match="sorter .* must have the sorted sequence's shape"):
        rt.searchsorted(seq[0], rt.tensor([1.0]), sorter=rt.tensor([0, 1, 2]))
    with pytest.raises(IndexError, match="sorter index 5 is out of range"):
        rt.searchsorted(seq[0], rt.tensor([1.0]), sorter=rt.tensor([0, 5]))
    with pytest.raises(RuntimeError, match="boundaries must be 1-D"):
        rt.bucketize(rt.tensor([1.0]), seq)


# ---- nonzero, argwhere, masked_select, take, take_along_dim ----------------------------------

@pytest.mark.parametrize("dtype", DTYPES + ("bool",))
def test_nonzero_and_argwhere_match_torch(dtype):
    rng = np.random.default_rng(6)
    for shape in ((7,), (3, 4), (2, 3, 2), ()):
        r, t = pair(rng.integers(0, 2, size=shape), dtype)
        assert_same(rt.nonzero(r), torch.nonzero(t))
        assert_all_same(r.nonzero(as_tuple=True), t.nonzero(as_tuple=True), f"as_tuple {shape}")
        assert_same(r.argwhere(), torch.argwhere(t))
    r, t = pair([0.0, NAN, -0.0, 1.0], "float32")
    assert_same(r.nonzero(), t.nonzero())


def test_masked_select_broadcasts_and_passes_gradients():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 1, 4))
    m = rng.standard_normal((2, 4)) > 0
    rx, tx = rt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    rm, tm = rt.tensor(m), torch.tensor(m)
    r_out, t_out = rt.masked_select(rx, rm), torch.masked_select(tx, tm)
    assert_same(r_out, t_out)
    w = rng.standard_normal(tuple(t_out.shape))
    (r_out * rt.tensor(w)).sum().backward()
    (t_out * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(rx.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    assert r_out.grad_fn.name() == "MaskedSelectBackward0"
    finite_difference_check(lambda v: rt.masked_select(v, rm), x, rng)
    with pytest.raises(RuntimeError, match="expected a bool mask, got float32"):
        rt.masked_select(rt.ones(3), rt.ones(3))


def test_take_wraps_negative_indices_and_passes_gradients():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 4))
    idx = np.array([[0, -1, 5], [11, -12, 5]])
    rx, tx = rt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    r_out, t_out = rt.take(rx, rt.tensor(idx)), torch.take(tx, torch.tensor(idx))
    assert_same(r_out, t_out)
    r_out.sum().backward()
    t_out.sum().backward()
    np.testing.assert_allclose(rx.grad.numpy(), tx.grad.numpy())  # index 5 picked twice: summed
    finite_difference_check(lambda v: v.take(rt.tensor(idx)), x, rng)
    with pytest.raises(IndexError, match=r"take: index 12 is out of range for a tensor of 12 elements.*-12\.\.11"):
        rt.take(rt.tensor(x), rt.tensor([0, 12]))
    with pytest.raises(RuntimeError, match="expected an index of dtype int64, got float32"):
        rt.take(rt.tensor(x), rt.tensor([0.0]))


def test_take_along_dim_matches_torch_with_broadcasting():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((3, 4))
    for idx, dim in ((np.array([[0], [2], [3]]), 1), (np.array([[0, 2, 1, 1]]), 0), (np.array([[2, 1]]), None),
                     (np.argsort(x, axis=1), 1), (np.array([[1]]), 0)):
        rx, tx = rt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        r_out = rt.take_along_dim(rx, rt.tensor(idx), dim)
        t_out = torch.take_along_dim(tx, torch.tensor(idx), dim)
        assert_same(r_out, t_out)
        r_out.sum().backward()
        t_out.sum().backward()
        np.testing.assert_allclose(rx.grad.numpy(), tx.grad.numpy())
    with pytest.raises(RuntimeError, match="same number of dimensions.*2 for input.*1 for indices"):
        rt.take_along_dim(rt.tensor(x), rt.tensor([0]), 1)


# ---- cumsum, cumprod, cummax, cummin, logcumsumexp --------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES + ("bool",))
@pytest.mark.parametrize("dim", (0, 1, -1))
def test_cumsum_cumprod_dtypes_match_torch(dtype, dim):
    rng = np.random.default_rng(10)
    r, t = pair(rng.integers(0, 3, size=(3, 5)), dtype)
    assert_same(rt.cumsum(r, dim), torch.cumsum(t, dim))
    assert_same(r.cumprod(dim), t.cumprod(dim))
    assert_same(rt.cumsum(r, dim, dtype=rt.float64), torch.cumsum(t, dim, dtype=torch.float64))
    assert_same(r.cumprod(dim, dtype=rt.int32), t.cumprod(dim, dtype=torch.int32))


@pytest.mark.parametrize("dtype", DTYPES + ("bool",))
def test_cummax_cummin_match_torch_ties_take_the_later_index(dtype):
    rng = np.random.default_rng(12)
    r, t = pair(rng.integers(0, 3, size=(4, 6)), dtype)
    for dim in (0, 1):
        assert_all_same(tuple(rt.cummax(r, dim)), tuple(torch.cummax(t, dim)), f"cummax {dim}")
        assert_all_same(tuple(r.cummin(dim)), tuple(t.cummin(dim)), f"cummin {dim}")


def test_scans_with_nan_and_infinities():
    r, t = pair([1.0, 3.0, 3.0, NAN, 2.0, NAN, -np.inf, np.inf], "float64")
    assert_all_same(tuple(r.cummax(0)), tuple(t.cummax(0)))
    assert_all_same(tuple(r.cummin(0)), tuple(t.cummin(0)))
    assert_same(r.cumsum(0), t.cumsum(0))
    for x in ([-np.inf, -np.inf, 0.0], [np.inf, 1.0, np.inf], [1.0, NAN, 2.0], [-1e300, 1e300, 700.0]):
        r, t = pair(x, "float64")
        assert_same(r.logcumsumexp(0), t.logcumsumexp(0))


@pytest.mark.parametrize("op", ("cumsum", "cumsum_dtype", "cumprod", "cummax", "cummin", "logcumsumexp"))
def test_scan_gradients_match_torch_and_finite_differences(op):
    f = {"cumsum": lambda m, x: m.cumsum(x, 1), "cumsum_dtype": lambda m, x: x.float().cumsum(0, dtype=m.float64),
         "cumprod": lambda m, x: m.cumprod(x, 1), "cummax": lambda m, x: m.cummax(x, 0).values,
         "cummin": lambda m, x: x.cummin(1)[0], "logcumsumexp": lambda m, x: m.logcumsumexp(x, 1)}[op]
    rng = np.random.default_rng(13)
    x = rng.standard_normal((3, 5))
    rx, tx = rt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    w = rng.standard_normal((3, 5))
    (f(rt, rx) * rt.tensor(w)).sum().backward()
    (f(torch, tx) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(rx.grad.numpy(), tx.grad.numpy(), rtol=1e-6 if op == "cumsum_dtype" else 1e-10)
    assert f(rt, rx).grad_fn.name() == type(f(torch, tx).grad_fn).__name__
    if op != "cumsum_dtype":
        finite_difference_check(lambda v: f(rt, v), x, rng)


@pytest.mark.parametrize("x", ([2.0, 0.0, 3.0, 0.0, 4.0], [0.0, 2.0, 3.0], [2.0, 3.0, 0.0], [0.0, 0.0], [1.5, -2.0, 0.5]))
def test_cumprod_gradient_is_exact_with_zeros(x):
    g = np.arange(1.0, len(x) + 1)
    rx, tx = rt.tensor(x, requires_grad=True), torch.tensor(x, dtype=torch.float64, requires_grad=True)
    rt.cumprod(rx.double(), 0).backward(rt.tensor(g))
    torch.cumprod(tx, 0).backward(torch.tensor(g))
    np.testing.assert_allclose(rx.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    rng = np.random.default_rng(14)
    finite_difference_check(lambda v: rt.cumprod(v, 0), np.array([[1.5, 0.0, -2.0, 0.7]]).reshape(4), rng)


def test_logcumsumexp_refuses_integers():
    with pytest.raises(RuntimeError, match="logcumsumexp: expected a floating point input, got int64"):
        rt.logcumsumexp(rt.tensor([1, 2]), 0)


# ---- errors -------------------------------------------------------------------------------------

@pytest.mark.parametrize("call", (
    lambda x: rt.sort(x, 2), lambda x: x.argsort(-3), lambda x: rt.topk(x, 1, 5), lambda x: x.kthvalue(1, 2),
    lambda x: rt.cumsum(x, 2), lambda x: x.cumprod(-3), lambda x: rt.cummax(x, 2), lambda x: x.cummin(9),
    lambda x: rt.logcumsumexp(x, 2), lambda x: rt.unique(x, dim=2), lambda x: rt.unique_consecutive(x, dim=-3),
    lambda x: rt.take_along_dim(x, rt.zeros(1, 1, dtype=rt.int64), 2)))
def test_a_bad_dim_names_the_dim_and_the_range(call):
    with pytest.raises(IndexError, match=r"dimension -?\d is out of range for a 2-d tensor \(expected a value in \[-2, 1\]\)"):
        call(rt.zeros(2, 3))


def test_k_out_of_range_is_a_clear_error():
    x = rt.zeros(2, 3)
    with pytest.raises(IndexError, match=r"topk: k = 4 is out of range for dimension -1 of size 3.*\[0, 3\]"):
        rt.topk(x, 4)
    with pytest.raises(IndexError, match=r"kthvalue: k = 0 is out of range for dimension 0 of size 2.*\[1, 2\]"):
        x.kthvalue(0, 0)
