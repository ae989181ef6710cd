"""rt.autograd.Function: custom ops with their own backward, checked against torch.autograd.Function
(the same class body run on both): gradients, needs_input_grad, ctx methods, torch's errors, and
that the node frees what it saved."""
import gc
import weakref

import numpy as np
import pytest
import torch

import rustytorch as rt


def data(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def leaf(lib, a):
    return lib.tensor(a.copy()).requires_grad_()


def grad_of(t):
    return None if t.grad is None else t.grad.detach().numpy().copy()


def make_exp(lib):
    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    return Exp


def make_scaled_mul(lib, seen):
    class ScaledMul(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, scale, b):
            seen["needs_input_grad"] = ctx.needs_input_grad
            seen["grad_enabled_in_forward"] = lib.is_grad_enabled()
            ctx.scale = scale
            ctx.save_for_backward(a, b)
            return a * b * scale

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            ga = grad * b * ctx.scale if ctx.needs_input_grad[0] else None
            gb = grad * a * ctx.scale if ctx.needs_input_grad[2] else None
            return ga, None, gb

    return ScaledMul


def test_single_input_function_matches_torch_and_names_its_node():
    a = data((3, 4), 1)
    results = {}
    for lib in (rt, torch):
        x = leaf(lib, a)
        y = make_exp(lib).apply(x)
        assert y.requires_grad and y.grad_fn.name() == "ExpBackward"
        assert len(y.grad_fn.next_functions) == 1
        (y * y).sum().backward()
        results[lib.__name__] = grad_of(x)
    np.testing.assert_allclose(results["rustytorch"], results["torch"], rtol=1e-5)


def test_non_tensor_arguments_and_needs_input_grad_match_torch():
    a, b = data((5,), 2), data((5,), 3)
    results = {}
    for lib in (rt, torch):
        seen = {}
        x, w = leaf(lib, a), lib.tensor(b.copy())  # w needs no gradient
        out = make_scaled_mul(lib, seen).apply(x, 2.5, w)
        out.sum().backward()
        results[lib.__name__] = (seen["needs_input_grad"], seen["grad_enabled_in_forward"], grad_of(x), w.grad)
    ours, theirs = results["rustytorch"], results["torch"]
    assert ours[0] == theirs[0] == (True, False, False)
    assert ours[1] is theirs[1] is False
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)
    assert ours[3] is None and theirs[3] is None


