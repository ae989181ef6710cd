"""Parity with PyTorch 1.13 for the sampling and patch functionals and their layers: F.interpolate (nearest,
nearest-exact, area, linear, bilinear, bicubic, trilinear) with nn.Upsample / UpsamplingNearest2d /
UpsamplingBilinear2d, F.grid_sample and F.affine_grid, F.unfold / F.fold with nn.Unfold / nn.Fold, and
F.embedding_bag with nn.EmbeddingBag: forward in float32 and float64, gradients in float64 for every
differentiable argument, edge cases, and the errors for bad arguments."""
import warnings

import numpy as np
import pytest

import rustytorch as rt
import rustytorch.nn.functional as RF
from conftest import assert_close

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402


def _run(fn_rt, fn_t, arrays, dtype="float64", seed=0, grads=None):
    """Calls both functions on copies of `arrays` and compares the outputs and, in float64, the gradients
    of the arrays whose positions are in `grads` (all by default)."""
    arrays = [np.asarray(a, dtype=dtype) for a in arrays]
    grads = range(len(arrays)) if grads is None else grads
    want = dtype == "float64"
    xs_r = [rt.from_numpy(a.copy()).requires_grad_(want and i in grads) for i, a in enumerate(arrays)]
    xs_t = [torch.from_numpy(a.copy()).requires_grad_(want and i in grads) for i, a in enumerate(arrays)]
    out_r, out_t = fn_rt(*xs_r), fn_t(*xs_t)
    assert_close(out_r, out_t, dtype, "forward")
    if want:
        w = np.random.default_rng(seed + 1).standard_normal(tuple(out_t.shape))
        (out_r * rt.from_numpy(w.copy())).sum().backward()
        (out_t * torch.from_numpy(w)).sum().backward()
        for i in grads:
            assert xs_r[i].grad is not None, f"argument {i} got no gradient"
            assert_close(xs_r[i].grad, xs_t[i].grad, dtype, f"gradient of argument {i}")
    return out_r


