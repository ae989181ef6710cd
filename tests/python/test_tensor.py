"""API semantics of rt.Tensor, factories, dtypes, devices, grad mode and Parameter support."""
import copy
import pickle
import re

import numpy as np
import pytest

import rustytorch as rt


def test_dtypes_are_objects_with_torch_properties():
    assert repr(rt.float32) == "rustytorch.float32"
    assert rt.float32.is_floating_point and not rt.int64.is_floating_point
    assert rt.float64.itemsize == 8 and rt.bfloat16.itemsize == 2 and rt.bool.itemsize == 1
    assert rt.float is rt.float32 and rt.double is rt.float64 and rt.long is rt.int64 and rt.half is rt.float16
    assert rt.zeros(2).dtype is rt.float32
    assert rt.zeros(2, dtype=rt.int32).dtype is rt.int32


def test_factories_accept_varargs_and_tuples():
    assert rt.zeros(2, 3).shape == (2, 3)
    assert rt.ones((2, 3)).shape == (2, 3)
    assert rt.empty([4]).shape == (4,)
    assert rt.full((2, 2), 7).dtype is rt.int64
    assert rt.full((2, 2), 7.0).tolist() == [[7.0, 7.0], [7.0, 7.0]]
    assert rt.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert rt.arange(1, 2, 0.25).tolist() == [1.0, 1.25, 1.5, 1.75]
    assert rt.arange(5).dtype is rt.int64 and rt.arange(5.0).dtype is rt.float32
    assert rt.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert rt.eye(3).tolist() == [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    assert rt.eye(2, 3).shape == (2, 3)
    assert rt.zeros_like(rt.ones(2, 3, dtype=rt.float64)).dtype is rt.float64
    assert rt.ones_like(rt.ones(2), dtype=rt.int64).dtype is rt.int64
    assert rt.full_like(rt.ones(2), 3.5).tolist() == [3.5, 3.5]
    r = rt.randint(0, 10, (100,))
    assert r.dtype is rt.int64 and 0 <= r.min().item() and r.max().item() < 10
    assert rt.randint(5, (3,)).shape == (3,)
    assert sorted(rt.randperm(6).tolist()) == list(range(6))
    assert rt.rand(3, 4).shape == (3, 4) and rt.randn((2,)).shape == (2,)
    assert rt.zeros(2, requires_grad=True).requires_grad


def test_multinomial_draws_reproducibly_from_the_weights():
    w = rt.tensor([[0.0, 1.0, 3.0, 0.0], [2.0, 0.0, 0.0, 2.0]])
    rt.manual_seed(5)
    a = rt.multinomial(w, 200, replacement=True)
    rt.manual_seed(5)
    assert rt.equal(rt.multinomial(w, 200, replacement=True), a)
    assert a.shape == (2, 200) and a.dtype is rt.int64
    assert set(a[0].tolist()) == {1, 2} and set(a[1].tolist()) == {0, 3}  # zero weights are never drawn
    assert 0.6 < (a[0] == 2).double().mean().item() < 0.9                  # weight 3 of 4
    once = rt.multinomial(rt.tensor([1.0, 1.0, 1.0, 5.0]), 4)
    assert sorted(once.tolist()) == [0, 1, 2, 3]                            # without replacement: each once
    with pytest.raises(RuntimeError, match="without replacement"):
        rt.multinomial(rt.tensor([1.0, 1.0]), 3)
    with pytest.raises(RuntimeError, match="element < 0"):
        rt.multinomial(rt.tensor([1.0, -1.0]), 1)


def test_size_is_a_tuple():
    s = rt.zeros(2, 3).shape
    assert isinstance(s, tuple) and isinstance(s, rt.Size)
    assert repr(s) == "rustytorch.Size([2, 3])"
    assert s.numel() == 6 and rt.zeros(2, 3).size() == s and rt.zeros(2, 3).size(-1) == 3


def test_tensor_dtype_inference_like_torch():
    assert rt.tensor([1, 2]).dtype is rt.int64
    assert rt.tensor([1, 2.5]).dtype is rt.float32
    assert rt.tensor([True, False]).dtype is rt.bool
    assert rt.tensor(3.0).dim() == 0
    assert rt.tensor([[1, 2], [3, 4]]).shape == (2, 2)
    assert rt.tensor(np.zeros(3, dtype=np.float64)).dtype is rt.float64
    assert rt.tensor([], dtype=rt.float32).shape == (0,)
    assert rt.tensor([rt.tensor(1.0), rt.tensor(2.0)]).tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="expected sequence of length 2"):
        rt.tensor([[1, 2], [3]])


