"""Parity with PyTorch 1.13 for F.pad in its four modes and the padding layers, F.pixel_shuffle /
pixel_unshuffle and their layers, F.normalize, F.cosine_similarity, F.one_hot and nn.Unflatten (forward in
float32 and float64, gradients in float64), the statistics and straight-through gradient of
F.gumbel_softmax, and the errors for bad arguments."""
import numpy as np
import pytest

import rustytorch as rt
import rustytorch.nn.functional as RF
from conftest import assert_close

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402


def _run(fn_rt, fn_t, shape, dtype="float64", seed=0):
    a = np.asarray(np.random.default_rng(seed).standard_normal(shape).astype(dtype))
    x_r = rt.from_numpy(a.copy()).requires_grad_()
    x_t = torch.from_numpy(a.copy()).requires_grad_()
    out_r, out_t = fn_rt(x_r), fn_t(x_t)
    assert_close(out_r, out_t, dtype, "forward")
    if dtype == "float64":
        w = np.random.default_rng(seed + 1).standard_normal(tuple(out_t.shape))
        (out_r * rt.from_numpy(w.copy())).sum().backward()
        (out_t * torch.from_numpy(w)).sum().backward()
        assert_close(x_r.grad, x_t.grad, dtype, "input gradient")


# (input shape, pad): 1, 2 and 3 padded dims, batched and unbatched, with crops (negative entries).
PADS = [
    ((2, 3, 6), (2, 3)), ((3, 6), (1, 0)), ((2, 3, 6), (-1, 2)), ((2, 3, 6), (3, -2)),
    ((2, 3, 5, 6), (1, 2, 3, 0)), ((3, 5, 6), (2, 2, 1, 1)), ((1, 2, 5, 6), (-2, 1, 2, -1)),
    ((1, 2, 4, 5, 6), (1, 2, 0, 1, 3, 2)), ((2, 4, 5, 6), (1, 1, 1, 1, 1, 1)),
]
CIRCULAR_OK = [p for p in PADS if len(p[0]) == len(p[1]) // 2 + 2]  # torch 1.13: batched inputs only


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("shape,pad", PADS, ids=[f"{s}-{p}" for s, p in PADS])
def test_pad_modes_match_torch(mode, shape, pad):
    _run(lambda x: RF.pad(x, pad, mode=mode), lambda x: TF.pad(x, pad, mode=mode), shape)


@pytest.mark.parametrize("shape,pad", CIRCULAR_OK + [((2, 3, 4), (4, 4)), ((1, 2, 3, 4), (-1, 3, 3, 0))],
                         ids=lambda v: str(v))
def test_pad_circular_matches_torch(shape, pad):
    _run(lambda x: RF.pad(x, pad, mode="circular"), lambda x: TF.pad(x, pad, mode="circular"), shape)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("pad", [(1, 2), (0, 1, 2, 0), (1, 1, 1, 1, 1, 1, 1, 1), (-1, 2, 1, -2)], ids=str)
def test_pad_constant_matches_torch(pad, dtype):
    _run(lambda x: RF.pad(x, pad, value=1.5), lambda x: TF.pad(x, pad, value=1.5), (2, 3, 4, 5), dtype)


def test_pad_circular_unbatched_wraps_like_batched():
    """torch 1.13 refuses an unbatched circular pad; rt accepts it, as torch 2 does."""
    x = rt.randn(3, 5)
    assert_close(RF.pad(x, (2, 1), mode="circular"), RF.pad(x.unsqueeze(0), (2, 1), mode="circular")[0], "float32")


def test_pad_errors_name_the_problem():
    x = rt.randn(1, 2, 4)
    with pytest.raises(NotImplementedError, match="unrecognised padding mode 'foo'"):
        RF.pad(x, (1, 1), mode="foo")
    with pytest.raises(ValueError, match="divisible by 2"):
        RF.pad(x, (1, 1, 1), mode="reflect")
    with pytest.raises(ValueError, match="too large"):
        RF.pad(x, (1,) * 8)
    with pytest.raises(ValueError, match="doesn't take in value"):
        RF.pad(x, (1, 1), mode="reflect", value=2.0)
    with pytest.raises(NotImplementedError, match="2-D or 3-D input, got 4-D"):
        RF.pad(rt.randn(1, 1, 2, 4), (1, 1), mode="replicate")
    with pytest.raises(ValueError, match="less than the corresponding input dimension"):
        RF.pad(x, (4, 0), mode="reflect")
    with pytest.raises(ValueError, match="wraps around more than once"):
        RF.pad(x, (5, 0), mode="circular")
    with pytest.raises(ValueError, match="too small"):
        RF.pad(x, (-2, -2), mode="replicate")
    with pytest.raises(ValueError, match="larger than dim"):
        RF.pad(x, (-3, -2))


PAD_LAYERS = [
    ("ZeroPad2d", lambda nn: nn.ZeroPad2d(2), (2, 3, 4, 5)),
    ("ZeroPad2d_tuple", lambda nn: nn.ZeroPad2d((1, 0, 2, 3)), (3, 4, 5)),
    ("ConstantPad1d", lambda nn: nn.ConstantPad1d((1, 2), 3.5), (2, 3, 4)),
    ("ConstantPad2d", lambda nn: nn.ConstantPad2d(1, -1.0), (2, 3, 4, 5)),
    ("ConstantPad3d", lambda nn: nn.ConstantPad3d((1, 0, 0, 1, 2, 0), 0.5), (1, 2, 3, 4, 5)),
    ("ReflectionPad1d", lambda nn: nn.ReflectionPad1d((2, 1)), (2, 3, 4)),
    ("ReflectionPad2d", lambda nn: nn.ReflectionPad2d(1), (2, 3, 4, 5)),
    ("ReflectionPad2d_unbatched", lambda nn: nn.ReflectionPad2d((0, 2, 1, 3)), (3, 4, 5)),
    ("ReflectionPad3d", lambda nn: nn.ReflectionPad3d(1), (1, 2, 3, 4, 5)),
    ("ReplicationPad1d", lambda nn: nn.ReplicationPad1d(3), (2, 3, 4)),
    ("ReplicationPad2d", lambda nn: nn.ReplicationPad2d((1, 2, 0, 3)), (2, 3, 4, 5)),
    ("ReplicationPad3d", lambda nn: nn.ReplicationPad3d((1, 2, 3, 1, 2, 0)), (2, 3, 4, 5)),
]


@pytest.mark.parametrize("name,make,shape", PAD_LAYERS, ids=[p[0] for p in PAD_LAYERS])
def test_padding_layers_match_torch(name, make, shape):
    _run(make(rt.nn), make(torch.nn), shape)
    assert repr(make(rt.nn)) == repr(make(torch.nn))


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_newer_torch_padding_layers_match_f_pad(dims):
    """ZeroPad1d/3d and CircularPad1d/2d/3d come from torch 2: checked against torch 1.13's F.pad."""
    shape = (2, 3, 4, 5, 6)[: dims + 2]
    pad = (1, 2, 2, 1, 0, 3)[: 2 * dims]
    zero = getattr(rt.nn, f"ZeroPad{dims}d")(pad)
    circular = getattr(rt.nn, f"CircularPad{dims}d")(pad)
    _run(zero, lambda x: TF.pad(x, pad), shape)
    _run(circular, lambda x: TF.pad(x, pad, mode="circular"), shape)


def test_padding_layer_errors():
    with pytest.raises(ValueError, match="tuple of 4 ints"):
        rt.nn.ReflectionPad2d((1, 2))
    with pytest.raises(ValueError, match="3-D .* or 4-D"):
        rt.nn.ZeroPad2d(1)(rt.randn(4, 5))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,r", [((2, 8, 3, 4), 2), ((18, 2, 3), 3), ((2, 1, 4, 3, 2), 2), ((1, 5, 2, 2), 1)],
                         ids=str)
