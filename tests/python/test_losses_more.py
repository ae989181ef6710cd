"""Parity with PyTorch 1.13 for the losses composed in rt.nn.functional (huber, kl_div, poisson_nll,
gaussian_nll, cosine_embedding, margin_ranking, triplet_margin, hinge_embedding, soft_margin,
multilabel_soft_margin, multilabel_margin) and their modules: forward for every reduction on float32 and
float64, gradients of every differentiable input in float64, module constructor arguments and defaults,
and the errors for bad reductions, shapes and arguments."""
import inspect
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import rustytorch as rt
import rustytorch.nn.functional as RF
from conftest import assert_close

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402

REDUCTIONS = ("none", "mean", "sum")


@dataclass
class Case:
    name: str
    fn: Callable  # fn(F, *inputs, reduction=...) -> loss
    make: Callable  # make(rng) -> list of numpy arrays
    grad: tuple = (0,)  # indices of the inputs differentiated
    reductions: tuple = REDUCTIONS


def real(*shape):
    return lambda rng: rng.standard_normal(shape)


def signs(rng, *shape):
    return np.where(rng.standard_normal(shape) > 0, 1.0, -1.0)


def probabilities(rng, *shape, zeros=False):
    p = rng.uniform(0.05, 1.0, shape)
    if zeros:
        p[..., 0] = 0.0
    return p / p.sum(-1, keepdims=True)


def multilabel_targets(rng, n, c):
    t = -np.ones((n, c), dtype=np.int64)
    for i in range(n):
        labels = rng.permutation(c)[: rng.integers(0, c)]
        t[i, : len(labels)] = labels
    t[0, :2] = [1, 1]  # a repeated label counts twice, as in torch
    return t


