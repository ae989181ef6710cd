"""Parity with PyTorch 1.13 for the activations composed in rt.nn.functional (elu, selu, celu, prelu,
hardtanh, relu6, hardswish, hardsigmoid, mish, softsign, tanhshrink, logsigmoid, threshold, glu, softmin,
hardshrink, softshrink) and their modules: forward in float32 and float64, input (and PReLU weight)
gradients in float64, in-place variants, module defaults and reprs, and the errors for bad arguments."""
import numpy as np
import pytest

import rustytorch as rt
import rustytorch.nn.functional as RF
from conftest import assert_close

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402

# fn(F, x): the same call on both libraries. Inputs are N(0, 3^2), so every branch (|x| > 3 for the
# hard* functions) is exercised; no sample lands on a kink.
FUNCTIONAL = [
    ("elu", lambda F, x: F.elu(x)),
    ("elu_alpha", lambda F, x: F.elu(x, alpha=0.3)),
    ("selu", lambda F, x: F.selu(x)),
    ("celu", lambda F, x: F.celu(x)),
    ("celu_alpha", lambda F, x: F.celu(x, alpha=2.5)),
    ("hardtanh", lambda F, x: F.hardtanh(x)),
    ("hardtanh_range", lambda F, x: F.hardtanh(x, -2.0, 0.5)),
    ("relu6", lambda F, x: F.relu6(x)),
    ("hardswish", lambda F, x: F.hardswish(x)),
    ("hardsigmoid", lambda F, x: F.hardsigmoid(x)),
    ("mish", lambda F, x: F.mish(x)),
    ("softsign", lambda F, x: F.softsign(x)),
    ("tanhshrink", lambda F, x: F.tanhshrink(x)),
    ("logsigmoid", lambda F, x: F.logsigmoid(x)),
    ("threshold", lambda F, x: F.threshold(x, 0.3, -2.0)),
    ("glu_last", lambda F, x: F.glu(x)),
    ("glu_dim0", lambda F, x: F.glu(x, 0)),
    ("softmin", lambda F, x: F.softmin(x, dim=1)),
    ("hardshrink", lambda F, x: F.hardshrink(x)),
    ("hardshrink_lambd", lambda F, x: F.hardshrink(x, 2.0)),
    ("softshrink", lambda F, x: F.softshrink(x)),
    ("softshrink_lambd", lambda F, x: F.softshrink(x, 1.5)),
]  # prelu has its own tests, with a weight

MODULES = [
    ("ELU", lambda nn: nn.ELU()), ("ELU_alpha", lambda nn: nn.ELU(0.5)), ("SELU", lambda nn: nn.SELU()),
    ("CELU", lambda nn: nn.CELU(1.5)), ("Hardtanh", lambda nn: nn.Hardtanh(-0.5, 2.0)),
    ("ReLU6", lambda nn: nn.ReLU6()),
    ("Hardswish", lambda nn: nn.Hardswish()), ("Hardsigmoid", lambda nn: nn.Hardsigmoid()),
    ("Mish", lambda nn: nn.Mish()), ("Softsign", lambda nn: nn.Softsign()), ("Tanhshrink", lambda nn: nn.Tanhshrink()),
    ("LogSigmoid", lambda nn: nn.LogSigmoid()), ("Threshold", lambda nn: nn.Threshold(0.1, 20.0)),
    ("GLU", lambda nn: nn.GLU()), ("GLU_dim", lambda nn: nn.GLU(dim=1)), ("Softmin", lambda nn: nn.Softmin(dim=-1)),
    ("Softmax2d", lambda nn: nn.Softmax2d()), ("Hardshrink", lambda nn: nn.Hardshrink(1.0)),
    ("Softshrink", lambda nn: nn.Softshrink()),
]


def _inputs(shape, dtype, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape) * 3
    return np.asarray(a.astype(dtype))


# torch 1.13's CPU hardsigmoid backward scales by 1/6 rounded to float32 even for float64 (relative error
# 3e-8); rt's gradient is exact, checked against the formula in test_hardsigmoid_gradient_is_exact.
GRAD_DTYPE = {"hardsigmoid": "float32", "Hardsigmoid": "float32"}


