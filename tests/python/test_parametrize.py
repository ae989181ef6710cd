"""Parametrizations against PyTorch 1.13: nn.utils.parametrize (register_parametrization, chaining, right_inverse on
assignment, remove_parametrizations with leave_parametrized, cached, is_parametrized, the injected class, pickling
refused, deepcopy), nn.utils.parametrizations.spectral_norm (power iteration with u/v buffers in training mode,
none in eval, n_power_iterations, dim, conv weights, vectors) and weight_norm (torch 2.1's parametrization, checked
against 1.13's hook-based weight_norm, whose state dict it loads), and the hook-based nn.utils.weight_norm /
spectral_norm with their remove_ functions. Outputs, gradients and state_dict keys must equal torch's after
copying state."""
import copy
import pickle

import numpy as np
import pytest

import rustytorch as rt

torch = pytest.importorskip("torch")

LIBS = {"torch": torch, "rt": rt}


def arr(t):
    return np.array(t.detach().numpy(), copy=True)


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(arr(a), arr(b), rtol=tol, atol=tol)


def to_rt_state(state):
    return {k: rt.tensor(v.detach().numpy().copy()) for k, v in state.items()}


def twin_linear(n_in=4, n_out=3, seed=0):
    """The same float64 Linear in torch and rt."""
    rng = np.random.default_rng(seed)
    w, b = rng.standard_normal((n_out, n_in)), rng.standard_normal(n_out)
    layers = {}
    for key, lib in LIBS.items():
        layer = lib.nn.Linear(n_in, n_out).double()
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(w))
            layer.bias.copy_(lib.tensor(b))
        layers[key] = layer
    return layers["torch"], layers["rt"]


def twin_conv(seed=1):
    rng = np.random.default_rng(seed)
    w, b = rng.standard_normal((5, 2, 3, 3)), rng.standard_normal(5)
    convs = {}
    for key, lib in LIBS.items():
        conv = lib.nn.Conv2d(2, 5, 3).double()
        with lib.no_grad():
            conv.weight.copy_(lib.tensor(w))
            conv.bias.copy_(lib.tensor(b))
        convs[key] = conv
    return convs["torch"], convs["rt"]


def symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(-1, -2)

    return Symmetric()


def exp_param(lib):
    class Exp(lib.nn.Module):
        def forward(self, x):
            return x.exp()

        def right_inverse(self, y):
            return y.log()

    return Exp()


def scale_param(lib, factor, invertible=False):
    class Scale(lib.nn.Module):
        def forward(self, x):
            return x * factor

    class InvertibleScale(Scale):
        def right_inverse(self, y):
            return y / factor

    return InvertibleScale() if invertible else Scale()


def run(layers, x, steps=1):
    """Forward + backward `steps` times on both; returns nothing, compares as it goes."""
    t_layer, r_layer = layers
    for _ in range(steps):
        ty = t_layer(torch.tensor(x))
        ry = r_layer(rt.tensor(x))
        close(ry, ty)
        (ty ** 2).sum().backward()
        (ry ** 2).sum().backward()


def grads(layer):
    return {n: p.grad for n, p in layer.named_parameters()}


def same_grads(t_layer, r_layer):
    tg, rg = grads(t_layer), grads(r_layer)
    assert list(tg) == list(rg)
    for name in tg:
        close(rg[name], tg[name])


X = np.random.default_rng(9).standard_normal((6, 4))


# ---- parametrize ------------------------------------------------------------------------------------------------