CASES = [
    Case("huber", lambda F, x, y, **kw: F.huber_loss(x, y, **kw), lambda r: [r.standard_normal((4, 5)) * 2,
                                                                         r.standard_normal((4, 5))], (0, 1)),
    Case("huber_delta", lambda F, x, y, **kw: F.huber_loss(x, y, delta=0.5, **kw),
         lambda r: [r.standard_normal((3, 4)), r.standard_normal((3, 4))], (0, 1)),
    Case("kl_div", lambda F, x, t, **kw: F.kl_div(x, t, **kw),
         lambda r: [np.log(probabilities(r, 4, 5)), probabilities(r, 4, 5)], (0, 1),
         REDUCTIONS + ("batchmean",)),
    Case("kl_div_zero_target", lambda F, x, t, **kw: F.kl_div(x, t, **kw),
         lambda r: [r.standard_normal((4, 5)), probabilities(r, 4, 5, zeros=True)], (0,),
         REDUCTIONS + ("batchmean",)),
    Case("kl_div_log_target", lambda F, x, t, **kw: F.kl_div(x, t, log_target=True, **kw),
         lambda r: [r.standard_normal((2, 3, 4)), r.standard_normal((2, 3, 4))], (0, 1),
         REDUCTIONS + ("batchmean",)),
    Case("poisson_log_input", lambda F, x, t, **kw: F.poisson_nll_loss(x, t, **kw),
         lambda r: [r.standard_normal((4, 5)), r.poisson(2.0, (4, 5)).astype(np.float64)], (0, 1)),
    Case("poisson_rate_full", lambda F, x, t, **kw: F.poisson_nll_loss(x, t, log_input=False, full=True, **kw),
         lambda r: [r.uniform(0.1, 4.0, (4, 5)), r.uniform(0.1, 6.0, (4, 5))], (0, 1)),
    Case("poisson_log_input_full", lambda F, x, t, **kw: F.poisson_nll_loss(x, t, full=True, eps=1e-4, **kw),
         lambda r: [r.standard_normal((6,)), r.poisson(3.0, (6,)).astype(np.float64)], (0,)),
    Case("gaussian_same_shape", lambda F, x, t, v, **kw: F.gaussian_nll_loss(x, t, v, **kw),
         lambda r: [r.standard_normal((4, 3)), r.standard_normal((4, 3)), r.uniform(0.1, 2.0, (4, 3))], (0, 1, 2)),
    Case("gaussian_per_sample_var", lambda F, x, t, v, **kw: F.gaussian_nll_loss(x, t, v, full=True, **kw),
         lambda r: [r.standard_normal((4, 3)), r.standard_normal((4, 3)), r.uniform(0.1, 2.0, (4,))], (0, 1, 2)),
    Case("gaussian_var_last_dim_1", lambda F, x, t, v, **kw: F.gaussian_nll_loss(x, t, v, **kw),
         lambda r: [r.standard_normal((2, 4, 3)), r.standard_normal((2, 4, 3)), r.uniform(0.1, 2.0, (2, 4, 1))],
         (0, 1, 2)),
    Case("gaussian_var_below_eps", lambda F, x, t, v, **kw: F.gaussian_nll_loss(x, t, v, eps=1e-3, **kw),
         lambda r: [r.standard_normal((5,)), r.standard_normal((5,)), np.array([1e-5, 0.0, 0.5, 2e-3, 1.0])],
         (0, 1, 2)),
    Case("cosine_embedding", lambda F, a, b, t, **kw: F.cosine_embedding_loss(a, b, t, margin=0.2, **kw),
         lambda r: [r.standard_normal((6, 4)), r.standard_normal((6, 4)), signs(r, 6)], (0, 1)),
    Case("cosine_embedding_1d", lambda F, a, b, t, **kw: F.cosine_embedding_loss(a, b, t, margin=-0.5, **kw),
         lambda r: [r.standard_normal((5,)), r.standard_normal((5,)), np.array(-1.0)], (0, 1)),
    Case("margin_ranking", lambda F, a, b, t, **kw: F.margin_ranking_loss(a, b, t, margin=0.3, **kw),
         lambda r: [r.standard_normal((7,)), r.standard_normal((7,)), signs(r, 7)], (0, 1, 2)),
    Case("triplet", lambda F, a, p, n, **kw: F.triplet_margin_loss(a, p, n, **kw),
         lambda r: [r.standard_normal((5, 4)), r.standard_normal((5, 4)), r.standard_normal((5, 4))], (0, 1, 2)),
    Case("triplet_p1_swap", lambda F, a, p, n, **kw: F.triplet_margin_loss(a, p, n, margin=2.0, p=1, swap=True, **kw),
         lambda r: [r.standard_normal((6, 3)), r.standard_normal((6, 3)), r.standard_normal((6, 3))], (0, 1, 2)),
    Case("triplet_p3_1d", lambda F, a, p, n, **kw: F.triplet_margin_loss(a, p, n, margin=1.5, p=3.0, eps=1e-3, **kw),
         lambda r: [r.standard_normal((4,)), r.standard_normal((4,)), r.standard_normal((4,))], (0, 1, 2)),
    Case("hinge_embedding", lambda F, x, t, **kw: F.hinge_embedding_loss(x, t, **kw),
         lambda r: [r.standard_normal((4, 5)), signs(r, 4, 5)], (0,)),
    Case("hinge_embedding_margin", lambda F, x, t, **kw: F.hinge_embedding_loss(x, t, margin=0.5, **kw),
         lambda r: [r.standard_normal((8,)), np.array([1.0, -1.0, 0.5, 1.0, -1.0, 0.0, -1.0, 1.0])], (0,)),
    Case("soft_margin", lambda F, x, t, **kw: F.soft_margin_loss(x, t, **kw),
         lambda r: [r.standard_normal((4, 5)) * 3, signs(r, 4, 5)], (0,)),
    Case("multilabel_soft_margin", lambda F, x, t, **kw: F.multilabel_soft_margin_loss(x, t, **kw),
         lambda r: [r.standard_normal((4, 5)) * 3, (r.uniform(size=(4, 5)) > 0.5).astype(np.float64)], (0, 1)),
    Case("multilabel_soft_margin_weight", lambda F, x, t, w, **kw: F.multilabel_soft_margin_loss(x, t, weight=w, **kw),
         lambda r: [r.standard_normal((3, 6)), r.uniform(size=(3, 6)), r.uniform(0.5, 2.0, (6,))], (0, 1)),
    Case("multilabel_margin", lambda F, x, t, **kw: F.multilabel_margin_loss(x, t, **kw),
         lambda r: [r.standard_normal((5, 4)), multilabel_targets(r, 5, 4)], (0,)),
    Case("multilabel_margin_1d", lambda F, x, t, **kw: F.multilabel_margin_loss(x, t, **kw),
         lambda r: [r.standard_normal((6,)), np.array([5, 2, -1, 0, 1, 3])], (0,)),
]