def _run(fn_rt, fn_t, a, dtype, grad_dtype=None):
    x_r = rt.from_numpy(a.copy()).requires_grad_()
    x_t = torch.from_numpy(a.copy()).requires_grad_()
    out_r, out_t = fn_rt(x_r), fn_t(x_t)
    assert_close(out_r, out_t, dtype, "forward")
    if dtype == "float64":
        w = np.random.default_rng(1).standard_normal(tuple(out_t.shape))
        (out_r * rt.from_numpy(w.copy())).sum().backward()
        (out_t * torch.from_numpy(w)).sum().backward()
        assert_close(x_r.grad, x_t.grad, grad_dtype or dtype, "input gradient")
    return x_r, x_t


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,fn", FUNCTIONAL, ids=[c[0] for c in FUNCTIONAL])
def test_functional_matches_torch(name, fn, dtype):
    _run(lambda x: fn(RF, x), lambda x: fn(TF, x), _inputs((4, 6), dtype), dtype, GRAD_DTYPE.get(name))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,make", MODULES, ids=[c[0] for c in MODULES])
def test_module_matches_torch(name, make, dtype):
    _run(make(rt.nn), make(torch.nn), _inputs((2, 4, 3, 2), dtype), dtype, GRAD_DTYPE.get(name))


def test_hardsigmoid_gradient_is_exact():
    a = _inputs((4, 6), "float64")
    x = rt.from_numpy(a.copy()).requires_grad_()
    RF.hardsigmoid(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(np.abs(a) < 3, 1 / 6, 0.0), rtol=1e-15, atol=0)


def test_extreme_inputs_stay_finite():
    """Branches that exp() a large input are clamped: no inf/NaN in the value or the gradient."""
    a = np.array([-800.0, -30.0, 0.5, 30.0, 800.0])
    for fn in (lambda F, x: F.elu(x), lambda F, x: F.selu(x), lambda F, x: F.celu(x, 0.5)):
        x_r, x_t = _run(lambda x: fn(RF, x), lambda x: fn(TF, x), a, "float64")
        assert np.isfinite(x_r.grad.numpy()).all()


@pytest.mark.parametrize("shape,num", [((3, 4, 5), 4), ((3, 4, 5), 1), ((6, 2), 2), ((7,), 1), ((), 1)])
def test_prelu_matches_torch_with_weight_gradient(shape, num):
    rt.manual_seed(0)
    m_r, m_t = rt.nn.PReLU(num, init=0.1, dtype=rt.float64), torch.nn.PReLU(num, init=0.1).double()
    w = np.random.default_rng(3).uniform(-0.5, 0.5, num)
    with rt.no_grad():
        m_r.weight.copy_(rt.from_numpy(w.copy()))
    with torch.no_grad():
        m_t.weight.copy_(torch.from_numpy(w))
    _run(m_r, m_t, _inputs(shape, "float64"), "float64")
    assert_close(m_r.weight.grad, m_t.weight.grad, "float64", "weight gradient")


def test_prelu_module_defaults_and_state_dict():
    m = rt.nn.PReLU()
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    assert tuple(m.weight.shape) == (1,) and float(m.weight.item()) == 0.25
    m = rt.nn.PReLU(num_parameters=3, init=-0.5)
    assert np.all(m.weight.detach().numpy() == -0.5)
    t = torch.nn.PReLU(3)
    m.load_state_dict({k: rt.from_numpy(v.numpy().copy()) for k, v in t.state_dict().items()})
    assert np.all(m.weight.detach().numpy() == 0.25)


@pytest.mark.parametrize("name,call", [
    ("elu_", lambda F, x: F.elu_(x, 0.7)), ("selu_", lambda F, x: F.selu_(x)), ("celu_", lambda F, x: F.celu_(x, 2.0)),
    ("hardtanh_", lambda F, x: F.hardtanh_(x, -0.5, 0.5)), ("threshold_", lambda F, x: F.threshold_(x, 0.0, 9.0)),
    ("leaky_relu_", lambda F, x: F.leaky_relu_(x, 0.3)), ("relu6_inplace", lambda F, x: F.relu6(x, inplace=True)),
    ("hardswish_inplace", lambda F, x: F.hardswish(x, inplace=True)),
    ("hardsigmoid_inplace", lambda F, x: F.hardsigmoid(x, True)), ("mish_inplace", lambda F, x: F.mish(x, True)),
])
def test_inplace_variants_write_the_input(name, call):
    a = _inputs((3, 4), "float64")
    x_r, x_t = rt.from_numpy(a.copy()), torch.from_numpy(a.copy())
    out_r, out_t = call(RF, x_r), call(TF, x_t)
    assert_close(x_r, x_t, "float64", "input after the in-place call")
    assert_close(out_r, out_t, "float64", "result")


