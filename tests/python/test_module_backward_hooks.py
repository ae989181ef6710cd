"""Module backward hooks against PyTorch 1.13: register_full_backward_hook (call order over nested modules, grad_input
and grad_output for several inputs and outputs, non-tensor and non-differentiable arguments, unused outputs,
replacements, no input requiring grad, retain_graph, handles), the legacy register_backward_hook (the node's
gradients, torch's warnings, the error when mixing the two), and register_full_backward_pre_hook (torch 2.0's API,
not in 1.13: checked against the gradients torch gives for the replaced grad_output). The same code runs with
`lib` = torch and `lib` = rustytorch; the recorded calls must be equal."""
import warnings

import numpy as np
import pytest

import rustytorch as rt

torch = pytest.importorskip("torch")

LIBS = {"torch": torch, "rt": rt}


def arr(g):
    return None if g is None else np.array(g.detach().numpy(), copy=True)


def recorder(log, name):
    def hook(module, grad_input, grad_output):
        log.append((name, tuple(map(arr, grad_input)), tuple(map(arr, grad_output))))
    return hook


def same_log(a, b):
    assert [entry[0] for entry in a] == [entry[0] for entry in b], "hook call order"
    for (name, gi_a, go_a), (_, gi_b, go_b) in zip(a, b):
        for what, xs, ys in (("grad_input", gi_a, gi_b), ("grad_output", go_a, go_b)):
            assert len(xs) == len(ys), f"{name} {what} length"
            for i, (x, y) in enumerate(zip(xs, ys)):
                assert (x is None) == (y is None), f"{name} {what}[{i}]: {x} vs {y}"
                if x is not None:
                    np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12, err_msg=f"{name} {what}[{i}]")


def both(scenario):
    results = {}
    for key, lib in LIBS.items():
        results[key] = scenario(lib)
    return results["torch"], results["rt"]


def two_io_module(lib):
    class TwoInTwoOut(lib.nn.Module):
        def forward(self, a, b, k=3):
            return a * b, a + 1, k

    return TwoInTwoOut()


def vec(lib, values, requires_grad=False):
    return lib.tensor(values, dtype=lib.float64, requires_grad=requires_grad)


def linear(lib, n_in, n_out, seed):
    layer = lib.nn.Linear(n_in, n_out).double()
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(rng.standard_normal((n_out, n_in))))
        layer.bias.copy_(lib.tensor(rng.standard_normal(n_out)))
    return layer


def test_several_inputs_and_outputs_unused_output_and_non_differentiable_input():
    def scenario(lib):
        log = []
        m = two_io_module(lib)
        m.register_full_backward_hook(recorder(log, "first"))
        m.register_full_backward_hook(recorder(log, "second"))
        a, b = vec(lib, [1.0, 2.0], True), vec(lib, [3.0, 4.0])
        out1, out2, k = m(a, b)
        assert k == 3
        out1.sum().backward()  # out2 gets no gradient; b does not require grad
        m(a, 2.0)[0].sum().backward()  # a non-tensor input
        o1, o2, _ = m(a, vec(lib, [5.0, 6.0], True))
        (o1 * 3).sum().backward(retain_graph=True)
        (o1.sum() + o2.sum()).backward()
        return log, arr(a.grad)

    (tlog, tgrad), (rlog, rgrad) = both(scenario)
    same_log(tlog, rlog)
    np.testing.assert_allclose(rgrad, tgrad)


def test_nested_modules_call_order_and_values():
    def scenario(lib):
        log = []
        seq = lib.nn.Sequential(linear(lib, 3, 4, 0), lib.nn.Tanh(), linear(lib, 4, 2, 1))
        for i, child in enumerate(seq):
            child.register_full_backward_hook(recorder(log, f"child{i}"))
        seq.register_full_backward_hook(recorder(log, "seq"))
        x = lib.tensor(np.random.default_rng(2).standard_normal((5, 3)), requires_grad=True)
        seq(x).pow(2).sum().backward()
        first_input = lib.tensor(np.ones((2, 3)))  # no input requires grad: hook runs at the output, grad_input None
        seq(first_input).sum().backward()
        return log, arr(seq[0].weight.grad)

    (tlog, tw), (rlog, rw) = both(scenario)
    same_log(tlog, rlog)
    np.testing.assert_allclose(rw, tw, rtol=1e-12)