def _inputs(case, dtype, grad):
    arrays = case.make(np.random.default_rng(abs(hash(case.name)) % 2**32))
    rt_in, th_in = [], []
    for i, a in enumerate(arrays):
        a = np.asarray(a)
        if a.dtype.kind == "f":
            a = a.astype(dtype)
        r, t = rt.tensor(a), torch.tensor(a)
        if grad and i in case.grad:
            r.requires_grad_()
            t.requires_grad_()
        rt_in.append(r)
        th_in.append(t)
    return rt_in, th_in


def _params():
    return [pytest.param(c, red, id=f"{c.name}-{red}") for c in CASES for red in c.reductions]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case,reduction", _params())
def test_forward_matches_torch(case, reduction, dtype):
    rt_in, th_in = _inputs(case, dtype, grad=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kl_div's 'mean' warning, in both libraries
        expected = case.fn(TF, *th_in, reduction=reduction)
        actual = case.fn(RF, *rt_in, reduction=reduction)
    assert str(actual.dtype).split(".")[-1] == dtype
    assert_close(actual, expected, dtype, f"{case.name} ({reduction}, {dtype})")


@pytest.mark.parametrize("case,reduction", _params())
def test_gradients_match_torch(case, reduction):
    rt_in, th_in = _inputs(case, "float64", grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = case.fn(TF, *th_in, reduction=reduction)
        actual = case.fn(RF, *rt_in, reduction=reduction)
    weight = np.random.default_rng(7).standard_normal(tuple(expected.shape))
    (expected * torch.tensor(weight)).sum().backward()
    (actual * rt.tensor(weight)).sum().backward()
    for i in case.grad:
        assert rt_in[i].grad is not None, f"{case.name}: input {i} got no gradient"
        assert_close(rt_in[i].grad, th_in[i].grad, "float64", f"{case.name} ({reduction}) grad of input {i}")


def test_soft_margin_losses_do_not_overflow_for_large_margins():
    x = rt.tensor([-800.0, 800.0], dtype=rt.float64)
    y = rt.tensor([1.0, -1.0], dtype=rt.float64)
    np.testing.assert_allclose(RF.soft_margin_loss(x, y, reduction="none").numpy(), [800.0, 800.0])
    loss = RF.multilabel_soft_margin_loss(x.reshape(1, 2), rt.tensor([[1.0, 0.0]], dtype=rt.float64))
    np.testing.assert_allclose(loss.numpy(), 800.0)


AUTOCAST_CALLS = {
    "huber_loss": lambda F, x, y, s, t: F.huber_loss(x, y),
    "kl_div": lambda F, x, y, s, t: F.kl_div(x, y, reduction="sum"),
    "poisson_nll_loss": lambda F, x, y, s, t: F.poisson_nll_loss(x, y),
    "gaussian_nll_loss": lambda F, x, y, s, t: F.gaussian_nll_loss(x, y, y.abs()),
    "cosine_embedding_loss": lambda F, x, y, s, t: F.cosine_embedding_loss(x, y, s),
    "margin_ranking_loss": lambda F, x, y, s, t: F.margin_ranking_loss(s, s, s),
    "triplet_margin_loss": lambda F, x, y, s, t: F.triplet_margin_loss(x, y, x),
    "hinge_embedding_loss": lambda F, x, y, s, t: F.hinge_embedding_loss(x, y),
    "soft_margin_loss": lambda F, x, y, s, t: F.soft_margin_loss(x, y),
    "multilabel_soft_margin_loss": lambda F, x, y, s, t: F.multilabel_soft_margin_loss(x, y),
    "multilabel_margin_loss": lambda F, x, y, s, t: F.multilabel_margin_loss(x, t),
}


@pytest.mark.parametrize("name", sorted(AUTOCAST_CALLS))
def test_cpu_autocast_dtype_matches_torch(name):
    """torch's CPU autocast runs its loss ops in float32; the Python compositions follow their parts."""
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), np.ones(3)]
    target = np.array([[1, -1, 0, 0], [3, 2, -1, 0], [0, -1, 0, 0]])
    rt_in = [rt.tensor(a).to(rt.bfloat16) for a in arrays] + [rt.tensor(target)]
    th_in = [torch.tensor(a).bfloat16() for a in arrays] + [torch.tensor(target)]
    with rt.autocast("cpu", dtype=rt.bfloat16):
        actual = AUTOCAST_CALLS[name](RF, *rt_in)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        expected = AUTOCAST_CALLS[name](TF, *th_in)
    assert str(actual.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]


# ---- modules ----