INPLACE_MODULES = [
    lambda nn: nn.ELU(0.5, inplace=True), lambda nn: nn.SELU(inplace=True), lambda nn: nn.CELU(2.0, inplace=True),
    lambda nn: nn.Hardtanh(-1.5, 1.5, inplace=True), lambda nn: nn.ReLU6(inplace=True),
    lambda nn: nn.Hardswish(inplace=True), lambda nn: nn.Hardsigmoid(inplace=True), lambda nn: nn.Mish(inplace=True),
    lambda nn: nn.Threshold(0.2, -1.0, inplace=True), lambda nn: nn.LeakyReLU(0.1, inplace=True),
    lambda nn: nn.SiLU(inplace=True),
]


@pytest.mark.parametrize("make", INPLACE_MODULES, ids=lambda m: repr(m(torch.nn)))
def test_inplace_module_backpropagates_through_a_non_leaf(make):
    """The in-place result is written over an intermediate tensor; the gradient still reaches the leaf."""
    a = _inputs((3, 4), "float64")
    x_r = rt.from_numpy(a.copy()).requires_grad_()
    x_t = torch.from_numpy(a.copy()).requires_grad_()
    y_r = make(rt.nn)(x_r * 1.5)
    y_t = make(torch.nn)(x_t * 1.5)
    w = np.random.default_rng(2).standard_normal((3, 4))
    (y_r * rt.from_numpy(w.copy())).sum().backward()
    (y_t * torch.from_numpy(w)).sum().backward()
    assert_close(y_r, y_t, "float64")
    assert_close(x_r.grad, x_t.grad, "float32", "gradient")  # float32: torch's float32 1/6 in hardsigmoid


def test_module_reprs_match_torch():
    for make in [lambda nn: nn.ELU(), lambda nn: nn.ELU(alpha=0.5, inplace=True), lambda nn: nn.SELU(),
                 lambda nn: nn.SELU(True), lambda nn: nn.CELU(), lambda nn: nn.PReLU(3), lambda nn: nn.Hardtanh(),
                 lambda nn: nn.Hardtanh(-2.0, 2.0, True), lambda nn: nn.ReLU6(), lambda nn: nn.ReLU6(True),
                 lambda nn: nn.Hardswish(), lambda nn: nn.Hardsigmoid(), lambda nn: nn.Mish(),
                 lambda nn: nn.Softsign(), lambda nn: nn.Tanhshrink(), lambda nn: nn.LogSigmoid(),
                 lambda nn: nn.Threshold(0.1, 20), lambda nn: nn.Threshold(0.1, 2, True), lambda nn: nn.GLU(),
                 lambda nn: nn.Softmin(1), lambda nn: nn.Softmax2d(), lambda nn: nn.Hardshrink(),
                 lambda nn: nn.Softshrink(0.25)]:
        assert repr(make(rt.nn)) == repr(make(torch.nn))


def test_errors_name_the_problem():
    x = rt.randn(3, 5)
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is size 5"):
        RF.glu(x)
    with pytest.raises(RuntimeError, match="scalars"):
        RF.glu(rt.tensor(1.0))
    with pytest.raises(ValueError, match="alpha cannot be 0"):
        RF.celu(x, 0.0)
    with pytest.raises(ValueError, match="lambd must be greater or equal to 0"):
        RF.softshrink(x, -0.5)
    with pytest.raises(ValueError, match="min_val .* must not exceed max_val"):
        rt.nn.Hardtanh(1.0, -1.0)
    with pytest.raises(RuntimeError, match="parameter numbers = 2 and channel size = 5"):
        RF.prelu(x, rt.ones(2))
    with pytest.raises(RuntimeError, match="channel size = 1"):
        RF.prelu(rt.randn(3), rt.ones(3))
    with pytest.raises(ValueError, match="3-D .* or 4-D"):
        rt.nn.Softmax2d()(x)
    with pytest.raises(ValueError, match="num_parameters must be at least 1"):
        rt.nn.PReLU(0)
    with pytest.raises(ValueError, match="dim"):
        rt.nn.Softmin()
