"""Parity with PyTorch 1.13 for F.conv3d, F.conv_transpose1d/2d/3d and nn.Conv3d / nn.ConvTranspose1d/2d/3d:
forward in float32 and float64, gradients of input, weight and bias in float64 (stride, padding,
output_padding, groups, dilation, unbatched input), parameter names, shapes and init bounds, a torch
state_dict loading unchanged, forward(output_size=...), and the errors for bad arguments."""
import math

import numpy as np
import pytest

import rustytorch as rt
import rustytorch.nn.functional as RF
from conftest import assert_close

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402


def _arrays(shapes, dtype, seed):
    rng = np.random.default_rng(seed)
    return [None if s is None else rng.standard_normal(s).astype(dtype) for s in shapes]


def _run(name, x_shape, w_shape, bias, dtype="float64", seed=0, **kw):
    """F.<name>(x, w, b, **kw) in rt and torch: forward compared, and in float64 every gradient."""
    c_out = w_shape[1] * kw.get("groups", 1) if name.startswith("conv_transpose") else w_shape[0]
    arrays = _arrays([x_shape, w_shape, (c_out,) if bias else None], dtype, seed)
    grad = dtype == "float64"
    rs = [None if a is None else rt.from_numpy(a.copy()).requires_grad_(grad) for a in arrays]
    ts = [None if a is None else torch.from_numpy(a.copy()).requires_grad_(grad) for a in arrays]
    out_r, out_t = getattr(RF, name)(*rs, **kw), getattr(TF, name)(*ts, **kw)
    assert_close(out_r, out_t, dtype, f"{name} forward")
    if grad:
        g = np.random.default_rng(seed + 1).standard_normal(tuple(out_t.shape))
        (out_r * rt.from_numpy(g.copy())).sum().backward()
        (out_t * torch.from_numpy(g)).sum().backward()
        for what, r, t in zip(("input", "weight", "bias"), rs, ts):
            if r is not None:
                assert_close(r.grad, t.grad, dtype, f"{name} {what} gradient")


CONV3D = [
    ((2, 3, 5, 6, 7), (4, 3, 3, 3, 3), True, {}),
    ((2, 4, 6, 7, 5), (6, 2, 3, 2, 3), True, dict(stride=(2, 1, 2), padding=(1, 0, 2), dilation=(1, 2, 1), groups=2)),
    ((3, 5, 6, 7), (2, 3, 2, 2, 2), False, dict(stride=2, padding=1)),          # unbatched
    ((1, 2, 5, 5, 6), (2, 2, 2, 3, 2), True, dict(padding="same", dilation=(2, 1, 1))),
    ((1, 2, 5, 5, 6), (3, 2, 2, 2, 2), True, dict(padding="same")),           # asymmetric same
    ((2, 2, 4, 5, 6), (3, 2, 3, 3, 3), True, dict(padding="valid")),
]


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")  # torch's note on its own copy
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("x,w,bias,kw", CONV3D, ids=[str(c[3]) or "plain" for c in CONV3D])
def test_conv3d_matches_torch(x, w, bias, kw, dtype):
    _run("conv3d", x, w, bias, dtype, **kw)


