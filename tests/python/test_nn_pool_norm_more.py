"""Parity with PyTorch 1.13 for max/avg pooling in 1-D and 3-D, max pooling with return_indices (1-D, 2-D,
3-D), avg_pool2d/3d's divisor_override, adaptive max pooling (1-D, 2-D, with indices) and
adaptive_avg_pool1d; F.group_norm, F.instance_norm (running stats too), F.local_response_norm and the
modules GroupNorm, InstanceNorm1d/2d/3d, LocalResponseNorm, MaxPool1d/3d, AvgPool1d/3d,
AdaptiveMaxPool1d/2d, AdaptiveAvgPool1d: forward in float32 and float64, input gradients in float64,
parameters and state_dict, and the errors for bad arguments."""
import warnings

import numpy as np
import pytest

import rustytorch as rt
import rustytorch.nn.functional as RF
from conftest import assert_close

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402


def _input(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _run(fn_rt, fn_t, shape, dtype="float64", seed=0):
    a = _input(shape, dtype, seed)
    grad = dtype == "float64"
    x_r = rt.from_numpy(a.copy()).requires_grad_(grad)
    x_t = torch.from_numpy(a.copy()).requires_grad_(grad)
    out_r, out_t = fn_rt(x_r), fn_t(x_t)
    if isinstance(out_t, tuple):
        assert_close(out_r[1], out_t[1], "int64", "indices")
        out_r, out_t = out_r[0], out_t[0]
    assert_close(out_r, out_t, dtype, "forward")
    if grad:
        g = np.random.default_rng(seed + 1).standard_normal(tuple(out_t.shape))
        (out_r * rt.from_numpy(g.copy())).sum().backward()
        (out_t * torch.from_numpy(g)).sum().backward()
        assert_close(x_r.grad, x_t.grad, dtype, "input gradient")


# (function name, input shape, args, kwargs)
POOLS = [
    ("max_pool1d", (2, 3, 11), (3,), {}),
    ("max_pool1d", (2, 3, 11), (3, 2, 1, 2, True), {}),
    ("max_pool1d", (3, 11), (4,), dict(stride=3, padding=2, ceil_mode=True)),
    ("max_pool1d", (2, 3, 11), (3, 2, 1, 2, True, True), {}),
    ("max_pool1d", (3, 10), (2,), dict(return_indices=True)),
    ("max_pool2d", (2, 3, 9, 11), ((3, 2), (2, 1), 1, (1, 2), True, True), {}),
    ("max_pool2d", (3, 8, 8), (2,), dict(return_indices=True)),
    ("max_pool3d", (2, 3, 6, 7, 8), (2,), {}),
    ("max_pool3d", (2, 3, 7, 9, 8), ((3, 2, 2), (2, 1, 2), (1, 0, 1), (2, 1, 1), True), {}),
    ("max_pool3d", (3, 7, 9, 8), ((3, 2, 2), (2, 1, 2), (1, 0, 1), (2, 1, 1), True, True), {}),
    ("max_pool3d", (1, 2, 5, 5, 5), (3,), dict(stride=2, padding=1, return_indices=True)),
    ("avg_pool1d", (2, 3, 11), (3,), {}),
    ("avg_pool1d", (2, 3, 11), (3, 2, 1, True, False), {}),
    ("avg_pool1d", (3, 11), (4, 3, 2, True, True), {}),
    ("avg_pool2d", (2, 3, 9, 11), (3, 2, 1, True, True, 5), {}),
    ("avg_pool2d", (3, 9, 11), (2,), dict(divisor_override=3)),
    ("avg_pool3d", (2, 3, 6, 7, 8), (2,), {}),
    ("avg_pool3d", (2, 3, 7, 9, 8), ((3, 2, 3), (2, 1, 2), (1, 0, 1), True, False), {}),
    ("avg_pool3d", (2, 3, 7, 9, 8), ((3, 2, 3), (2, 1, 2), (1, 0, 1), True, True), {}),
    ("avg_pool3d", (3, 7, 9, 8), ((3, 2, 3), (2, 1, 2), (1, 0, 1), True, True, 7), {}),
    ("adaptive_max_pool1d", (2, 3, 11), (4,), {}),
    ("adaptive_max_pool1d", (3, 11), (4, True), {}),
    ("adaptive_max_pool1d", (2, 3, 5), (7,), dict(return_indices=True)),   # output larger than input
    ("adaptive_max_pool2d", (2, 3, 11, 7), ((4, None), True), {}),
    ("adaptive_max_pool2d", (3, 11, 7), ((5, 3),), {}),
    ("adaptive_max_pool2d", (2, 3, 8, 8), (1,), dict(return_indices=True)),
    ("adaptive_avg_pool1d", (2, 3, 11), (4,), {}),
    ("adaptive_avg_pool1d", (3, 11), (11,), {}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,shape,args,kwargs", POOLS, ids=[f"{p[0]}-{i}" for i, p in enumerate(POOLS)])
def test_pooling_matches_torch(name, shape, args, kwargs, dtype):
    _run(lambda x: getattr(RF, name)(x, *args, **kwargs), lambda x: getattr(TF, name)(x, *args, **kwargs),
         shape, dtype)


@pytest.mark.parametrize("name", ["max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
                                  "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices"])
def test_with_indices_functions_match_torch(name):
    n = int(name[-len("d_with_indices") - 1])
    shape = (2, 3) + (6,) * n
    _run(lambda x: getattr(RF, name)(x, 3), lambda x: getattr(TF, name)(x, 3), shape)


def test_max_pool_gradient_goes_to_the_first_of_tied_maxima():
    a = np.zeros((1, 1, 4, 4))
    for fn in ("max_pool2d", "max_pool3d"):
        x_r = rt.from_numpy(a.reshape((1, 1, 1, 4, 4) if fn == "max_pool3d" else a.shape).copy()).requires_grad_()
        x_t = torch.from_numpy(x_r.detach().numpy().copy()).requires_grad_()
        for ri in (False, True):
            x_r.grad, x_t.grad = None, None
            k = (1, 2, 2) if fn == "max_pool3d" else 2
            out_r = getattr(RF, fn)(x_r, k, return_indices=ri)
            out_t = getattr(TF, fn)(x_t, k, return_indices=ri)
            (out_r[0] if ri else out_r).sum().backward()
            (out_t[0] if ri else out_t).sum().backward()
            assert_close(x_r.grad, x_t.grad, "float64", f"{fn} return_indices={ri}")


# (module name, constructor args, constructor kwargs, input shape)
POOL_MODULES = [
    ("MaxPool1d", (3,), dict(stride=2, padding=1), (2, 3, 10)),
    ("MaxPool1d", (2,), dict(return_indices=True, ceil_mode=True), (2, 3, 9)),
    ("MaxPool2d", (2,), dict(return_indices=True), (2, 3, 6, 6)),
    ("MaxPool3d", (2,), dict(dilation=2), (2, 3, 6, 6, 6)),
    ("MaxPool3d", ((1, 2, 2),), dict(return_indices=True), (3, 4, 6, 6)),
    ("AvgPool1d", (3,), dict(stride=1, padding=1, count_include_pad=False), (2, 3, 8)),
    ("AvgPool2d", (3,), dict(stride=2, padding=1, divisor_override=2), (2, 3, 7, 7)),
    ("AvgPool3d", (2,), dict(ceil_mode=True), (2, 3, 5, 5, 5)),
    ("AvgPool3d", (3,), dict(stride=2, padding=1, divisor_override=4), (1, 2, 6, 6, 6)),
    ("AdaptiveMaxPool1d", (3,), {}, (2, 3, 8)),
    ("AdaptiveMaxPool2d", ((2, 3),), dict(return_indices=True), (2, 3, 7, 8)),
    ("AdaptiveAvgPool1d", (5,), {}, (2, 3, 8)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", POOL_MODULES,
                         ids=[f"{m[0]}-{i}" for i, m in enumerate(POOL_MODULES)])
def test_pooling_modules_match_torch(name, args, kwargs, shape):
    r, t = getattr(rt.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(r) == repr(t)
    assert list(r.state_dict()) == list(t.state_dict()) == []
    _run(r, t, shape)


# ---- normalisation ----

def _affine(c, seed=3):
    w, b = _input((c,), "float64", seed), _input((c,), "float64", seed + 1)
    return (rt.from_numpy(w.copy()).requires_grad_(), rt.from_numpy(b.copy()).requires_grad_(),
            torch.from_numpy(w.copy()).requires_grad_(), torch.from_numpy(b.copy()).requires_grad_())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,groups", [((2, 6, 4, 5), 3), ((2, 6, 7), 6), ((3, 4), 2), ((2, 4, 2, 3, 2), 1)],
                         ids=str)
def test_group_norm_matches_torch(shape, groups, dtype):
    _run(lambda x: RF.group_norm(x, groups, eps=1e-3), lambda x: TF.group_norm(x, groups, eps=1e-3), shape, dtype)


def test_group_norm_affine_gradients_match_torch():
    w_r, b_r, w_t, b_t = _affine(6)
    _run(lambda x: RF.group_norm(x, 2, w_r, b_r), lambda x: TF.group_norm(x, 2, w_t, b_t), (2, 6, 3, 4))
    assert_close(w_r.grad, w_t.grad, "float64", "weight gradient")
    assert_close(b_r.grad, b_t.grad, "float64", "bias gradient")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(2, 3, 7), (2, 3, 4, 5), (1, 2, 3, 4, 2)], ids=str)
def test_instance_norm_matches_torch(shape, dtype):
    _run(RF.instance_norm, TF.instance_norm, shape, dtype)


def test_instance_norm_affine_and_running_stats_match_torch():
    w_r, b_r, w_t, b_t = _affine(3)
    stats_r = [rt.zeros(3, dtype=rt.float64), rt.ones(3, dtype=rt.float64)]
    stats_t = [torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)]
    for step in range(3):
        _run(lambda x: RF.instance_norm(x, *stats_r, w_r, b_r, momentum=0.3),
             lambda x: TF.instance_norm(x, *stats_t, w_t, b_t, momentum=0.3), (4, 3, 5, 6), seed=step)
        assert_close(stats_r[0], stats_t[0], "float64", "running_mean")
        assert_close(stats_r[1], stats_t[1], "float64", "running_var")
    _run(lambda x: RF.instance_norm(x, *stats_r, w_r, b_r, use_input_stats=False),
         lambda x: TF.instance_norm(x, *stats_t, w_t, b_t, use_input_stats=False), (2, 3, 5))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,args", [((2, 6, 4, 5), (3,)), ((2, 6, 7), (4, 0.1, 0.6, 2.0)), ((2, 5, 3, 2, 2), (2,)),
                                        ((1, 3, 4), (8, 1e-2))], ids=str)