def test_replacement_grad_input_flows_to_the_inputs():
    def scenario(lib):
        log = []
        m = two_io_module(lib)
        m.register_full_backward_hook(lambda mod, gi, go: tuple(None if g is None else g * 10 for g in gi))
        m.register_full_backward_hook(recorder(log, "after"))
        a, b = vec(lib, [1.0, 2.0], True), vec(lib, [3.0, 4.0], True)
        o1, o2, _ = m(a, b)
        (o1.sum() + 2 * o2.sum()).backward()
        return log, arr(a.grad), arr(b.grad)

    t, r = both(scenario)
    same_log(t[0], r[0])
    np.testing.assert_allclose(r[1], t[1])
    np.testing.assert_allclose(r[2], t[2])


def test_retain_graph_calls_the_hook_each_backward_and_kwargs_are_not_grad_input():
    def scenario(lib):
        log = []

        class WithKw(lib.nn.Module):
            def forward(self, a, b=None):
                return lib.tanh(a) * b

        m = WithKw()
        m.register_full_backward_hook(recorder(log, "kw"))
        a, b = vec(lib, [0.5, -1.0], True), vec(lib, [3.0, 4.0], True)
        y = m(a, b=b)
        y.sum().backward(retain_graph=True)
        (y * 2).sum().backward()
        return log, arr(b.grad)

    t, r = both(scenario)
    same_log(t[0], r[0])
    np.testing.assert_allclose(r[1], t[1])


def test_module_sees_views_and_identity_module():
    def scenario(lib):
        log = []
        seen = []

        class Id(lib.nn.Module):
            def forward(self, x):
                seen.append(x)
                return x

        m = Id()
        m.register_full_backward_hook(recorder(log, "id"))
        x = vec(lib, [1.0, 2.0], True)
        y = m(x)
        (y * y).sum().backward()
        return log, (seen[0] is x, y is x, y.grad_fn.name()), arr(x.grad)

    t, r = both(scenario)
    same_log(t[0], r[0])
    assert r[1] == (False, False, "BackwardHookFunctionBackward") and t[1][:2] == r[1][:2]
    np.testing.assert_allclose(r[2], t[2])


def test_no_hook_without_grad_or_after_remove():
    for lib in LIBS.values():
        log = []
        m = lib.nn.Tanh()
        handle = m.register_full_backward_hook(recorder(log, "tanh"))
        with lib.no_grad():
            y = m(vec(lib, [1.0], True))
        assert y.grad_fn is None
        m(vec(lib, [1.0])).sum()  # nothing requires grad: nothing recorded, nothing to run
        handle.remove()
        m(vec(lib, [1.0], True)).sum().backward()
        assert log == []
        with m.register_full_backward_hook(recorder(log, "ctx")):
            m(vec(lib, [1.0], True)).sum().backward()
        m(vec(lib, [1.0], True)).sum().backward()
        assert [e[0] for e in log] == ["ctx"]


def test_errors_match_torch():
    def scenario(lib):
        messages = []
        m = lib.nn.Tanh()
        m.register_full_backward_hook(lambda *a: None)
        for call in (lambda: m.register_backward_hook(lambda *a: None),):
            with pytest.raises(RuntimeError) as e:
                call()
            messages.append(str(e.value))
        legacy = lib.nn.Tanh()
        legacy.register_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError) as e:
            legacy.register_full_backward_hook(lambda *a: None)
        messages.append(str(e.value))
        bad = two_io_module(lib)
        bad.register_full_backward_hook(lambda mod, gi, go: (gi[0],))
        with pytest.raises(RuntimeError) as e:
            bad(vec(lib, [1.0], True), vec(lib, [2.0], True))[0].sum().backward()
        messages.append(str(e.value))
        no_input_grad = linear(lib, 2, 1, 3)
        no_input_grad.register_full_backward_hook(lambda mod, gi, go: (lib.ones(1),))
        with pytest.raises(RuntimeError) as e:
            no_input_grad(lib.ones(1, 2, dtype=lib.float64)).sum().backward()
        messages.append(str(e.value))
        return messages

    t, r = both(scenario)
    assert len(r) == len(t) == 4
    for tm, rm in zip(t, r):
        assert tm in rm