MODULES = ["L1Loss", "SmoothL1Loss", "BCELoss", "HuberLoss", "KLDivLoss", "PoissonNLLLoss", "GaussianNLLLoss",
           "CosineEmbeddingLoss", "MarginRankingLoss", "HingeEmbeddingLoss", "TripletMarginLoss", "SoftMarginLoss",
           "MultiLabelSoftMarginLoss", "MultiLabelMarginLoss"]


@pytest.mark.parametrize("name", MODULES)
def test_module_constructor_matches_torch(name):
    ours, theirs = inspect.signature(getattr(rt.nn, name).__init__), inspect.signature(getattr(torch.nn, name).__init__)
    assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == \
           [(p.name, p.kind, p.default) for p in theirs.parameters.values()]
    module, reference = getattr(rt.nn, name)(), getattr(torch.nn, name)()
    public = [k for k in vars(reference) if not k.startswith("_") and k != "training"]
    for attr in public:
        assert getattr(module, attr) == getattr(reference, attr), f"{name}.{attr}"
    assert name in rt.nn.__all__


MODULE_CALLS = [
    ("L1Loss", {"reduction": "sum"}, lambda r: [r.standard_normal((3, 4)), r.standard_normal((3, 4))]),
    ("SmoothL1Loss", {"beta": 0.5, "reduction": "none"},
     lambda r: [r.standard_normal((3, 4)), r.standard_normal((3, 4))]),
    ("BCELoss", {"weight": "w4"}, lambda r: [r.uniform(0.05, 0.95, (3, 4)), r.uniform(size=(3, 4))]),
    ("HuberLoss", {"delta": 0.7}, lambda r: [r.standard_normal((3, 4)), r.standard_normal((3, 4))]),
    ("KLDivLoss", {"reduction": "batchmean", "log_target": True},
     lambda r: [r.standard_normal((3, 4)), r.standard_normal((3, 4))]),
    ("PoissonNLLLoss", {"log_input": False, "full": True, "eps": 1e-3},
     lambda r: [r.uniform(0.1, 3.0, (3, 4)), r.uniform(0.0, 5.0, (3, 4))]),
    ("GaussianNLLLoss", {"full": True, "eps": 1e-2, "reduction": "sum"},
     lambda r: [r.standard_normal((3, 4)), r.standard_normal((3, 4)), r.uniform(0.0, 1.0, (3, 1))]),
    ("CosineEmbeddingLoss", {"margin": 0.1}, lambda r: [r.standard_normal((4, 3)), r.standard_normal((4, 3)),
                                                        signs(r, 4)]),
    ("MarginRankingLoss", {"margin": 0.5}, lambda r: [r.standard_normal((5,)), r.standard_normal((5,)), signs(r, 5)]),
    ("HingeEmbeddingLoss", {"margin": 2.0}, lambda r: [r.standard_normal((3, 4)), signs(r, 3, 4)]),
    ("TripletMarginLoss", {"margin": 0.5, "p": 1.0, "swap": True},
     lambda r: [r.standard_normal((4, 3)), r.standard_normal((4, 3)), r.standard_normal((4, 3))]),
    ("SoftMarginLoss", {"reduction": "none"}, lambda r: [r.standard_normal((3, 4)), signs(r, 3, 4)]),
    ("MultiLabelSoftMarginLoss", {"weight": "w4"}, lambda r: [r.standard_normal((3, 4)), r.uniform(size=(3, 4))]),
    ("MultiLabelMarginLoss", {}, lambda r: [r.standard_normal((3, 4)), multilabel_targets(r, 3, 4)]),
]


@pytest.mark.parametrize("name,kwargs,make", MODULE_CALLS, ids=[c[0] for c in MODULE_CALLS])
def test_module_forward_matches_torch(name, kwargs, make):
    rng = np.random.default_rng(3)
    arrays = make(rng)
    weight = rng.uniform(0.5, 1.5, (4,))
    rt_kw = {k: rt.tensor(weight) if v == "w4" else v for k, v in kwargs.items()}
    th_kw = {k: torch.tensor(weight) if v == "w4" else v for k, v in kwargs.items()}
    module, reference = getattr(rt.nn, name)(**rt_kw), getattr(torch.nn, name)(**th_kw)
    if "weight" in kwargs:
        assert "weight" in dict(module.named_buffers())
    actual = module(*[rt.tensor(a) for a in arrays])
    expected = reference(*[torch.tensor(a) for a in arrays])
    assert_close(actual, expected, "float64", name)


# ---- errors ----