def test_local_response_norm_matches_torch(shape, args, dtype):
    _run(lambda x: RF.local_response_norm(x, *args), lambda x: TF.local_response_norm(x, *args), shape, dtype)


NORM_MODULES = [
    ("GroupNorm", (2, 6), {}, (2, 6, 3, 4)),
    ("GroupNorm", (3, 6), dict(affine=False, eps=1e-3), (2, 6, 5)),
    ("InstanceNorm1d", (3,), {}, (2, 3, 7)),
    ("InstanceNorm1d", (3,), dict(affine=True), (3, 7)),
    ("InstanceNorm2d", (3,), dict(affine=True, track_running_stats=True, momentum=0.2), (2, 3, 4, 5)),
    ("InstanceNorm3d", (2,), dict(track_running_stats=True), (2, 2, 3, 4, 2)),
    ("LocalResponseNorm", (3,), dict(alpha=0.1, beta=0.5, k=2.0), (2, 5, 4, 4)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", NORM_MODULES,
                         ids=[f"{m[0]}-{i}" for i, m in enumerate(NORM_MODULES)])
def test_norm_modules_match_torch_in_train_and_eval(name, args, kwargs, shape):
    t = getattr(torch.nn, name)(*args, **kwargs).double()
    r = getattr(rt.nn, name)(*args, **kwargs).double()
    assert repr(r) == repr(t)
    state = t.state_dict()
    assert list(r.state_dict()) == list(state)
    with torch.no_grad():
        for p in t.parameters():
            p.copy_(torch.randn(p.shape, dtype=torch.float64))
    r.load_state_dict({k: rt.from_numpy(v.detach().numpy().copy()) for k, v in t.state_dict().items()})
    for step in range(2):
        _run(r, t, shape, seed=step)
    for k, v in t.state_dict().items():
        assert_close(r.state_dict()[k], v, "float64" if v.is_floating_point() else "int64", k)
    for (k, p_r), (_, p_t) in zip(r.named_parameters(), t.named_parameters()):
        assert p_r.grad is not None and p_t.grad is not None, k
    r.eval(), t.eval()
    _run(r, t, shape, seed=5)


def test_instance_norm_channel_mismatch_warns_or_raises_as_torch_does():
    with pytest.warns(UserWarning, match="does not match num_features"):
        rt.nn.InstanceNorm1d(4)(rt.randn(2, 3, 5))
    with pytest.raises(ValueError, match="to match num_features \\(4\\), but got: 3"):
        rt.nn.InstanceNorm1d(4, affine=True)(rt.randn(2, 3, 5))
    with pytest.raises(ValueError, match="expected 3D .unbatched. or 4D .batched. input"):
        rt.nn.InstanceNorm2d(3)(rt.randn(3, 5))


def test_pool_norm_exports_match_torch():
    for name in ("MaxPool1d", "MaxPool3d", "AvgPool1d", "AvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
                 "AdaptiveAvgPool1d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
                 "LocalResponseNorm"):
        assert name in rt.nn.__all__ and hasattr(torch.nn, name)
    for name in ("max_pool1d", "max_pool3d", "avg_pool1d", "avg_pool3d", "adaptive_max_pool1d",
                 "adaptive_max_pool2d", "adaptive_avg_pool1d", "group_norm", "instance_norm", "local_response_norm"):
        assert name in RF.__all__ and hasattr(TF, name)


def test_pool_norm_errors_name_the_problem():
    x = rt.randn(2, 3, 8)
    with pytest.raises(ValueError, match="should be at most half of the kernel size"):
        RF.max_pool1d(x, 2, padding=2)
    with pytest.raises(ValueError, match="too small for kernel_size"):
        RF.max_pool1d(x, 9)
    with pytest.raises(ValueError, match="stride must be positive"):
        RF.avg_pool1d(x, 2, stride=0)
    with pytest.raises(ValueError, match="expected a 4-D .unbatched. or 5-D .batched. input"):
        RF.max_pool3d(x, 2)
    with pytest.raises(ValueError, match="kernel_size must be an int or a tuple of 3 ints"):
        RF.avg_pool3d(rt.randn(1, 1, 4, 4, 4), (2, 2))
    with pytest.raises(ValueError, match="divisor_override must be a non-zero int"):
        RF.avg_pool3d(rt.randn(1, 1, 4, 4, 4), 2, divisor_override=0)
    with pytest.raises(ValueError, match="output_size must hold positive ints"):
        RF.adaptive_max_pool2d(rt.randn(1, 1, 4, 4), (0, 2))
    with pytest.raises(ValueError, match="output_size must be an int or a tuple of 2 ints"):
        RF.adaptive_max_pool2d(rt.randn(1, 1, 4, 4), (1, 2, 3))
    with pytest.raises(ValueError, match="divisible by num_groups"):
        RF.group_norm(rt.randn(2, 6, 3), 4)
    with pytest.raises(ValueError, match="divisible by num_groups"):
        rt.nn.GroupNorm(4, 6)
    with pytest.raises(ValueError, match="weight must hold one value per channel"):
        RF.group_norm(rt.randn(2, 6, 3), 3, rt.ones(4))
    with pytest.raises(ValueError, match="more than 1 spatial element"):
        RF.instance_norm(rt.randn(2, 3, 1))
    with pytest.raises(ValueError, match="needs running_mean and running_var"):
        RF.instance_norm(x, use_input_stats=False)
    with pytest.raises(ValueError, match="momentum=None"):
        RF.instance_norm(x, rt.zeros(3), rt.ones(3), momentum=None)
    with pytest.raises(ValueError, match="3D or higher"):
        RF.local_response_norm(rt.randn(2, 3), 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert RF.local_response_norm(rt.randn(0, 3, 4), 2).shape == (0, 3, 4)