TRANSPOSED = [
    ("conv_transpose1d", (2, 4, 7), (4, 3, 3), True, {}),
    ("conv_transpose1d", (2, 4, 7), (4, 3, 4), True, dict(stride=3, padding=2, output_padding=2, dilation=1)),
    ("conv_transpose1d", (4, 6), (4, 2, 3), False, dict(stride=2, groups=2, dilation=2, output_padding=1)),
    ("conv_transpose2d", (2, 3, 5, 6), (3, 4, 3, 3), True, {}),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 3, 2), True,
     dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2), groups=2, dilation=(1, 2))),
    ("conv_transpose2d", (3, 4, 5), (3, 2, 3, 3), False, dict(stride=2, padding=1, output_padding=1)),  # unbatched
    ("conv_transpose2d", (2, 2, 3, 3), (2, 2, 5, 5), True, dict(padding=3)),   # padding past the kernel reach
    ("conv_transpose2d", (1, 2, 4, 4), (2, 3, 1, 1), True, dict(stride=2, output_padding=1)),
    ("conv_transpose3d", (2, 2, 3, 4, 5), (2, 3, 3, 2, 3), True,
     dict(stride=(2, 1, 2), padding=(1, 0, 1), output_padding=(1, 0, 0), dilation=(1, 2, 1))),
    ("conv_transpose3d", (1, 4, 3, 3, 3), (4, 1, 2, 2, 2), False, dict(stride=2, groups=4)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,x,w,bias,kw", TRANSPOSED, ids=[f"{c[0]}-{i}" for i, c in enumerate(TRANSPOSED)])
def test_conv_transpose_matches_torch(name, x, w, bias, kw, dtype):
    _run(name, x, w, bias, dtype, **kw)


def test_conv_transpose_is_the_adjoint_of_conv():
    """<conv(a, w), b> == <a, conv_transpose(b, w)>: the defining property, independent of torch."""
    a, b = rt.randn(2, 3, 9, 8, dtype=rt.float64), rt.randn(2, 5, 5, 4, dtype=rt.float64)
    w = rt.randn(5, 3, 3, 3, dtype=rt.float64)
    left = (RF.conv2d(a, w, stride=2, padding=1, dilation=1) * b).sum().item()
    right = (a * RF.conv_transpose2d(b, w, stride=2, padding=1, output_padding=(0, 1))).sum().item()
    assert math.isclose(left, right, rel_tol=1e-12)


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")
@pytest.mark.parametrize("name,x,w,kw", [
    ("conv1d", (2, 3, 7), (4, 3, 4), {}), ("conv1d", (2, 3, 7), (4, 3, 3), dict(dilation=3)),
    ("conv2d", (2, 3, 6, 7), (4, 3, 2, 4), {}), ("conv2d", (2, 4, 6, 7), (4, 2, 3, 2), dict(dilation=(1, 3), groups=2)),
], ids=str)
def test_conv_same_padding_with_even_kernels_matches_torch(name, x, w, kw):
    """The engine refuses asymmetric 'same' padding; F.conv1d/conv2d pad the extra zero at the end first."""
    _run(name, x, w, True, padding="same", **kw)


# ---- modules ----

MODULES = [
    ("Conv3d", (3, 4, 3), dict(stride=2, padding=1), (2, 3, 5, 6, 7)),
    ("Conv3d", (4, 6, (1, 2, 3)), dict(groups=2, bias=False, dilation=(1, 2, 1)), (1, 4, 4, 6, 7)),
    ("Conv3d", (2, 2, 3), dict(padding="same"), (1, 2, 4, 4, 4)),
    ("Conv3d", (2, 2, (2, 3, 4)), dict(padding="same", dilation=(1, 2, 1)), (1, 2, 4, 5, 6)),
    ("Conv2d", (2, 3, 4), dict(padding="same"), (2, 2, 5, 6)),
    ("Conv1d", (2, 3, 2), dict(padding="valid"), (2, 2, 5)),
    ("ConvTranspose1d", (4, 6, 3), dict(stride=2, padding=1, output_padding=1, groups=2), (2, 4, 7)),
    ("ConvTranspose2d", (3, 5, (3, 2)), dict(stride=2, padding=(1, 0), dilation=2, bias=False), (2, 3, 4, 5)),
    ("ConvTranspose2d", (4, 4, 3), dict(stride=2, padding=1, output_padding=1, groups=4), (2, 4, 5, 5)),
    ("ConvTranspose3d", (2, 3, 2), dict(stride=2), (1, 2, 3, 3, 3)),
]


def _pair(name, args, kwargs):
    torch.manual_seed(0)
    t = getattr(torch.nn, name)(*args, **kwargs).double()
    r = getattr(rt.nn, name)(*args, **kwargs).double()
    r.load_state_dict({k: rt.from_numpy(v.detach().numpy().copy()) for k, v in t.state_dict().items()})
    return r, t


@pytest.mark.parametrize("name,args,kwargs,shape", MODULES, ids=[f"{m[0]}-{i}" for i, m in enumerate(MODULES)])
@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")
def test_module_state_forward_and_gradients_match_torch(name, args, kwargs, shape):
    r, t = _pair(name, args, kwargs)
    assert [(k, tuple(p.shape)) for k, p in r.named_parameters()] == \
        [(k, tuple(p.shape)) for k, p in t.named_parameters()]
    assert repr(r) == repr(t)
    a = np.random.default_rng(1).standard_normal(shape)
    x_r, x_t = rt.from_numpy(a.copy()).requires_grad_(), torch.from_numpy(a.copy()).requires_grad_()
    out_r, out_t = r(x_r), t(x_t)
    assert_close(out_r, out_t, "float64", "forward")
    out_r.square().sum().backward()
    out_t.square().sum().backward()
    assert_close(x_r.grad, x_t.grad, "float64", "input gradient")
    for (k, p_r), (_, p_t) in zip(r.named_parameters(), t.named_parameters()):
        assert_close(p_r.grad, p_t.grad, "float64", f"{k} gradient")


@pytest.mark.parametrize("name,args,kwargs,shape", MODULES, ids=[f"{m[0]}-{i}" for i, m in enumerate(MODULES)])
def test_module_init_follows_torch_bounds(name, args, kwargs, shape):
    """kaiming_uniform_(a=sqrt(5)): weight and bias in +-1/sqrt(fan_in), fan_in from the weight's dim 1."""
    rt.manual_seed(0)
    m = getattr(rt.nn, name)(*args, **kwargs)
    w = m.weight.detach().numpy()
    bound = 1 / math.sqrt(w.shape[1] * int(np.prod(w.shape[2:])))
    assert np.abs(w).max() <= bound + 1e-7 and np.abs(w).max() > 0.5 * bound
    if m.bias is not None:
        assert np.abs(m.bias.detach().numpy()).max() <= bound + 1e-7


@pytest.mark.parametrize("size", [(13, 13), (14, 14), (1, 4, 13, 14)])
def test_conv_transpose_output_size_matches_torch(size):
    r, t = _pair("ConvTranspose2d", (4, 4, 3), dict(stride=2, padding=1))
    a = np.random.default_rng(2).standard_normal((1, 4, 7, 7))
    out_r = r(rt.from_numpy(a.copy()), output_size=size)
    out_t = t(torch.from_numpy(a.copy()), output_size=size)
    assert_close(out_r, out_t, "float64", "forward with output_size")


def test_conv_transpose_output_size_out_of_range_is_refused():
    m = rt.nn.ConvTranspose2d(4, 4, 3, stride=2, padding=1)
    with pytest.raises(ValueError, match="valid sizes range from 13 to 14"):
        m(rt.randn(1, 4, 7, 7), output_size=(15, 13))
    with pytest.raises(ValueError, match="output_size must have 2 or 4 elements"):
        m(rt.randn(1, 4, 7, 7), output_size=(15,))


def test_conv_modules_are_exported_like_torch():
    for name in ("Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"):
        assert name in rt.nn.__all__ and name in rt.nn.modules.__all__
    for name in ("conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"):
        assert name in RF.__all__


def test_conv_errors_name_the_problem():
    x = rt.randn(1, 4, 5, 5)
    with pytest.raises(ValueError, match="output padding must be smaller than either stride or dilation"):
        RF.conv_transpose2d(x, rt.randn(4, 2, 3, 3), output_padding=1)
    with pytest.raises(ValueError, match="to have 3 channels, but got 4"):
        RF.conv_transpose2d(x, rt.randn(3, 2, 3, 3))
    with pytest.raises(ValueError, match="groups must be a positive divisor"):
        RF.conv_transpose2d(x, rt.randn(4, 2, 3, 3), groups=3)
    with pytest.raises(ValueError, match="4-D weight"):
        RF.conv_transpose2d(x, rt.randn(4, 2, 3))
    with pytest.raises(ValueError, match="is not supported: transposed convolutions take int padding"):
        RF.conv_transpose2d(x, rt.randn(4, 2, 3, 3), padding="same")
    with pytest.raises(ValueError, match="too small"):
        RF.conv_transpose2d(rt.randn(1, 4, 1, 1), rt.randn(4, 2, 1, 1), padding=1)
    with pytest.raises(ValueError, match="3-D .unbatched. or 4-D .batched. input"):
        RF.conv_transpose2d(rt.randn(4, 5), rt.randn(4, 2, 3, 3))
    with pytest.raises(ValueError, match="bias must have shape"):
        RF.conv_transpose2d(x, rt.randn(4, 2, 3, 3), rt.randn(3))
    v = rt.randn(1, 2, 4, 4, 4)
    with pytest.raises(ValueError, match="to have 4 channels, but got 2"):
        RF.conv3d(v, rt.randn(4, 2, 2, 2, 2), groups=2)
    with pytest.raises(ValueError, match="groups must be a positive divisor of the weight's 3 output channels"):
        RF.conv3d(v, rt.randn(3, 1, 2, 2, 2), groups=2)
    with pytest.raises(ValueError, match="smaller than the kernel"):
        RF.conv3d(v, rt.randn(3, 2, 5, 2, 2))
    with pytest.raises(ValueError, match="not supported for strided"):
        RF.conv3d(v, rt.randn(3, 2, 3, 3, 3), stride=2, padding="same")
    with pytest.raises(ValueError, match="invalid padding string 'full'"):
        RF.conv3d(v, rt.randn(3, 2, 3, 3, 3), padding="full")
    with pytest.raises(ValueError, match="stride must be positive"):
        RF.conv3d(v, rt.randn(3, 2, 3, 3, 3), stride=0)
    with pytest.raises(ValueError, match='Only "zeros" padding mode'):
        rt.nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="padding='same' is not supported"):
        rt.nn.ConvTranspose1d(2, 2, 3, padding="same")
    with pytest.raises(ValueError, match="must be divisible by groups"):
        rt.nn.ConvTranspose2d(3, 2, 3, groups=2)