def test_item_tolist_and_python_conversions():
    t = rt.tensor([[1.5, 2.0], [3.0, 4.0]])
    assert t.tolist() == [[1.5, 2.0], [3.0, 4.0]]
    assert t[0, 0].item() == 1.5 and isinstance(rt.tensor(3).item(), int)
    assert float(rt.tensor([2.5])) == 2.5 and int(rt.tensor(7)) == 7
    assert bool(rt.tensor(1)) and not bool(rt.tensor(0.0))
    assert [1, 2, 3][rt.tensor(1)] == 2
    assert len(t) == 2
    assert [r.tolist() for r in t] == [[1.5, 2.0], [3.0, 4.0]]
    with pytest.raises(RuntimeError, match="ambiguous"):  # as torch
        bool(t)
    assert f"{rt.tensor(1.23456):.2f}" == "1.23"


def test_operators_reflected_and_inplace():
    a = rt.tensor([1.0, 2.0, 3.0])
    assert (a + 1).tolist() == [2, 3, 4]
    assert (1 + a).tolist() == [2, 3, 4]
    assert (10 - a).tolist() == [9, 8, 7]
    assert (6 / a).tolist() == [6, 3, 2]
    assert (2 ** a).tolist() == [2, 4, 8]
    assert (a ** 2).tolist() == [1, 4, 9]
    assert (-a).tolist() == [-1, -2, -3]
    assert (a @ a).item() == 14
    b = a
    b += 1
    assert b is a and a.tolist() == [2, 3, 4]
    a *= 2
    a -= 1
    a /= 3
    assert b is a and a.tolist() == pytest.approx([1, 5 / 3, 7 / 3])
    i = rt.tensor([1, 2])
    assert (i + 1).dtype is rt.int64 and (i * 2.5).dtype is rt.float32 and (i / 2).dtype is rt.float32
    assert (a == a).all().item() and (a == None) is False  # noqa: E711
    assert a.add(a, alpha=2).tolist() == pytest.approx([3, 5, 7])


def test_inplace_optimizer_ops():
    p = rt.ones(3)
    g = rt.tensor([1.0, 2.0, 3.0])
    assert p.add_(g, alpha=-0.5) is p and p.tolist() == [0.5, 0.0, -0.5]
    p.mul_(2).sub_(1).div_(2)
    assert p.tolist() == [0.0, -0.5, -1.0]
    p.addcmul_(g, g, value=0.5).addcdiv_(g, g, value=2)
    assert p.tolist() == [2.5, 3.5, 5.5]
    p.lerp_(rt.zeros(3), 0.5)
    assert p.tolist() == [1.25, 1.75, 2.75]
    p.clamp_(max=2.0).sqrt_()
    assert p.tolist() == pytest.approx([1.25 ** 0.5, 1.75 ** 0.5, 2 ** 0.5])
    p.copy_(rt.tensor([4.0])).zero_().fill_(3)
    assert p.tolist() == [3, 3, 3]
    rt.manual_seed(0)
    u = rt.empty(1000).uniform_(-2, 2)
    assert -2 <= u.min().item() and u.max().item() < 2
    n = rt.empty(5000).normal_(1.0, 0.1)
    assert abs(n.mean().item() - 1.0) < 0.01 and abs(n.std().item() - 0.1) < 0.01
    assert rt.maximum(g, rt.tensor(2.0)).tolist() == [2, 2, 3]


def test_views_share_storage():
    x = rt.arange(12.0).view(3, 4)
    v = x.t()
    assert not v.is_contiguous() and v.shape == (4, 3)
    x[0, 0] = 100
    assert v[0, 0].item() == 100
    assert x.view(-1).shape == (12,) and x.reshape(2, 6).shape == (2, 6) and x.permute(1, 0).shape == (4, 3)
    assert x.unsqueeze(0).shape == (1, 3, 4) and x.unsqueeze(0).squeeze(0).shape == (3, 4)
    assert x.contiguous() is x
    with pytest.raises(RuntimeError):
        v.view(12)


