"""Autograd API: backward/grad, hooks, retain_grad, grad_fn, anomaly mode, grad setting."""
import numpy as np
import pytest

import rustytorch as rt


def test_backward_accumulates_into_leaves():
    w = rt.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    assert w.grad.tolist() == [2, 4]
    (w * 3).sum().backward()
    assert w.grad.tolist() == [5, 7]
    g = w.grad
    assert w.grad is g  # same Python object while alive


def test_backward_with_gradient_and_retain_graph():
    x = rt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y.backward(rt.tensor([1.0, 0.0, 1.0]), retain_graph=True)
    y.backward(rt.tensor([1.0, 1.0, 1.0]))
    assert x.grad.tolist() == [4, 2, 4]


def test_autograd_grad_leaves_grad_untouched():
    x = rt.tensor([1.0, 2.0], requires_grad=True)
    y = rt.tensor([3.0], requires_grad=True)
    z = (x * x).sum() * y
    gx, gy = rt.autograd.grad(z, (x, y))
    assert gx.tolist() == [6, 12] and gy.tolist() == [5]
    assert x.grad is None and y.grad is None
    u = rt.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError):
        rt.autograd.grad((x * 2).sum(), [u])
    (gu,) = rt.autograd.grad((x * 2).sum(), [u], allow_unused=True)
    assert gu is None
    rt.autograd.backward([(x * 2).sum()])
    assert x.grad.tolist() == [2, 2]


def test_is_leaf_grad_fn_and_detach():
    x = rt.ones(2, requires_grad=True)
    y = x * 2 + 1
    assert x.is_leaf and not y.is_leaf and x.grad_fn is None
    assert y.grad_fn.name() == "AddBackward0"
    nf = y.grad_fn.next_functions
    assert nf[0][0].name() == "MulBackward0"
    acc = nf[0][0].next_functions[0][0]
    assert acc.name() == "AccumulateGrad" and acc.variable is x
    d = y.detach()
    assert not d.requires_grad and d._shares_storage(y)
    assert rt.ones(2).requires_grad_().requires_grad


def test_retain_grad_and_hooks():
    x = rt.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    calls = []
    h1 = y.register_hook(lambda g: calls.append(("y", g.tolist())))
    h2 = x.register_hook(lambda g: g * 10)
    (y * y).sum().backward()
    assert y.grad.tolist() == [6, 12]
    assert calls == [("y", [6.0, 12.0])]
    assert x.grad.tolist() == [180, 360]
    h1.remove()
    h2.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3, 3] and len(calls) == 1


def test_hook_exception_propagates():
    x = rt.ones(2, requires_grad=True)

    def bad(g):
        raise ValueError("hook failed on purpose")
    x.register_hook(bad)
    with pytest.raises(ValueError, match="on purpose"):
        (x * 2).sum().backward()


def test_set_grad_and_validation():
    x = rt.ones(2, requires_grad=True)
    x.grad = rt.tensor([1.0, 2.0])
    assert x.grad.tolist() == [1, 2]
    with pytest.raises(ValueError, match="shape"):
        x.grad = rt.ones(3)
    with pytest.raises(TypeError):
        x.grad = rt.ones(2, dtype=rt.float64)


def test_requires_grad_setter_and_no_grad():
    x = rt.ones(2)
    x.requires_grad = True
    assert x.requires_grad
    with rt.no_grad():
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad


def test_detect_anomaly_raises_on_nan():
    x = rt.tensor([-1.0, 4.0], requires_grad=True)
    with rt.autograd.detect_anomaly():
        y = x.sqrt()
        with pytest.raises(RuntimeError):
            y.sum().backward()
    rt.autograd.set_detect_anomaly(False)
    assert not rt.autograd.is_anomaly_enabled()


def test_data_assignment_keeps_identity():
    p = rt.ones(3, requires_grad=True)
    p.data = rt.zeros(3)
    assert p.requires_grad and p.tolist() == [0, 0, 0]
    p.data.add_(1)
    assert p.tolist() == [1, 1, 1]


def test_no_grad_optimizer_style_update():
    w = rt.tensor(np.array([1.0, 2.0]), requires_grad=True)
    (w * w).sum().backward()
    with rt.no_grad():
        w -= 0.1 * w.grad
    assert w.tolist() == pytest.approx([0.8, 1.6])
    assert w.is_leaf and w.requires_grad


def test_node_hooks_see_and_replace_gradients_as_torchs():
    torch = pytest.importorskip("torch")
    results = {}
    for lib in (rt, torch):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = x * w
        seen = []

        def hook(grad_inputs, grad_outputs):
            seen.append(([g.tolist() for g in grad_inputs], [g.tolist() for g in grad_outputs]))
            return (grad_inputs[0] * 10, grad_inputs[1])

        handle = y.grad_fn.register_hook(hook)
        y.sum().backward(retain_graph=True)
        handle.remove()
        y.sum().backward()
        results[lib.__name__] = (seen, x.grad.tolist(), w.grad.tolist())
    assert results["rustytorch"] == results["torch"]


def test_node_prehooks_replace_incoming_gradients_and_errors_name_the_node():
    x = rt.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    with y.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] * 0,)):
        y.sum().backward(retain_graph=True)
    assert x.grad.tolist() == [0.0, 0.0]
    y.sum().backward(retain_graph=True)  # the handle's with-block removed the hook
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0]), rtol=1e-6)
    y.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0], grad_outputs[0]))
    with pytest.raises(ValueError, match="a prehook of ExpBackward0 returned 2 gradients; expected 1"):
        y.sum().backward(retain_graph=True)


def test_split_and_chunk_pieces_share_one_backward_node_named_as_torch_names_it():
    torch = pytest.importorskip("torch")
    data = np.random.default_rng(5).standard_normal((4, 9))
    results = {}
    for lib in (rt, torch):
        x = lib.tensor(data, requires_grad=True)
        a, b, c = x.split(3, 1)
        d, e = lib.split(x, [4, 5], 1)
        f = x.chunk(2, 0)[1]
        assert a.grad_fn is not None
        names = (a.grad_fn.name(), d.grad_fn.name(), f.grad_fn.name())
        same_node = c.grad_fn is a.grad_fn if lib is rt else True  # torch returns a new wrapper per access
        (a * 2).sum().backward(retain_graph=True)  # b gets no gradient
        (c * c).sum().backward()
        (e.sum() + f.sum() * 3).backward()
        results[lib.__name__] = (names, same_node, x.grad.numpy() if lib is rt else x.grad.detach().numpy())
    ours, theirs = results["rustytorch"], results["torch"]
    assert ours[0] == theirs[0] == ("SplitBackward0", "SplitWithSizesBackward0", "SplitBackward0")
    assert ours[1]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=0, atol=1e-12)