def test_register_parametrization_output_gradients_keys_and_class():
    t, r = twin_linear(4, 4)
    original = r.weight
    for layer, lib in ((t, torch), (r, rt)):
        lib.nn.utils.parametrize.register_parametrization(layer, "weight", symmetric(lib))
    assert type(r).__name__ == "ParametrizedLinear" and isinstance(r, rt.nn.Linear)
    assert r.parametrizations.weight.original is original  # the optimizer's Parameter stays the same object
    assert list(r.state_dict()) == list(t.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert [n for n, _ in r.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert repr(r) == repr(t)
    close(r.weight, t.weight)
    run((t, r), X)
    same_grads(t, r)
    P = rt.nn.utils.parametrize
    assert P.is_parametrized(r) and P.is_parametrized(r, "weight") and not P.is_parametrized(r, "bias")
    assert P.type_before_parametrizations(r) is rt.nn.Linear


def test_chained_parametrizations_and_right_inverse_on_assignment():
    t, r = twin_linear()
    for layer, lib in ((t, torch), (r, rt)):
        P = lib.nn.utils.parametrize
        with lib.no_grad():
            layer.weight.abs_()  # Exp's right_inverse (log) needs positive values
        P.register_parametrization(layer, "weight", exp_param(lib))
        P.register_parametrization(layer, "weight", scale_param(lib, 3.0, invertible=True))
        layer.weight = lib.tensor(np.full((3, 4), 6.0))  # original <- log(6 / 3): right_inverse in reverse order
    close(r.parametrizations.weight.original, t.parametrizations.weight.original)
    close(r.weight, t.weight)
    np.testing.assert_allclose(arr(r.parametrizations.weight.original), np.log(2.0))
    assert len(r.parametrizations.weight) == 2
    run((t, r), X)
    same_grads(t, r)
    for layer, lib in ((t, torch), (r, rt)):
        lib.nn.utils.parametrize.register_parametrization(layer, "bias", scale_param(lib, 2.0))
        with pytest.raises(RuntimeError, match="parametrization Scale does not implement right_inverse"):
            layer.bias = lib.zeros(3, dtype=lib.float64)


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(leave):
    t, r = twin_linear(4, 4)
    original = r.weight
    for layer, lib in ((t, torch), (r, rt)):
        lib.nn.utils.parametrize.register_parametrization(layer, "weight", symmetric(lib))
        lib.nn.utils.parametrize.remove_parametrizations(layer, "weight", leave_parametrized=leave)
    assert type(r) is rt.nn.Linear and "parametrizations" not in r._modules
    assert r.weight is original and isinstance(r.weight, rt.nn.Parameter)
    assert list(r.state_dict()) == list(t.state_dict()) == ["bias", "weight"]
    close(r.weight, t.weight)
    run((t, r), X)
    same_grads(t, r)


def test_cached_computes_each_parametrization_once():
    counts = {}
    for key, lib in LIBS.items():
        class Counting(lib.nn.Module):
            def forward(self, x):
                counts[key] = counts.get(key, 0) + 1
                return x * 2

        layer = lib.nn.Linear(4, 4)
        lib.nn.utils.parametrize.register_parametrization(layer, "weight", Counting())
        counts[key] = 0
        with lib.nn.utils.parametrize.cached():
            layer(lib.ones(1, 4))
            layer(lib.ones(1, 4))
            _ = layer.weight
        layer(lib.ones(1, 4))
    assert counts["rt"] == counts["torch"] == 2


def test_buffers_can_be_parametrized_and_pickling_is_refused_but_deepcopy_works():
    t, r = twin_linear()
    for layer, lib in ((t, torch), (r, rt)):
        layer.register_buffer("scale", lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64))
        lib.nn.utils.parametrize.register_parametrization(layer, "scale", scale_param(lib, 2.0))
    assert list(r.state_dict()) == list(t.state_dict())
    close(r.scale, t.scale)
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(r)
    clone = copy.deepcopy(r)
    assert type(clone).__name__ == "ParametrizedLinear"
    close(clone.scale, r.scale)
    assert clone.parametrizations.scale.original is not r.parametrizations.scale.original


def test_parametrize_errors():
    P = rt.nn.utils.parametrize
    layer = rt.nn.Linear(4, 3)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element"):
        P.register_parametrization(layer, "nothing", scale_param(rt, 2.0))

    class Shrink(rt.nn.Module):
        def forward(self, x):
            return x[:1]

    with pytest.raises(ValueError, match="may not change the shape"):
        P.register_parametrization(layer, "weight", Shrink())
    P.register_parametrization(layer, "weight", Shrink(), unsafe=True)
    assert tuple(layer.weight.shape) == (1, 4)
    with pytest.raises(ValueError, match="does not have a parametrization on bias"):
        P.remove_parametrizations(layer, "bias")
    normed = rt.nn.utils.parametrizations.weight_norm(rt.nn.Linear(4, 3))
    with pytest.raises(ValueError, match="Cannot leave unparametrized"):
        P.remove_parametrizations(normed, "weight", leave_parametrized=False)


# ---- parametrizations.spectral_norm -------------------------------------------------------------------------------

def spectral_twins(make, **kw):
    t, r = make()
    torch.nn.utils.parametrizations.spectral_norm(t, **kw)
    rt.nn.utils.parametrizations.spectral_norm(r, **kw)
    assert list(r.state_dict()) == list(t.state_dict())
    r.load_state_dict(to_rt_state(t.state_dict()))  # u and v included
    return t, r


@pytest.mark.parametrize("kw", [{}, {"n_power_iterations": 3}, {"dim": 1}, {"eps": 1e-3}])
def test_spectral_norm_linear_training_then_eval(kw):
    t, r = spectral_twins(twin_linear, **kw)
    assert list(t.state_dict()) == ["bias", "parametrizations.weight.original", "parametrizations.weight.0._u",
                                    "parametrizations.weight.0._v"]
    run((t, r), X, steps=3)
    same_grads(t, r)
    close(r.parametrizations.weight[0]._u, t.parametrizations.weight[0]._u)
    close(r.parametrizations.weight[0]._v, t.parametrizations.weight[0]._v)
    t.eval()
    r.eval()
    u_before = arr(r.parametrizations.weight[0]._u)
    run((t, r), X)
    np.testing.assert_array_equal(arr(r.parametrizations.weight[0]._u), u_before)  # eval: no iteration
    same_grads(t, r)


def test_spectral_norm_conv_weight_and_vector():
    t, r = spectral_twins(twin_conv)
    x = np.random.default_rng(3).standard_normal((2, 2, 5, 5))
    ty, ry = t(torch.tensor(x)), r(rt.tensor(x))
    close(ry, ty)
    ty.sum().backward()
    ry.sum().backward()
    same_grads(t, r)
    tb, rb = twin_linear()
    torch.nn.utils.parametrizations.spectral_norm(tb, "bias")
    rt.nn.utils.parametrizations.spectral_norm(rb, "bias")
    assert list(rb.state_dict()) == list(tb.state_dict())  # a vector: no u/v buffers
    run((tb, rb), X)
    same_grads(tb, rb)


def test_spectral_norm_remove_keeps_value_and_errors():
    t, r = spectral_twins(twin_linear)
    for layer, lib in ((t, torch), (r, rt)):
        layer.eval()
        lib.nn.utils.parametrize.remove_parametrizations(layer, "weight")
    close(r.weight, t.weight)
    assert list(r.state_dict()) == list(t.state_dict()) == ["bias", "weight"]
    with pytest.raises(ValueError, match="n_power_iterations to be positive"):
        rt.nn.utils.parametrizations.spectral_norm(rt.nn.Linear(2, 2), n_power_iterations=0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        rt.nn.utils.parametrizations.spectral_norm(rt.nn.Linear(2, 2), dim=2)
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'w'"):
        rt.nn.utils.parametrizations.spectral_norm(rt.nn.Linear(2, 2), "w")


# ---- parametrizations.weight_norm ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization_matches_torch_weight_norm(dim):
    t, r = twin_linear()
    torch.nn.utils.weight_norm(t, dim=dim)  # torch 1.13's hook-based version: the same function of g and v
    rt.nn.utils.parametrizations.weight_norm(r, dim=dim)
    assert list(r.state_dict()) == ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    close(r.parametrizations.weight.original0, t.weight_g)
    close(r.parametrizations.weight.original1, t.weight_v)
    run((t, r), X, steps=2)
    close(r.parametrizations.weight.original0.grad, t.weight_g.grad)
    close(r.parametrizations.weight.original1.grad, t.weight_v.grad)
    close(r.bias.grad, t.bias.grad)


def test_weight_norm_parametrization_loads_the_older_state_dict_and_removes():
    t, r = twin_linear(seed=5)
    torch.nn.utils.weight_norm(t)
    with torch.no_grad():
        t.weight_g.mul_(2.0)
    r2 = rt.nn.utils.parametrizations.weight_norm(rt.nn.Linear(4, 3).double())
    r2.load_state_dict(to_rt_state(t.state_dict()))  # weight_g / weight_v keys
    close(r2(rt.tensor(X)), t(torch.tensor(X)))
    rt.nn.utils.parametrize.remove_parametrizations(r2, "weight")
    assert isinstance(r2.weight, rt.nn.Parameter) and list(r2.state_dict()) == ["bias", "weight"]
    close(r2(rt.tensor(X)), t(torch.tensor(X)))


# ---- hook-based weight_norm / spectral_norm --------------------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, None])
def test_hook_weight_norm(dim):
    t, r = twin_conv() if dim == 1 else twin_linear()
    torch.nn.utils.weight_norm(t, dim=dim)
    rt.nn.utils.weight_norm(r, dim=dim)
    assert list(r.state_dict()) == list(t.state_dict()) == ["bias", "weight_g", "weight_v"]
    if dim == 1:
        x = np.random.default_rng(4).standard_normal((2, 2, 5, 5))
        ty, ry = t(torch.tensor(x)), r(rt.tensor(x))
        close(ry, ty)
        ty.sum().backward()
        ry.sum().backward()
    else:
        run((t, r), X, steps=2)
    same_grads(t, r)
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        rt.nn.utils.weight_norm(r, dim=dim)
    torch.nn.utils.remove_weight_norm(t)
    rt.nn.utils.remove_weight_norm(r)
    assert list(r.state_dict()) == list(t.state_dict())
    close(r.weight, t.weight)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        rt.nn.utils.remove_weight_norm(r)


def test_hook_spectral_norm():
    t, r = twin_linear()
    torch.nn.utils.spectral_norm(t, n_power_iterations=2)
    rt.nn.utils.spectral_norm(r, n_power_iterations=2)
    assert list(r.state_dict()) == list(t.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    r.load_state_dict(to_rt_state(t.state_dict()))
    run((t, r), X, steps=3)
    same_grads(t, r)
    close(r.weight_u, t.weight_u)
    t.eval()
    r.eval()
    run((t, r), X)
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        rt.nn.utils.spectral_norm(r)
    torch.nn.utils.remove_spectral_norm(t)
    rt.nn.utils.remove_spectral_norm(r)
    assert list(r.state_dict()) == list(t.state_dict()) == ["bias", "weight"]
    close(r.weight, t.weight)
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        rt.nn.utils.remove_spectral_norm(r)