def _randn(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# ---------------------------------------------------------------- interpolate

INTERPOLATE = [
    ((2, 3, 5), dict(scale_factor=2)),
    ((2, 3, 7), dict(size=3)),
    ((2, 3, 7), dict(scale_factor=1.6)),
    ((2, 2, 5, 7), dict(size=(9, 4))),
    ((2, 2, 5, 7), dict(scale_factor=(1.7, 0.6))),
    ((1, 2, 3, 4, 5), dict(scale_factor=1.4)),
    ((1, 2, 5, 2, 3), dict(scale_factor=1.7)),
    ((2, 3, 5), dict(scale_factor=2.1, mode="nearest-exact")),
    ((2, 2, 5, 7), dict(size=(9, 4), mode="nearest-exact")),
    ((1, 2, 3, 4, 5), dict(scale_factor=(1.5, 0.7, 2.0), mode="nearest-exact")),
    ((2, 3, 9), dict(size=4, mode="area")),
    ((2, 2, 7, 9), dict(size=(3, 4), mode="area")),
    ((2, 2, 7, 9), dict(scale_factor=0.45, mode="area")),
    ((2, 2, 4, 5), dict(size=(9, 7), mode="area")),
    ((1, 2, 4, 5, 6), dict(size=(3, 7, 2), mode="area")),
    ((2, 3, 7), dict(size=10, mode="linear")),
    ((2, 3, 7), dict(size=4, mode="linear", align_corners=True)),
    ((2, 3, 7), dict(scale_factor=1.6, mode="linear")),
    ((2, 3, 7), dict(scale_factor=1.6, mode="linear", recompute_scale_factor=True)),
    ((2, 3, 1), dict(size=5, mode="linear", align_corners=True)),
    ((2, 3, 5), dict(size=1, mode="linear", align_corners=True)),
    ((2, 2, 5, 6), dict(scale_factor=(1.7, 0.6), mode="bilinear")),
    ((2, 2, 5, 6), dict(size=(8, 11), mode="bilinear", align_corners=True)),
    ((2, 2, 5, 6), dict(scale_factor=2, mode="bilinear")),
    ((2, 2, 5, 6), dict(size=(3, 2), mode="bilinear")),
    ((2, 2, 5, 6), dict(scale_factor=(1.7, 0.6), mode="bicubic")),
    ((2, 2, 5, 6), dict(size=(9, 13), mode="bicubic", align_corners=True)),
    ((2, 2, 5, 6), dict(scale_factor=1.7, mode="bicubic", recompute_scale_factor=True)),
    ((1, 2, 2, 3), dict(size=(7, 8), mode="bicubic")),  # taps clamped at both borders
    ((1, 2, 3, 4, 5), dict(size=(5, 7, 3), mode="trilinear")),
    ((1, 2, 3, 4, 5), dict(scale_factor=(2.0, 0.5, 1.3), mode="trilinear", align_corners=True)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,kwargs", INTERPOLATE, ids=[f"{s}-{k}" for s, k in INTERPOLATE])
def test_interpolate_matches_torch(shape, kwargs, dtype):
    _run(lambda x: RF.interpolate(x, **kwargs), lambda x: TF.interpolate(x, **kwargs), [_randn(shape)], dtype)


@pytest.mark.parametrize("shape,scale_factor", [((2, 3, 5), 2.1), ((2, 3, 10), 1.05), ((1, 2, 3, 5), 2.1),
                                                ((1, 2, 2, 3, 10), 1.05)], ids=str)
def test_interpolate_nearest_follows_the_scale_and_its_gradient_is_the_adjoint(shape, scale_factor):
    """With out == 2 * in or out == in, torch 1.13's nearest forward (on contiguous inputs) reads index
    floor(i / scale_factor), but its backward takes a shortcut (i // 2 or i): the two disagree. rt
    matches the forward, and its gradient is the forward's adjoint."""
    a = _randn(shape)
    x = rt.from_numpy(a.copy()).requires_grad_()
    y = RF.interpolate(x, scale_factor=scale_factor)
    assert_close(y, TF.interpolate(torch.from_numpy(a), scale_factor=scale_factor), "float64")
    g = _randn(tuple(y.shape), seed=1)
    (y * rt.from_numpy(g.copy())).sum().backward()
    want = g
    for axis in range(len(shape) - 1, 1, -1):  # the adjoint: sum each output into the input it reads
        index = np.minimum(np.floor(np.arange(want.shape[axis]) / scale_factor).astype(int), shape[axis] - 1)
        summed = np.zeros(want.shape[:axis] + (shape[axis],) + want.shape[axis + 1:])
        np.add.at(np.moveaxis(summed, axis, 0), index, np.moveaxis(want, axis, 0))
        want = summed
    assert_close(x.grad, torch.from_numpy(want), "float64")


def test_interpolate_nearest_same_size_copies():
    x = rt.randn(1, 2, 3, 4).requires_grad_()
    y = RF.interpolate(x, size=(3, 4))
    assert not y._shares_storage(x)
    assert_close(y, x, "float32")
    y.sum().backward()
    assert_close(x.grad, rt.ones(1, 2, 3, 4), "float32")


def test_interpolate_nearest_on_integers_keeps_dtype():
    x = rt.arange(6).reshape(1, 1, 2, 3)
    y = RF.interpolate(x, scale_factor=2)
    assert y.dtype == rt.int64
    assert y.tolist() == TF.interpolate(torch.arange(6.).reshape(1, 1, 2, 3), scale_factor=2).long().tolist()


def test_interpolate_errors_name_the_problem():
    x3, x4 = rt.randn(1, 2, 5), rt.randn(1, 2, 5, 5)
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        RF.interpolate(x4, scale_factor=2, align_corners=True)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        RF.interpolate(x4, size=3, scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor"):
        RF.interpolate(x4)
    with pytest.raises(ValueError, match="same number of spatial dimensions"):
        RF.interpolate(x4, size=(2, 3, 4))
    with pytest.raises(ValueError, match="scale_factor must have the same number"):
        RF.interpolate(x4, scale_factor=(2.0,))
    with pytest.raises(ValueError, match="recompute_scale_factor is not meaningful"):
        RF.interpolate(x4, size=3, recompute_scale_factor=True)
    with pytest.raises(NotImplementedError, match="Got 3D input, but bilinear mode needs 4D input"):
        RF.interpolate(x3, size=3, mode="bilinear")
    with pytest.raises(NotImplementedError, match="Got 4D input, but linear mode needs 3D input"):
        RF.interpolate(x4, size=3, mode="linear")
    with pytest.raises(NotImplementedError, match="bicubic mode needs 4D"):
        RF.interpolate(rt.randn(1, 1, 2, 2, 2), size=3, mode="bicubic")
    with pytest.raises(NotImplementedError, match="only 3-D, 4-D and 5-D inputs"):
        RF.interpolate(rt.randn(2, 5), size=3)
    with pytest.raises(NotImplementedError, match="unknown mode 'cubic'"):
        RF.interpolate(x4, size=3, mode="cubic")
    with pytest.raises(NotImplementedError, match="antialias=True"):
        RF.interpolate(x4, size=3, mode="bilinear", antialias=True)
    with pytest.raises(TypeError, match="floating-point input"):
        RF.interpolate(rt.arange(5).reshape(1, 1, 5), size=3, mode="linear")
    with pytest.raises(ValueError, match="greater than 0"):
        RF.interpolate(x4, scale_factor=0.1)


def test_deprecated_upsample_functions_warn_and_interpolate():
    x = rt.randn(1, 2, 3, 4)
    with pytest.warns(UserWarning, match="upsample is deprecated"):
        assert_close(RF.upsample(x, scale_factor=2), RF.interpolate(x, scale_factor=2), "float32")
    with pytest.warns(UserWarning, match="upsample_nearest is deprecated"):
        assert_close(RF.upsample_nearest(x, size=5), RF.interpolate(x, size=5), "float32")
    with pytest.warns(UserWarning, match="upsample_bilinear is deprecated"):
        assert_close(RF.upsample_bilinear(x, scale_factor=2),
                     RF.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True), "float32")


UPSAMPLE_LAYERS = [
    ("Upsample", dict(scale_factor=2)),
    ("Upsample", dict(size=(7, 3), mode="bilinear")),
    ("Upsample", dict(scale_factor=(1.5, 2.5), mode="bicubic", align_corners=True)),
    ("Upsample", dict(scale_factor=1.7, mode="bilinear", recompute_scale_factor=True)),
    ("UpsamplingNearest2d", dict(size=9)),
    ("UpsamplingBilinear2d", dict(scale_factor=2)),
]


@pytest.mark.parametrize("name,kwargs", UPSAMPLE_LAYERS, ids=[f"{n}-{k}" for n, k in UPSAMPLE_LAYERS])
def test_upsample_layers_match_torch(name, kwargs):
    layer_r, layer_t = getattr(rt.nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs)
    assert repr(layer_r) == repr(layer_t)
    assert list(layer_r.parameters()) == []
    _run(layer_r, layer_t, [_randn((2, 3, 4, 5))])


# ---------------------------------------------------------------- grid_sample, affine_grid

GRID_CASES = [(m, p, a) for m in ("bilinear", "nearest") for p in ("zeros", "border", "reflection")
              for a in (False, True)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode,padding_mode,align_corners", GRID_CASES, ids=[str(c) for c in GRID_CASES])
def test_grid_sample_matches_torch(mode, padding_mode, align_corners, dtype):
    rng = np.random.default_rng(3)
    grid = rng.uniform(-2.5, 2.5, (2, 4, 7, 2))  # well outside [-1, 1]: several reflections
    kwargs = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    _run(lambda x, g: RF.grid_sample(x, g, **kwargs), lambda x, g: TF.grid_sample(x, g, **kwargs),
         [_randn((2, 3, 5, 6)), grid], dtype)


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_on_exact_borders_and_pixel_centres(padding_mode, align_corners):
    """Grid points on the image border, on pixel centres and just outside: the clipped coordinates pass
    no gradient to the grid, as in torch."""
    xs = [-1.0, -0.75, -0.5, 0.0, 0.25, 0.5, 1.0, 1.2, -1.2]
    grid = np.array([[[[x, y] for x in xs] for y in xs[::-1]]])
    kwargs = dict(padding_mode=padding_mode, align_corners=align_corners)
    _run(lambda x, g: RF.grid_sample(x, g, **kwargs), lambda x, g: TF.grid_sample(x, g, **kwargs),
         [_randn((1, 2, 4, 4)), grid])


def test_grid_sample_single_pixel_and_unit_axis():
    for kwargs in (dict(padding_mode="reflection", align_corners=True),
                   dict(padding_mode="border", align_corners=False),
                   dict(padding_mode="zeros", align_corners=False)):
        grid = np.random.default_rng(1).uniform(-1.5, 1.5, (1, 3, 2, 2))
        _run(lambda x, g: RF.grid_sample(x, g, **kwargs), lambda x, g: TF.grid_sample(x, g, **kwargs),
             [_randn((1, 2, 1, 3)), grid])


def test_grid_sample_identity_affine_grid_returns_input():
    x = rt.randn(2, 3, 5, 6, dtype=rt.float64)
    theta = rt.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]] * 2, dtype=rt.float64)
    for align_corners in (False, True):
        grid = RF.affine_grid(theta, [2, 3, 5, 6], align_corners=align_corners)
        assert_close(RF.grid_sample(x, grid, align_corners=align_corners), x, "float64")


def test_grid_sample_errors_name_the_problem():
    x, g = rt.randn(1, 2, 4, 4), rt.zeros(1, 3, 3, 2)
    with pytest.raises(ValueError, match="expected padding_mode to be 'zeros', 'border', or 'reflection'"):
        RF.grid_sample(x, g, padding_mode="circular")
    with pytest.raises(ValueError, match="expected mode to be"):
        RF.grid_sample(x, g, mode="area")
    with pytest.raises(NotImplementedError, match="mode='bicubic'"):
        RF.grid_sample(x, g, mode="bicubic")
    with pytest.raises(NotImplementedError, match="5-D"):
        RF.grid_sample(rt.randn(1, 1, 2, 2, 2), rt.zeros(1, 1, 1, 1, 3))
    with pytest.raises(ValueError, match="grid \\[N, H_out, W_out, 2\\]"):
        RF.grid_sample(x, rt.zeros(1, 3, 3, 3))
    with pytest.raises(ValueError, match="same batch size"):
        RF.grid_sample(x, rt.zeros(2, 3, 3, 2))
    with pytest.raises(TypeError, match="same floating-point dtype"):
        RF.grid_sample(x, rt.zeros(1, 3, 3, 2, dtype=rt.float64))


@pytest.mark.filterwarnings("ignore:Since version 1.3.0, affine_grid behavior has changed")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("size", [[2, 3, 4, 5], [2, 1, 1, 6], [2, 3, 4, 5, 3], [2, 1, 1, 2, 1]], ids=str)
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_matches_torch(size, align_corners, dtype):
    theta = _randn((2, 2, 3) if len(size) == 4 else (2, 3, 4))
    _run(lambda t: RF.affine_grid(t, size, align_corners=align_corners),
         lambda t: TF.affine_grid(t, size, align_corners=align_corners), [theta], dtype)


def test_affine_grid_errors_name_the_problem():
    with pytest.raises(ValueError, match="Nx2x3 for size"):
        RF.affine_grid(rt.zeros(2, 3, 3), [2, 1, 4, 4])
    with pytest.raises(ValueError, match="Nx3x4 for size"):
        RF.affine_grid(rt.zeros(1, 2, 3), [1, 1, 4, 4, 4])
    with pytest.raises(NotImplementedError, match="only supports 4D and 5D sizes"):
        RF.affine_grid(rt.zeros(1, 2, 3), [1, 4, 4])
    with pytest.raises(ValueError, match="non-zero, positive output size"):
        RF.affine_grid(rt.zeros(1, 2, 3), [1, 1, 0, 4])
    with pytest.raises(TypeError, match="floating-point"):
        RF.affine_grid(rt.zeros(1, 2, 3, dtype=rt.int64), [1, 1, 4, 4])


# ---------------------------------------------------------------- unfold, fold

PATCHES = [
    dict(kernel_size=3),
    dict(kernel_size=(2, 3), stride=(2, 1)),
    dict(kernel_size=2, padding=1, stride=2),
    dict(kernel_size=(3, 2), dilation=(2, 1), padding=(1, 2), stride=(1, 3)),
    dict(kernel_size=(1, 1)),
    dict(kernel_size=(7, 8)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kwargs", PATCHES, ids=str)
def test_unfold_matches_torch(kwargs, dtype):
    _run(lambda x: RF.unfold(x, **kwargs), lambda x: TF.unfold(x, **kwargs), [_randn((2, 3, 7, 8))], dtype)
    _run(lambda x: RF.unfold(x, **kwargs), lambda x: TF.unfold(x, **kwargs), [_randn((3, 7, 8))], dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kwargs", PATCHES, ids=str)
def test_fold_matches_torch(kwargs, dtype):
    blocks = TF.unfold(torch.zeros(1, 1, 7, 8), **kwargs).shape
    shape = (2, 3 * blocks[1], blocks[2])
    _run(lambda c: RF.fold(c, (7, 8), **kwargs), lambda c: TF.fold(c, (7, 8), **kwargs), [_randn(shape)], dtype)
    _run(lambda c: RF.fold(c, (7, 8), **kwargs), lambda c: TF.fold(c, (7, 8), **kwargs), [_randn(shape[1:])],
         dtype)


def test_fold_of_unfold_counts_each_pixel_once_per_covering_block():
    x = rt.ones(1, 2, 5, 6, dtype=rt.float64)
    kwargs = dict(kernel_size=3, padding=1, stride=2)
    got = RF.fold(RF.unfold(x, **kwargs), (5, 6), **kwargs)
    want = TF.fold(TF.unfold(torch.ones(1, 2, 5, 6, dtype=torch.float64), **kwargs), (5, 6), **kwargs)
    assert_close(got, want, "float64")
    assert float(got.max().item()) > 1  # the blocks overlap, so fold really sums


def test_fold_and_unfold_layers_match_torch():
    for name, args in (("Unfold", dict(kernel_size=(2, 3), dilation=2, padding=1, stride=(1, 2))),
                       ("Fold", dict(output_size=(5, 6), kernel_size=2, stride=2, padding=1))):
        layer_r, layer_t = getattr(rt.nn, name)(**args), getattr(torch.nn, name)(**args)
        assert repr(layer_r) == repr(layer_t)
        shape = (2, 3, 5, 6) if name == "Unfold" else (2, 3 * 4, 12)
        _run(layer_r, layer_t, [_randn(shape)])


def test_unfold_fold_errors_name_the_problem():
    with pytest.raises(ValueError, match="calculated shape of the array of sliding blocks as \\(0, 0\\)"):
        RF.unfold(rt.randn(1, 3, 2, 2), 3)
    with pytest.raises(ValueError, match="stride should be greater than zero"):
        RF.unfold(rt.randn(1, 3, 5, 5), 2, stride=0)
    with pytest.raises(ValueError, match="padding should be non-negative"):
        RF.unfold(rt.randn(1, 3, 5, 5), 2, padding=-1)
    with pytest.raises(ValueError, match="kernel_size equals to 2, but got size 3"):
        RF.unfold(rt.randn(1, 3, 5, 5), (2, 2, 2))
    with pytest.raises(ValueError, match="3-D \\(unbatched\\) or 4-D"):
        RF.unfold(rt.randn(5, 5), 2)
    with pytest.raises(ValueError, match="number of sliding blocks 4 \\* 4 = 16, but got input.size\\(2\\)=15"):
        RF.fold(rt.randn(1, 12, 15), (5, 5), 2)
    with pytest.raises(ValueError, match="divisible by the product of kernel_size"):
        RF.fold(rt.randn(1, 13, 16), (5, 5), 2)
    with pytest.raises(ValueError, match="2-D \\(unbatched\\) or 3-D"):
        RF.fold(rt.randn(1, 1, 4, 16), (5, 5), 2)


# ---------------------------------------------------------------- embedding_bag

BAGS = [  # (indices, offsets, kwargs); the last offset equals len(indices) with include_last_offset, as torch
    # 1.13 corrupts its heap in the backward otherwise
    ([1, 2, 4, 5, 4, 3, 2, 9], [0, 4, 4, 5], {}),  # with an empty bag
    ([[1, 2, 4], [5, 4, 3]], None, {}),
    ([1, 2, 4, 5, 4, 3, 2, 9], [0, 4, 4, 5], dict(padding_idx=4)),
    ([4, 4, 5, 4, 3, 2, 9], [0, 2, 4], dict(padding_idx=-6)),  # a bag of padding only
    ([1, 2, 4, 5, 4, 3, 2, 9], [0, 3, 3, 8], dict(include_last_offset=True)),
    ([4, 4, 5, 4, 3, 2, 9], [0, 7, 7], {}),  # trailing empty bags
    ([3, 3, 3, 1], [0], {}),  # repeated rows: their gradients add up
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("indices,offsets,kwargs", BAGS, ids=[str(b) for b in BAGS])
def test_embedding_bag_matches_torch(indices, offsets, kwargs, mode, dtype):
    def call(lib, fn):
        wrap = rt.tensor if lib is rt else torch.tensor
        return lambda w: fn(wrap(indices), w, None if offsets is None else wrap(offsets), mode=mode, **kwargs)
    _run(call(rt, RF.embedding_bag), call(torch, TF.embedding_bag), [_randn((10, 4))], dtype)


@pytest.mark.parametrize("indices,offsets,kwargs", BAGS, ids=[str(b) for b in BAGS])
def test_embedding_bag_per_sample_weights_match_torch(indices, offsets, kwargs):
    psw = np.random.default_rng(2).standard_normal(np.shape(indices))

    def call(lib, fn):
        wrap = rt.tensor if lib is rt else torch.tensor
        return lambda w, p: fn(wrap(indices), w, None if offsets is None else wrap(offsets), mode="sum",
                               per_sample_weights=p, **kwargs)
    _run(call(rt, RF.embedding_bag), call(torch, TF.embedding_bag), [_randn((10, 4)), psw])


def test_embedding_bag_ignores_indices_after_the_last_offset():
    """With include_last_offset=True the last offset ends the last bag. (torch 1.13 agrees in the forward
    but corrupts its heap when it runs this case, so the expected values are computed here.)"""
    w_np = _randn((10, 3))
    idx, offsets = [1, 2, 4, 5, 4, 3, 2, 9], [0, 2, 2, 6]
    bags = [idx[0:2], [], idx[2:6]]
    want = {"sum": [w_np[b].sum(0) if b else np.zeros(3) for b in bags],
            "mean": [w_np[b].mean(0) if b else np.zeros(3) for b in bags],
            "max": [w_np[b].max(0) if b else np.zeros(3) for b in bags]}
    for mode in ("sum", "mean", "max"):
        w = rt.from_numpy(w_np.copy()).requires_grad_()
        out = RF.embedding_bag(rt.tensor(idx), w, rt.tensor(offsets), mode=mode, include_last_offset=True)
        assert_close(out, torch.tensor(np.array(want[mode])), "float64", mode)
        if mode == "sum":
            out.sum().backward()
            counts = np.zeros((10, 3))
            np.add.at(counts, idx[:6], 1)
            assert_close(w.grad, torch.from_numpy(counts), "float64")


def test_embedding_bag_int32_indices_and_no_bags():
    w = _randn((6, 2))
    _run(lambda w: RF.embedding_bag(rt.tensor([1, 2, 5]).int(), w, rt.tensor([0, 1]).int()),
         lambda w: TF.embedding_bag(torch.tensor([1, 2, 5]).int(), w, torch.tensor([0, 1]).int()), [w])
    out = RF.embedding_bag(rt.tensor([1, 2], dtype=rt.int64), rt.randn(6, 2), rt.tensor([0]), include_last_offset=True)
    assert tuple(out.shape) == (0, 2)
    for mode in ("sum", "mean", "max"):
        empty = RF.embedding_bag(rt.tensor([], dtype=rt.int64), rt.randn(6, 2), rt.tensor([0, 0]), mode=mode)
        assert empty.tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_embedding_bag_errors_name_the_problem():
    w, idx = rt.randn(6, 2), rt.tensor([1, 2, 3, 4])
    with pytest.raises(ValueError, match="offsets\\[0\\] has to be 0"):
        RF.embedding_bag(idx, w, rt.tensor([1, 3]))
    with pytest.raises(ValueError, match="offsets must not decrease"):
        RF.embedding_bag(idx, w, rt.tensor([0, 3, 2]))
    with pytest.raises(ValueError, match="can not be greater than input's length 4"):
        RF.embedding_bag(idx, w, rt.tensor([0, 2, 7]))
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        RF.embedding_bag(idx, w)
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        RF.embedding_bag(idx.reshape(2, 2), w, rt.tensor([0]))
    with pytest.raises(ValueError, match="include_last_offset=True needs a 1-D input"):
        RF.embedding_bag(idx.reshape(2, 2), w, include_last_offset=True)
    with pytest.raises(ValueError, match="input has to be 1D or 2D"):
        RF.embedding_bag(idx.reshape(1, 2, 2), w)
    with pytest.raises(ValueError, match="weight has to be a 2D Tensor"):
        RF.embedding_bag(idx, rt.randn(6), rt.tensor([0]))
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        RF.embedding_bag(idx, w, rt.tensor([0]), mode="min")
    with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
        RF.embedding_bag(idx, w, rt.tensor([0]), per_sample_weights=rt.ones(4))
    with pytest.raises(ValueError, match="must have the same shape as the input"):
        RF.embedding_bag(idx, w, rt.tensor([0]), mode="sum", per_sample_weights=rt.ones(3))
    with pytest.raises(ValueError, match="padding_idx must be within num_embeddings"):
        RF.embedding_bag(idx, w, rt.tensor([0]), padding_idx=6)
    with pytest.raises(IndexError, match="indices must lie in \\[0, 6\\)"):
        RF.embedding_bag(rt.tensor([1, 9]), w, rt.tensor([0]))
    with pytest.raises(TypeError, match="integer tensors"):
        RF.embedding_bag(rt.tensor([1.0, 2.0]), w, rt.tensor([0]))
    for name, value in (("max_norm", 1.0), ("scale_grad_by_freq", True), ("sparse", True)):
        with pytest.raises(NotImplementedError, match=name):
            RF.embedding_bag(idx, w, rt.tensor([0]), **{name: value})


@pytest.mark.parametrize("kwargs", [dict(), dict(mode="sum", padding_idx=2), dict(mode="max"),
                                    dict(mode="mean", include_last_offset=True)], ids=str)
def test_embedding_bag_layer_matches_torch(kwargs):
    w = _randn((10, 4))
    bag_r = rt.nn.EmbeddingBag.from_pretrained(rt.from_numpy(w.copy()), freeze=False, **kwargs)
    bag_t = torch.nn.EmbeddingBag.from_pretrained(torch.from_numpy(w.copy()), freeze=False, **kwargs)
    assert repr(bag_r) == repr(bag_t)
    idx, offsets = [1, 2, 4, 5, 2, 3, 2, 9], [0, 3, 3, 8]
    out_r = bag_r(rt.tensor(idx), rt.tensor(offsets))
    out_t = bag_t(torch.tensor(idx), torch.tensor(offsets))
    assert_close(out_r, out_t, "float64")
    out_r.pow(2).sum().backward()
    out_t.pow(2).sum().backward()
    assert_close(bag_r.weight.grad, bag_t.weight.grad, "float64")


def test_embedding_bag_layer_init_and_freeze():
    bag = rt.nn.EmbeddingBag(20, 5, mode="sum", padding_idx=-1)
    assert bag.padding_idx == 19 and bag.weight.requires_grad
    assert tuple(bag.weight.shape) == (20, 5) and bag.weight[19].abs().sum().item() == 0
    assert [n for n, _ in bag.named_parameters()] == ["weight"]
    out = bag(rt.tensor([[1, 19], [19, 19]]))
    assert_close(out[0], bag.weight[1], "float32")
    assert out[1].abs().sum().item() == 0
    frozen = rt.nn.EmbeddingBag.from_pretrained(rt.randn(4, 3))
    assert not frozen.weight.requires_grad and frozen.mode == "mean"
    with pytest.raises(ValueError, match="2-dimensional"):
        rt.nn.EmbeddingBag.from_pretrained(rt.randn(4))
    with pytest.raises(NotImplementedError, match="max_norm"):
        rt.nn.EmbeddingBag(4, 3, max_norm=1.0)
    with pytest.raises(ValueError, match="mode has to be one of"):
        rt.nn.EmbeddingBag(4, 3, mode="prod")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rt.nn.EmbeddingBag(4, 3, padding_idx=0)(rt.tensor([0, 1]), rt.tensor([0, 1]))