def test_pixel_shuffle_matches_torch(shape, r, dtype):
    _run(lambda x: RF.pixel_shuffle(x, r), lambda x: TF.pixel_shuffle(x, r), shape, dtype)
    out_shape = tuple(TF.pixel_shuffle(torch.zeros(shape), r).shape)
    _run(lambda x: RF.pixel_unshuffle(x, r), lambda x: TF.pixel_unshuffle(x, r), out_shape, dtype)
    _run(rt.nn.PixelShuffle(r), torch.nn.PixelShuffle(r), shape, dtype)
    _run(rt.nn.PixelUnshuffle(r), torch.nn.PixelUnshuffle(r), out_shape, dtype)


def test_pixel_shuffle_round_trip_and_errors():
    x = rt.randn(2, 12, 3, 5)
    assert rt.equal(RF.pixel_unshuffle(RF.pixel_shuffle(x, 2), 2), x)
    assert repr(rt.nn.PixelShuffle(2)) == repr(torch.nn.PixelShuffle(2))
    assert repr(rt.nn.PixelUnshuffle(3)) == repr(torch.nn.PixelUnshuffle(3))
    with pytest.raises(ValueError, match="divisible by the square of upscale_factor"):
        RF.pixel_shuffle(rt.randn(1, 5, 2, 2), 2)
    with pytest.raises(ValueError, match="at least 3 dimensions"):
        RF.pixel_shuffle(rt.randn(4, 2), 2)
    with pytest.raises(ValueError, match="height to be divisible by downscale_factor"):
        RF.pixel_unshuffle(rt.randn(1, 1, 3, 4), 2)
    with pytest.raises(ValueError, match="positive upscale_factor"):
        RF.pixel_shuffle(x, 0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normalize_and_cosine_similarity_match_torch(dtype):
    _run(lambda x: RF.normalize(x), lambda x: TF.normalize(x), (3, 4, 2), dtype)
    _run(lambda x: RF.normalize(x, p=1.0, dim=-1), lambda x: TF.normalize(x, p=1.0, dim=-1), (3, 4), dtype)
    _run(lambda x: RF.cosine_similarity(x[0], x[1], dim=1), lambda x: TF.cosine_similarity(x[0], x[1], dim=1),
         (2, 5, 4, 3), dtype)
    _run(lambda x: RF.cosine_similarity(x[0], x[1, :1], dim=-1),
         lambda x: TF.cosine_similarity(x[0], x[1, :1], dim=-1), (2, 4, 6), dtype)


def test_one_hot_and_unflatten_match_torch():
    idx = np.array([[0, 3], [2, 1]])
    assert np.array_equal(RF.one_hot(rt.from_numpy(idx.copy()), 5).numpy(),
                          TF.one_hot(torch.from_numpy(idx), 5).numpy())
    assert np.array_equal(RF.one_hot(rt.from_numpy(idx.copy())).numpy(), TF.one_hot(torch.from_numpy(idx)).numpy())
    _run(rt.nn.Unflatten(1, (2, 3)), torch.nn.Unflatten(1, (2, 3)), (4, 6, 2))
    _run(rt.nn.Unflatten(-1, (2, -1)), torch.nn.Unflatten(-1, (2, -1)), (4, 6))


def test_gumbel_softmax_soft_samples_follow_the_softmax():
    rt.manual_seed(0)
    logits = rt.tensor([[1.0, 0.0, -1.0, 2.0]], dtype=rt.float64).expand(20000, 4)
    y = RF.gumbel_softmax(logits, tau=1.0)
    assert tuple(y.shape) == (20000, 4)
    np.testing.assert_allclose(y.sum(1).numpy(), 1.0, rtol=1e-12)  # sum(-1) of 16384+ rows crashes the engine
    # argmax of logits + Gumbel noise is an exact sample of softmax(logits) (the Gumbel-max trick)
    freq = np.bincount(y.argmax(1).numpy(), minlength=4) / 20000
    probs = np.exp([1.0, 0.0, -1.0, 2.0]) / np.exp([1.0, 0.0, -1.0, 2.0]).sum()
    np.testing.assert_allclose(freq, probs, atol=0.015)
    # a low temperature pushes the soft samples towards one-hot
    sharp = RF.gumbel_softmax(logits, tau=0.05).amax(1).numpy()
    assert np.median(sharp) > 0.99


def test_gumbel_softmax_hard_is_one_hot_with_the_soft_gradient():
    logits = rt.randn(6, 5, dtype=rt.float64).requires_grad_()
    w = rt.randn(6, 5, dtype=rt.float64)
    rt.manual_seed(3)
    hard = RF.gumbel_softmax(logits, tau=0.7, hard=True, dim=1)
    assert set(np.unique(hard.detach().numpy())) <= {0.0, 1.0}
    np.testing.assert_array_equal(hard.detach().numpy().sum(1), 1.0)
    (hard * w).sum().backward()
    grad_hard = logits.grad.clone()
    logits.grad = None
    rt.manual_seed(3)  # the same noise: the soft sample whose argmax `hard` is
    soft = RF.gumbel_softmax(logits, tau=0.7, hard=False, dim=1)
    np.testing.assert_array_equal(hard.detach().numpy(), np.eye(5)[soft.detach().numpy().argmax(1)])
    (soft * w).sum().backward()
    assert_close(grad_hard, logits.grad, "float64", "straight-through gradient")
    # the soft gradient is torch's softmax gradient at the same noisy logits: tau * log(soft) is
    # logits + noise up to a per-row constant, which softmax ignores
    t = torch.from_numpy((soft.detach().log() * 0.7).numpy()).requires_grad_()
    (torch.softmax(t / 0.7, 1) * torch.from_numpy(w.numpy())).sum().backward()
    assert_close(logits.grad, t.grad, "float64", "soft gradient")


def test_gumbel_softmax_other_dim_and_errors():
    rt.manual_seed(1)
    y = RF.gumbel_softmax(rt.randn(3, 4, 2), hard=True, dim=1)
    np.testing.assert_array_equal(y.numpy().sum(1), 1.0)
    with pytest.raises(ValueError, match="tau must be positive"):
        RF.gumbel_softmax(rt.randn(3), tau=0.0)


def test_clip_grad_value_and_parameter_vectors_match_torch():
    grads = [np.random.default_rng(i).standard_normal(s) for i, s in enumerate([(3, 4), (5,), (2, 2, 2)])]
    ps_r = [rt.nn.Parameter(rt.zeros(*g.shape, dtype=rt.float64)) for g in grads]
    ps_t = [torch.nn.Parameter(torch.zeros(*g.shape, dtype=torch.float64)) for g in grads]
    for p, q, g in zip(ps_r, ps_t, grads):
        p.grad, q.grad = rt.from_numpy(g.copy()), torch.from_numpy(g.copy())
    ps_r[1].grad = None  # a parameter without a gradient is skipped
    ps_t[1].grad = None
    rt.nn.utils.clip_grad_value_(ps_r, 0.3)
    torch.nn.utils.clip_grad_value_(ps_t, 0.3)
    for p, q in zip(ps_r, ps_t):
        assert (p.grad is None) == (q.grad is None)
        if p.grad is not None:
            assert_close(p.grad, q.grad, "float64")
    vec = np.arange(12 + 5 + 8, dtype=np.float64)
    rt.nn.utils.vector_to_parameters(rt.from_numpy(vec.copy()), ps_r)
    torch.nn.utils.vector_to_parameters(torch.from_numpy(vec), ps_t)
    for p, q in zip(ps_r, ps_t):
        assert_close(p, q, "float64")
    assert_close(rt.nn.utils.parameters_to_vector(ps_r), torch.nn.utils.parameters_to_vector(ps_t), "float64")
    with pytest.raises(ValueError, match="exactly that length"):
        rt.nn.utils.vector_to_parameters(rt.zeros(3, dtype=rt.float64), ps_r)