def make_split(lib, seen, materialize):
    class Split(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen["g2"] = g2
            total = g1 * 2
            return total if g2 is None else total + g2 * 3

    return Split


@pytest.mark.parametrize("materialize", [True, False])
def test_unused_outputs_get_zeros_or_none_as_set_materialize_grads_says(materialize):
    a = data((4,), 4)
    for lib in (rt, torch):
        seen = {}
        x = leaf(lib, a)
        first, _ = make_split(lib, seen, materialize).apply(x)
        first.sum().backward()
        if materialize:
            assert seen["g2"] is not None and float(seen["g2"].abs().sum()) == 0.0, lib.__name__
        else:
            assert seen["g2"] is None, lib.__name__
        np.testing.assert_allclose(grad_of(x), np.full(4, 2.0, np.float32))


def make_row_max(lib, seen):
    class RowMax(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            values, indices = x.max(dim=1)
            ctx.mark_non_differentiable(indices)
            ctx.save_for_backward(indices)
            ctx.shape = x.shape
            return values, indices

        @staticmethod
        def backward(ctx, grad_values, grad_indices):
            seen["grad_indices"] = grad_indices
            (indices,) = ctx.saved_tensors
            return lib.zeros(ctx.shape).scatter_add(1, indices.unsqueeze(1), grad_values.unsqueeze(1))

    return RowMax


def test_mark_non_differentiable_outputs_do_not_require_grad():
    a = data((3, 5), 5)
    results = {}
    for lib in (rt, torch):
        seen = {}
        x = leaf(lib, a)
        values, indices = make_row_max(lib, seen).apply(x)
        assert values.requires_grad and not indices.requires_grad, lib.__name__
        (values * lib.arange(3, dtype=lib.float32)).sum().backward()
        assert float(seen["grad_indices"].abs().sum()) == 0.0, lib.__name__
        results[lib.__name__] = grad_of(x)
    np.testing.assert_allclose(results["rustytorch"], results["torch"])


def make_inplace_double(lib):
    class DoubleInPlace(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    return DoubleInPlace


def test_mark_dirty_rebases_the_modified_input_and_refuses_leaves():
    a = data((3,), 6)
    results = {}
    for lib in (rt, torch):
        x = leaf(lib, a)
        h = x * 3
        out = make_inplace_double(lib).apply(h)
        assert out is h and h.grad_fn.name() == "DoubleInPlaceBackward"
        (h * h).sum().backward()
        results[lib.__name__] = grad_of(x)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            make_inplace_double(lib).apply(leaf(lib, a))

    class DirtyNotReturned(rt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    with pytest.raises(RuntimeError, match="marked as dirty weren't returned as outputs"):
        DirtyNotReturned.apply(rt.ones(2, requires_grad=True) * 1)
    np.testing.assert_allclose(results["rustytorch"], results["torch"], rtol=1e-6)


def test_a_dirty_input_does_not_keep_its_node_and_ctx_alive():
    # ctx.mark_dirty(x) kept x on ctx; x's grad_fn is the node, and the node holds ctx: a cycle through C++
    # that the garbage collector cannot see, which kept the graph alive for good.
    contexts = []

    class Double(rt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            contexts.append(weakref.ref(ctx))
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = rt.ones(3, requires_grad=True)
    h = x * 3
    Double.apply(h)
    assert contexts[0]() is not None
    del h
    gc.collect()
    assert contexts[0]() is None


def test_an_input_returned_unchanged_becomes_a_new_tensor_with_the_function_history():
    class Identity(rt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 10

    x = rt.ones(3, requires_grad=True)
    y = Identity.apply(x)
    assert y is not x and x.is_leaf and x.grad_fn is None
    assert y.grad_fn.name() == "IdentityBackward"
    y.sum().backward()
    assert x.grad.tolist() == [10.0, 10.0, 10.0]


def test_a_saved_tensor_modified_in_place_is_refused_naming_the_function():
    for lib in (rt, torch):
        x = leaf(lib, data((3,), 7))
        y = make_exp(lib).apply(x)
        y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
    x = rt.ones(3, requires_grad=True)
    y = make_exp(rt).apply(x)
    y.mul_(2)
    with pytest.raises(RuntimeError, match="ExpBackward"):
        y.sum().backward()


def make_bad(lib, result):
    class Bad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, scale):
            return a * scale

        @staticmethod
        def backward(ctx, grad):
            return result(grad)

    return Bad


@pytest.mark.parametrize("result, message", [
    (lambda g: g, r"Bad(Backward)? returned an incorrect number of gradients \(expected 2, got 1\)"),
    (lambda g: (g, g), "returned a gradient different than None at position 2, but the corresponding forward "
                       "input was not a Variable"),
    (lambda g: (g, None, g), r"incorrect number of gradients \(expected 2, got 3\)"),
])
def test_wrong_backward_results_raise_torchs_errors(result, message):
    for lib in (rt, torch):
        x = leaf(lib, data((2,), 8))
        with pytest.raises(RuntimeError, match=message):
            make_bad(lib, result).apply(x, 3.0).sum().backward()
    # Extra trailing Nones are accepted, as in torch.
    x = leaf(rt, data((2,), 8))
    make_bad(rt, lambda g: (g * 3, None, None)).apply(x, 3.0).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_a_gradient_of_the_wrong_shape_or_type_is_refused():
    x = rt.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"invalid gradient at index 0 - got \[4\]"):
        make_bad(rt, lambda g: (rt.ones(4), None)).apply(x, 1.0).sum().backward()
    with pytest.raises(RuntimeError, match="returned an object of type float as the gradient at position 1"):
        make_bad(rt, lambda g: (1.0, None)).apply(x, 1.0).sum().backward()


def test_a_function_that_saved_nothing_can_backward_again_and_freed_saved_tensors_raise():
    class Scale(rt.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.k, None

    x = rt.ones(2, requires_grad=True)
    y = Scale.apply(x, 3.0)
    y.backward(rt.ones(2))
    y.backward(rt.ones(2))  # nothing saved, nothing freed: as torch
    assert x.grad.tolist() == [6.0, 6.0]

    kept = {}

    class Keep(rt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            kept["ctx"] = ctx
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 2

    Keep.apply(x).sum().backward()
    with pytest.raises(RuntimeError, match="already been freed"):
        kept["ctx"].saved_tensors


def test_grad_fn_answers_for_ctx():
    class Scale(rt.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            ctx.save_for_backward(x)
            return x * k

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.k, None

    x = rt.ones(2, requires_grad=True)
    y = Scale.apply(x, 3.0)
    assert y.grad_fn.k == 3.0 and rt.equal(y.grad_fn.saved_tensors[0], x)
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        y.grad_fn.missing
    with pytest.raises(AttributeError, match="'MulBackward0' object has no attribute 'k'"):
        (x * 2).grad_fn.k


def test_keyword_arguments_need_setup_context():
    with pytest.raises(TypeError, match="takes no keyword arguments"):
        make_exp(rt).apply(x=rt.ones(2, requires_grad=True))


def test_an_output_with_history_is_rebased_and_a_modified_view_is_refused():
    class Tracked(rt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with rt.enable_grad():
                return x * 2  # has a history of its own; torch rebases it onto the function

        @staticmethod
        def backward(ctx, grad):
            return grad * 5

    x = rt.ones(2, requires_grad=True)
    y = Tracked.apply(x)
    assert y.grad_fn.name() == "TrackedBackward"
    y.sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]

    base = rt.ones(2, 2, requires_grad=True) * 1
    with pytest.raises(NotImplementedError, match="in-place modification of a view"):
        make_inplace_double(rt).apply(base.view(4))


def test_backward_twice_needs_retain_graph():
    x = rt.ones(2, requires_grad=True)
    y = make_exp(rt).apply(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(2, 2 * np.e, np.float32), rtol=1e-6)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_an_error_in_backward_propagates_and_leaves_the_graph_usable():
    calls = []

    class Flaky(rt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            calls.append(1)
            if len(calls) == 1:
                raise ValueError("flaky backward")
            return grad

    x = rt.ones(2, requires_grad=True)
    y = Flaky.apply(x).sum()
    with pytest.raises(ValueError, match="flaky backward"):
        y.backward()
    y.backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_no_graph_under_no_grad_or_without_inputs_that_require_grad():
    exp = make_exp(rt)
    with rt.no_grad():
        y = exp.apply(rt.ones(2, requires_grad=True))
    assert y.grad_fn is None and not y.requires_grad
    y = exp.apply(rt.ones(2))
    assert y.grad_fn is None and not y.requires_grad


def test_setup_context_style_and_keyword_arguments():
    class Mul(rt.autograd.Function):
        @staticmethod
        def forward(a, b, scale=1.0):
            return a * b * scale

        @staticmethod
        def setup_context(ctx, inputs, output):
            a, b, scale = inputs
            ctx.save_for_backward(a, b)
            ctx.scale = scale

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return grad * b * ctx.scale, grad * a * ctx.scale, None

    a = rt.tensor([1.0, 2.0], requires_grad=True)
    b = rt.tensor([3.0, 4.0], requires_grad=True)
    Mul.apply(a, b, scale=2.0).sum().backward()
    assert a.grad.tolist() == [6.0, 8.0] and b.grad.tolist() == [2.0, 4.0]


def test_once_differentiable_hooks_and_the_legacy_call_error():
    class Square(rt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @rt.autograd.function.once_differentiable
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = rt.tensor([1.0, 3.0], requires_grad=True)
    y = Square.apply(x)
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()) or g * 2)
    y.sum().backward()
    assert seen == [[1.0, 1.0]] and x.grad.tolist() == [4.0, 12.0]
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward"):
        Square()(x)
    with pytest.raises(NotImplementedError, match="You must implement the forward function"):
        rt.autograd.Function.apply(x)


def test_gradients_come_back_in_the_inputs_dtype():
    class Widen(rt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad.double() * 2

    x = rt.ones(2, requires_grad=True)
    Widen.apply(x).sum().backward()
    assert x.grad.dtype == rt.float32 and x.grad.tolist() == [2.0, 2.0]


def test_anomaly_mode_names_the_function():
    class NanGrad(rt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return grad * float("nan")

    x = rt.ones(2, requires_grad=True)
    with rt.autograd.detect_anomaly():
        y = NanGrad.apply(x).sum()
        with pytest.raises(RuntimeError, match="Function 'NanGradBackward' returned nan.*forward op was 'NanGrad'"):
            y.backward()


def test_the_node_frees_what_it_saved_and_makes_no_cycle():
    holder = {}

    class Keep(rt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            holder["ctx"] = weakref.ref(ctx)
            y = x.exp()
            ctx.save_for_backward(x, y)  # y is an output: saved without its grad_fn
            return y

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            return grad * y

    class KeepOnCtx(rt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            holder["ctx"] = weakref.ref(ctx)
            y = x * 2
            ctx.out, ctx.outs, ctx.inp = y, [y], x  # outputs kept as attributes: torch's GC collects the cycle
            return y

        @staticmethod
        def backward(ctx, grad):
            assert rt.equal(ctx.out, ctx.outs[0])
            return grad * 2

    gc.disable()
    try:
        x = rt.ones(3, requires_grad=True)
        y = Keep.apply(x)
        assert holder["ctx"]() is not None
        del y  # the graph goes with its last output, by reference counting alone
        assert holder["ctx"]() is None
        y = Keep.apply(x)
        y.sum().backward()  # no retain_graph: the saved tensors are freed; ctx goes with the graph
        del y
        assert holder["ctx"]() is None
        y = KeepOnCtx.apply(x)
        assert holder["ctx"]().inp is x
        y.sum().backward()
        del y
        assert holder["ctx"]() is None
    finally:
        gc.enable()


def test_the_profiler_shows_the_function_and_its_backward_node():
    x = rt.ones(4, requires_grad=True)
    exp = make_exp(rt)
    with rt.profiler.profile() as prof:
        exp.apply(x).sum().backward()
    names = {row.key for row in prof.key_averages()}
    assert "Exp" in names
    assert any("ExpBackward" in n for n in names), sorted(names)
