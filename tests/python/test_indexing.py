"""__getitem__ / __setitem__ against torch: basic (views), advanced (gather) and masks, with
assignment and autograd through indexing."""
import numpy as np
import pytest

import rustytorch as rt

torch = pytest.importorskip("torch")

GET = [
    lambda x: x[1],
    lambda x: x[-1],
    lambda x: x[1:3],
    lambda x: x[::2],
    lambda x: x[:, 1],
    lambda x: x[..., 0],
    lambda x: x[None],
    lambda x: x[:, None, 1:],
    lambda x: x[1, ..., None],
    lambda x: x[1:, -2:, ::3],
    lambda x: x[5:100],
    lambda x: x[-100:2],
    lambda x: x[[0, 2]],
    lambda x: x[[[0, 1], [2, 1]]],
    lambda x: x[:, [0, -1, 1]],
    lambda x: x[[0, 1], [2, 1]],
    lambda x: x[[0, 1], :, [2, 0]],
    lambda x: x[:, [1, 2], [0, 4]],
    lambda x: x[[[0], [3]], [1, 2]],
    lambda x: x[0, :, [1, 2]],
    lambda x: x[x > 0],
    lambda x: x[x[:, 0, 0] > 0],
    lambda x: x[:, x[0, :, 0] > 0],
    lambda x: x[..., [True, False, True, False, True]],
    lambda x: x[1:3, [0, 2]],
]


def _pair():
    a = np.random.default_rng(0).standard_normal((4, 3, 5)).astype(np.float32)
    return rt.tensor(a), torch.tensor(a)


@pytest.mark.parametrize("i", range(len(GET)))
def test_getitem_matches_torch(i):
    r, t = _pair()
    np.testing.assert_array_equal(GET[i](r).numpy(), GET[i](t).numpy())


def test_tensor_indices():
    r, t = _pair()
    ri, ti = rt.tensor([3, 0, 0]), torch.tensor([3, 0, 0])
    np.testing.assert_array_equal(r[ri].numpy(), t[ti].numpy())
    np.testing.assert_array_equal(r[:, rt.tensor([[0, 1]])].numpy(), t[:, torch.tensor([[0, 1]])].numpy())
    np.testing.assert_array_equal(r[rt.tensor(2)].numpy(), t[torch.tensor(2)].numpy())


def test_basic_indexing_returns_views():
    x = rt.zeros(3, 4)
    v = x[1, 1:3]
    v.fill_(5)
    assert x.tolist()[1] == [0, 5, 5, 0]


SET = [
    (lambda x: (1,), 7.0),
    (lambda x: (slice(None), 2), -1.0),
    (lambda x: (Ellipsis, slice(0, 2)), "row"),
    (lambda x: ([0, 2],), 3.0),
    (lambda x: ([0, 1], [2, 0]), "pair"),
    (lambda x: (x > 0,), 0.0),
    (lambda x: (x > 0,), "masked"),
    (lambda x: (slice(None), [1, 3]), "col"),
]


@pytest.mark.parametrize("i", range(len(SET)))
def test_setitem_matches_torch(i):
    idx_fn, value = SET[i]
    a = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    r, t = rt.tensor(a), torch.tensor(a)
    ri, ti = idx_fn(r), idx_fn(t)
    if value == "row":
        rv, tv = rt.tensor([10.0, 20.0]), torch.tensor([10.0, 20.0])
    elif value == "pair":
        rv, tv = rt.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])
    elif value == "masked":
        n = int((t > 0).sum())
        rv, tv = rt.arange(float(n)), torch.arange(float(n))
    elif value == "col":
        rv, tv = rt.tensor([[1.0], [2.0], [3.0]]), torch.tensor([[1.0], [2.0], [3.0]])
    else:
        rv, tv = value, value
    r[ri if len(ri) > 1 else ri[0]] = rv
    t[ti if len(ti) > 1 else ti[0]] = tv
    np.testing.assert_array_equal(r.numpy(), t.numpy())


def test_setitem_bumps_version_and_keeps_identity():
    x = rt.zeros(3)
    v0 = x._version
    x[[0, 2]] = 1
    assert x._version > v0 and x.tolist() == [1, 0, 1]


def test_autograd_through_indexing():
    a = np.random.default_rng(2).standard_normal((4, 5))
    r = rt.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    for fn in [lambda x: x[1:3, ::2].sum() + (x[[0, 0, 3]] ** 2).sum() + x[x > 0.5].sum() + x[:, [1, 2], None].prod()]:
        fn(r).backward()
        fn(t).backward()
    np.testing.assert_allclose(r.grad.numpy(), t.grad.numpy(), rtol=1e-10)


def test_index_errors():
    x = rt.zeros(3, 4)
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        x[3]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="out of bounds"):
        x[[0, 5]]
    with pytest.raises(IndexError, match="tensors used as indices must be long"):
        x[rt.tensor([0.5])]
    with pytest.raises(IndexError, match="shape of the mask"):
        x[rt.tensor([True, False])]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1]
    with pytest.raises(RuntimeError, match="shape mismatch"):
        x[[0, 1]] = rt.ones(3)