def test_legacy_backward_hook_single_op_module():
    def scenario(lib):
        log = []
        m = lib.nn.Sigmoid()
        m.register_backward_hook(recorder(log, "legacy"))
        leaf = vec(lib, [0.5, -1.0], True)
        x = leaf * 3  # a non-leaf input: the sigmoid node sees it, so no warning
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            y = m(x)
        (y * vec(lib, [2.0, 5.0])).sum().backward()
        return log, arr(leaf.grad)

    t, r = both(scenario)
    same_log(t[0], r[0])
    np.testing.assert_allclose(r[1], t[1])


def test_legacy_backward_hook_replacement_and_warnings():
    def scenario(lib):
        log = []

        class TwoOps(lib.nn.Module):
            def forward(self, x):
                return lib.exp(x * 2)

        m = TwoOps()
        m.register_backward_hook(lambda mod, gi, go: tuple(g * 0.5 for g in gi))
        m.register_backward_hook(recorder(log, "legacy"))
        x = vec(lib, [0.1, 0.2], True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = m(x)
        y.sum().backward()
        return log, arr(x.grad), [str(w.message) for w in caught]

    t, r = both(scenario)
    same_log(t[0], r[0])
    np.testing.assert_allclose(r[1], t[1])
    assert r[2] == t[2] and "multiple autograd Nodes" in r[2][0]


def test_full_backward_pre_hook_gets_grad_output_and_replaces_it():
    log = []
    m = two_io_module(rt)
    order = []
    m.register_full_backward_pre_hook(lambda mod, go: order.append("pre1") or tuple(g * 2 for g in go[:2]) + (None,))
    m.register_full_backward_pre_hook(lambda mod, go: order.append("pre2") or log.append(tuple(map(arr, go))))
    m.register_full_backward_pre_hook(lambda mod, go: order.append("pre0"), prepend=True)
    m.register_full_backward_hook(lambda mod, gi, go: order.append("full") or log.append(tuple(map(arr, go))))
    a, b = vec(rt, [1.0, 2.0], True), vec(rt, [3.0, 4.0], True)
    o1, o2, _ = m(a, b)
    (o1 * vec(rt, [1.0, -1.0])).sum().add(o2.sum() * 3).backward()
    assert order == ["pre0", "pre1", "pre2", "full"]
    np.testing.assert_allclose(log[0][0], [2.0, -2.0])
    np.testing.assert_allclose(log[0][1], [6.0, 6.0])
    assert log[0][2] is None
    same_log([("g", (), log[0])], [("g", (), log[1])])  # the full hook sees the replaced grad_output
    # torch 1.13 computes the same input gradients when given the doubled grad_output directly
    ta, tb = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True), torch.tensor(
        [3.0, 4.0], dtype=torch.float64, requires_grad=True)
    t1, t2 = ta * tb, ta + 1
    torch.autograd.backward([t1, t2], [torch.tensor([2.0, -2.0], dtype=torch.float64),
                                       torch.tensor([6.0, 6.0], dtype=torch.float64)])
    np.testing.assert_allclose(arr(a.grad), arr(ta.grad))
    np.testing.assert_allclose(arr(b.grad), arr(tb.grad))


def test_full_backward_pre_hook_without_input_grad_and_errors():
    layer = linear(rt, 2, 1, 4)
    calls = []
    handle = layer.register_full_backward_pre_hook(lambda mod, go: (go[0] * 4,))
    layer.register_full_backward_hook(lambda mod, gi, go: calls.append((gi, arr(go[0]))))
    layer(rt.ones(3, 2, dtype=rt.float64)).sum().backward()  # no input requires grad: parameters still see it
    assert calls[0][0] == (None,)
    np.testing.assert_allclose(calls[0][1], np.full((3, 1), 4.0))
    np.testing.assert_allclose(arr(layer.bias.grad), [12.0])
    handle.remove()
    layer.zero_grad()
    layer(rt.ones(3, 2, dtype=rt.float64)).sum().backward()
    np.testing.assert_allclose(arr(layer.bias.grad), [3.0])
    layer.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
    with pytest.raises(RuntimeError, match="invalid number of grad_output, got 2, but expected 1"):
        layer(rt.ones(3, 2, dtype=rt.float64)).sum().backward()
    legacy = rt.nn.Tanh()
    legacy.register_backward_hook(lambda *a: None)
    legacy.register_full_backward_pre_hook(lambda *a: None)  # pre-hooks mix with either kind, as in torch 2