def test_bad_reduction_strings_are_refused():
    x, y, s = rt.randn(3, 4), rt.randn(3, 4), rt.ones(3)
    calls = [lambda r: RF.huber_loss(x, y, reduction=r), lambda r: RF.kl_div(x, y, reduction=r),
             lambda r: RF.poisson_nll_loss(x, y, reduction=r),
             lambda r: RF.gaussian_nll_loss(x, y, y.abs(), reduction=r),
             lambda r: RF.cosine_embedding_loss(x, y, s, reduction=r),
             lambda r: RF.margin_ranking_loss(s, s, s, reduction=r),
             lambda r: RF.triplet_margin_loss(x, y, x, reduction=r),
             lambda r: RF.hinge_embedding_loss(x, y, reduction=r), lambda r: RF.soft_margin_loss(x, y, reduction=r),
             lambda r: RF.multilabel_soft_margin_loss(x, y, reduction=r),
             lambda r: RF.multilabel_margin_loss(x, rt.zeros(3, 4, dtype=rt.int64), reduction=r)]
    for call in calls:
        with pytest.raises(ValueError, match="elementwise is not a valid value for reduction"):
            call("elementwise")
    with pytest.raises(ValueError, match="batchmean is not a valid value"):
        RF.huber_loss(x, y, reduction="batchmean")
    for name in MODULES:
        with pytest.raises(ValueError, match="not a valid value for reduction"):
            getattr(rt.nn, name)(reduction="avg")
    assert rt.nn.KLDivLoss(reduction="batchmean").reduction == "batchmean"
    with pytest.raises(ValueError, match="batchmean is not a valid value"):
        rt.nn.HuberLoss(reduction="batchmean")


def test_kl_div_mean_warns_as_torch_does():
    with pytest.warns(UserWarning, match="batchmean"):
        RF.kl_div(rt.randn(2, 3), rt.rand(2, 3))


def test_mismatched_shapes():
    with pytest.raises(RuntimeError, match=r"huber_loss: target of size \[4\] cannot be broadcast to input of "
                                           r"size \[3, 5\]"):
        RF.huber_loss(rt.randn(3, 5), rt.randn(4))
    with pytest.warns(UserWarning, match="differs from the input.s"):
        RF.huber_loss(rt.randn(3, 5), rt.randn(5))
    with pytest.raises(ValueError, match="var is of incorrect size"):
        RF.gaussian_nll_loss(rt.randn(3, 4), rt.randn(3, 4), rt.ones(4))
    with pytest.raises(RuntimeError, match="1D target tensor expects 2D input tensors"):
        RF.cosine_embedding_loss(rt.randn(3, 4, 2), rt.randn(3, 4, 2), rt.ones(3))
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected"):
        RF.cosine_embedding_loss(rt.randn(3, 4), rt.randn(3, 4), rt.ones(3, 4))
    with pytest.raises(RuntimeError, match="same dimension"):
        RF.margin_ranking_loss(rt.randn(3), rt.randn(3, 1), rt.ones(3))
    with pytest.raises(RuntimeError, match="anchor 2D, positive 1D, and negative 2D"):
        RF.triplet_margin_loss(rt.randn(3, 4), rt.randn(4), rt.randn(3, 4))
    with pytest.raises(ValueError, match="must match input size"):
        RF.multilabel_soft_margin_loss(rt.randn(3, 4), rt.rand(3, 5))
    with pytest.raises(RuntimeError, match="inconsistent target size"):
        RF.multilabel_margin_loss(rt.randn(3, 4), rt.zeros(3, 5, dtype=rt.int64))


def test_invalid_arguments():
    with pytest.raises(ValueError, match="var has negative entry"):
        RF.gaussian_nll_loss(rt.randn(3), rt.randn(3), rt.tensor([1.0, -0.1, 2.0]))
    with pytest.raises(ValueError, match="delta must be positive"):
        RF.huber_loss(rt.randn(3), rt.randn(3), delta=0.0)
    with pytest.raises(RuntimeError, match="out of bounds"):
        RF.multilabel_margin_loss(rt.randn(2, 3), rt.tensor([[0, 3, -1], [1, -1, 5]]))
    with pytest.raises(RuntimeError, match="int64 class indices"):
        RF.multilabel_margin_loss(rt.randn(2, 3), rt.zeros(2, 3))
    # entries after the first -1 are ignored, whatever their value
    assert RF.multilabel_margin_loss(rt.randn(2, 3), rt.tensor([[0, -1, 7], [-1, 9, 9]])).dim() == 0