def test_reductions_signatures():
    x = rt.tensor([[1.0, 5.0], [3.0, 2.0]])
    r = x.max(dim=1)
    assert r.values.tolist() == [5, 3] and r.indices.tolist() == [1, 0]
    values, indices = x.min(0)
    assert values.tolist() == [1, 2] and indices.tolist() == [0, 1]
    assert x.sum(dim=0, keepdim=True).shape == (1, 2)
    assert x.sum(dtype=rt.float64).dtype is rt.float64
    assert x.argmax().item() == 1 and x.mean().item() == 2.75


def test_repr_like_torch():
    assert repr(rt.tensor([[1.0, 2.0]])) == "tensor([[1., 2.]])"
    assert repr(rt.tensor([1.5, 2.25])) == "tensor([1.5000, 2.2500])"
    assert repr(rt.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(rt.tensor([1.0], dtype=rt.float64)) == "tensor([1.], dtype=rustytorch.float64)"
    assert repr(rt.tensor([[1.0, 2.0]], requires_grad=True)) == "tensor([[1., 2.]], requires_grad=True)"
    assert repr(rt.tensor([1.0], requires_grad=True) * 2) == "tensor([2.], grad_fn=<MulBackward0>)"
    assert repr(rt.tensor(3.5)) == "tensor(3.5000)"
    assert repr(rt.tensor([True, False])) == "tensor([ True, False])"
    assert repr(rt.zeros(0, 3)) == "tensor([], size=(0, 3))"
    assert repr(rt.tensor([1e-5, 1.0])) == "tensor([1.0000e-05, 1.0000e+00])"
    assert "..." in repr(rt.zeros(2000))


def test_repr_matches_torch_for_random_shapes(torch):
    rng = np.random.default_rng(0)
    for shape in [(5,), (3, 4), (2, 3, 4), (30, 40), (1200,), (2, 600)]:
        a = (rng.standard_normal(shape) * 10).astype(np.float32)
        assert repr(rt.tensor(a)) == repr(torch.tensor(a))
        ints = rng.integers(-50, 50, size=shape)
        assert repr(rt.tensor(ints)) == repr(torch.tensor(ints))


PRINT_CASES = [[1.23456789, -2.5, 3.0], [1e-5, 1.0, 123456.0], [1.0, 2.0], [0.0, 0.0], [float("nan"), 1.5],
               np.arange(12.0).reshape(3, 4), np.linspace(-1, 1, 2000).reshape(40, 50),
               np.random.default_rng(0).normal(size=(5, 30))]


@pytest.mark.parametrize("options", [dict(precision=2), dict(precision=8), dict(sci_mode=True), dict(sci_mode=False),
                                     dict(profile="short"), dict(profile="full", linewidth=120),
                                     dict(threshold=5, edgeitems=1), dict(linewidth=40, precision=6)],
                         ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_set_printoptions_matches_torch(torch, options):
    try:
        rt.set_printoptions(**options)
        torch.set_printoptions(**options)
        for values in PRINT_CASES:
            a = np.asarray(values, dtype=np.float32)
            assert repr(rt.tensor(a)) == repr(torch.tensor(a)), (options, values)
        assert repr(rt.tensor([3, 40000])) == repr(torch.tensor([3, 40000]))
    finally:
        rt.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")
    assert repr(rt.tensor([1.5, 2.25])) == "tensor([1.5000, 2.2500])"


def test_set_printoptions_keeps_unnamed_options_but_resets_sci_mode():
    try:
        rt.set_printoptions(precision=2, sci_mode=True)
        assert repr(rt.tensor([1.5])) == "tensor([1.50e+00])"
        rt.set_printoptions(linewidth=100)            # precision stays, sci_mode back to automatic
        assert repr(rt.tensor([1.5])) == "tensor([1.50])"
    finally:
        rt.set_printoptions(profile="default")


def test_set_printoptions_refuses_an_unknown_profile():
    with pytest.raises(ValueError, match="profile='long'.*'default', 'short', 'full'"):
        rt.set_printoptions(profile="long")
    assert repr(rt.tensor([1.5])) == "tensor([1.5000])"


def test_device():
    t = rt.zeros(2)
    assert t.device == rt.device("cpu") and repr(t.device) == "device(type='cpu')" and t.device.type == "cpu"
    assert t.to("cpu") is t and t.cpu() is t
    if not rt.cuda.is_available():
        with pytest.raises(RuntimeError, match=re.escape(rt.cuda.unavailable_reason())):
            rt.zeros(2, device="cuda")


def test_to_conversions():
    t = rt.tensor([1.7, -2.2])
    assert t.to(rt.int64).tolist() == [1, -2]
    assert t.to(rt.float64).dtype is rt.float64 and t.double().dtype is rt.float64
    assert t.to(t) is t and t.to(rt.float32) is t and t.to(rt.float32, copy=True) is not t
    assert t.long().dtype is rt.int64 and t.half().dtype is rt.float16 and t.bool().tolist() == [True, True]
    assert t.type_as(rt.zeros(1, dtype=rt.float64)).dtype is rt.float64


def test_grad_mode_context_and_decorator():
    w = rt.ones(2, requires_grad=True)
    with rt.no_grad():
        assert not rt.is_grad_enabled()
        y = w * 2
        with rt.enable_grad():
            assert (w * 2).requires_grad
    assert not y.requires_grad and rt.is_grad_enabled()

    @rt.no_grad()
    def f(x):
        return x * 2
    assert not f(w).requires_grad and rt.is_grad_enabled()
    with rt.set_grad_enabled(False):
        assert not rt.is_grad_enabled()
    assert rt.is_grad_enabled()


def test_manual_seed_reproducible_and_generators():
    rt.manual_seed(3)
    a = rt.randn(5)
    rt.manual_seed(3)
    assert rt.randn(5).tolist() == a.tolist()
    g1, g2 = rt.Generator().manual_seed(7), rt.Generator().manual_seed(7)
    assert rt.randperm(10, generator=g1).tolist() == rt.randperm(10, generator=g2).tolist()
    rt.manual_seed(3)
    rt.randn(3, generator=g1)
    assert rt.randn(5).tolist() == a.tolist()  # the default stream was not advanced by g1


def test_set_num_threads_like_torch(torch):
    before = rt.get_num_threads()
    try:
        rt.set_num_threads(1)
        assert rt.get_num_threads() == 1
        rt.set_num_threads(before)
        assert rt.get_num_threads() == before
        for lib in (rt, torch):
            with pytest.raises(RuntimeError, match="set_num_threads expects a positive integer"):
                lib.set_num_threads(0)
    finally:
        rt.set_num_threads(before)


def test_parameter_style_subclass_keeps_identity():
    class Param(rt.Tensor):
        def __new__(cls, data, requires_grad=True):
            return rt.Tensor._make_subclass(cls, data, requires_grad)

    data = rt.ones(3)
    p = Param(data)
    assert type(p) is Param and isinstance(p, rt.Tensor) and p.requires_grad and p.is_leaf
    assert p._shares_storage(data)
    p.custom = 5
    seen = []
    (p * 2).sum().backward()
    assert p.grad is p.grad and p.grad.tolist() == [2, 2, 2]
    with rt.no_grad():
        q = p.add_(1)
    assert q is p and type(q) is Param and q.custom == 5
    h = p.register_hook(lambda g: seen.append(g) or None)
    (p * 3).sum().backward()
    h.remove()
    assert seen and seen[0].tolist() == [3, 3, 3]
    assert p.grad.tolist() == [5, 5, 5]
    p.grad = None
    assert p.grad is None


def test_pickle_and_deepcopy():
    t = rt.tensor([[1.0, 2.0]], requires_grad=True)
    u = pickle.loads(pickle.dumps(t))
    assert u.tolist() == t.tolist() and u.requires_grad and u.dtype is t.dtype
    d = copy.deepcopy(t)
    assert d.tolist() == t.tolist() and not d._shares_storage(t)


def test_tensor_constructor():
    assert rt.Tensor(2, 3).shape == (2, 3)
    assert rt.Tensor([1, 2]).dtype is rt.float32
    assert rt.Tensor().shape == (0,)
