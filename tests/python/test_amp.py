"""rt.autocast and rt.amp.GradScaler: the ops' output dtypes match torch.autocast's on the CPU, a bfloat16
training run follows torch's, and GradScaler skips steps with inf/NaN gradients, backs off and grows its scale,
and keeps torch's state machine and state_dict."""
import math
import warnings

import numpy as np
import pytest
import torch

import rustytorch as rt
import rustytorch.nn  # noqa: F401
import rustytorch.nn.functional as F
import rustytorch.optim  # noqa: F401
import torch.nn.functional as TF


def pair(shape, seed, dtype=np.float32):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return rt.tensor(a), torch.from_numpy(a.copy())


def name(dtype):
    return str(dtype).split(".")[-1]


X, TX = pair((4, 8), 1)
W, TW = pair((6, 8), 2)
B, TB = pair((6,), 3)
TARGET, TTARGET = rt.tensor([0, 1, 2, 5]), torch.tensor([0, 1, 2, 5])

# (name, rt call, torch call): each run under autocast("cpu", bfloat16) on float32 inputs.
OPS = [
    ("linear", lambda: F.linear(X, W, B), lambda: TF.linear(TX, TW, TB)),
    ("matmul", lambda: X @ W.t(), lambda: TX @ TW.t()),
    ("mm", lambda: rt.mm(X, W.t()), lambda: torch.mm(TX, TW.t())),
    ("bmm", lambda: rt.bmm(X[None], W.t()[None]), lambda: torch.bmm(TX[None], TW.t()[None])),
    ("addmm", lambda: rt.addmm(B, X, W.t()), lambda: torch.addmm(TB, TX, TW.t())),
    ("conv2d", lambda: F.conv2d(X[None, None], W[None, None, :3, :3]),
     lambda: TF.conv2d(TX[None, None], TW[None, None, :3, :3])),
    ("cross_entropy", lambda: F.cross_entropy(X @ W.t(), TARGET), lambda: TF.cross_entropy(TX @ TW.t(), TTARGET)),
    ("nll_loss", lambda: F.nll_loss(X @ W.t(), TARGET), lambda: TF.nll_loss(TX @ TW.t(), TTARGET)),
    ("mse_loss", lambda: F.mse_loss(X @ W.t(), X @ W.t()), lambda: TF.mse_loss(TX @ TW.t(), TX @ TW.t())),
    ("bce_with_logits", lambda: F.binary_cross_entropy_with_logits(X @ W.t(), (X @ W.t()).sigmoid()),
     lambda: TF.binary_cross_entropy_with_logits(TX @ TW.t(), (TX @ TW.t()).sigmoid())),
    ("prod", lambda: (X @ W.t()).prod(), lambda: (TX @ TW.t()).prod()),
    ("softmax", lambda: F.softmax(X @ W.t(), -1), lambda: TF.softmax(TX @ TW.t(), -1)),
    ("log_softmax", lambda: F.log_softmax(X @ W.t(), -1), lambda: TF.log_softmax(TX @ TW.t(), -1)),
    ("layer_norm", lambda: F.layer_norm(X @ W.t(), (6,)), lambda: TF.layer_norm(TX @ TW.t(), (6,))),
    ("sum", lambda: (X @ W.t()).sum(), lambda: (TX @ TW.t()).sum()),
    ("exp", lambda: (X @ W.t()).exp(), lambda: (TX @ TW.t()).exp()),
    ("relu", lambda: (X @ W.t()).relu(), lambda: (TX @ TW.t()).relu()),
    ("mean", lambda: (X @ W.t()).mean(), lambda: (TX @ TW.t()).mean()),
    ("cat", lambda: rt.cat([X @ W.t(), B[None]]), lambda: torch.cat([TX @ TW.t(), TB[None]])),
    ("stack", lambda: rt.stack([X @ W.t(), X @ W.t()]), lambda: torch.stack([TX @ TW.t(), TX @ TW.t()])),
    ("float64 linear", lambda: F.linear(X.double(), W.double()), lambda: TF.linear(TX.double(), TW.double())),
    ("conv1d", lambda: F.conv1d(X[None], W[:, :4, None]), lambda: TF.conv1d(TX[None], TW[:, :4, None])),
    ("pow", lambda: (X @ W.t()).pow(2), lambda: (TX @ TW.t()).pow(2)),
    ("log", lambda: (X @ W.t()).abs().log(), lambda: (TX @ TW.t()).abs().log()),
    ("rsqrt", lambda: (X @ W.t()).abs().rsqrt(), lambda: (TX @ TW.t()).abs().rsqrt()),
    ("norm", lambda: (X @ W.t()).norm(), lambda: (TX @ TW.t()).norm()),
    ("logsumexp", lambda: (X @ W.t()).logsumexp(-1), lambda: (TX @ TW.t()).logsumexp(-1)),
    ("l1_loss", lambda: F.l1_loss(X @ W.t(), X @ W.t() + 1), lambda: TF.l1_loss(TX @ TW.t(), TX @ TW.t() + 1)),
    ("smooth_l1_loss", lambda: F.smooth_l1_loss(X @ W.t(), (X @ W.t()) * 2),
     lambda: TF.smooth_l1_loss(TX @ TW.t(), (TX @ TW.t()) * 2)),
    ("binary_cross_entropy", lambda: F.binary_cross_entropy((X @ W.t()).sigmoid(), (X @ W.t()).sigmoid()),
     lambda: TF.binary_cross_entropy((TX @ TW.t()).sigmoid(), (TX @ TW.t()).sigmoid())),
]


@pytest.mark.parametrize("op", OPS, ids=[o[0] for o in OPS])
def test_cpu_autocast_output_dtypes_match_torch(op):
    _, ours, theirs = op
    with rt.autocast("cpu"):
        got = ours()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        want = theirs()
    assert name(got.dtype) == name(want.dtype)
    assert np.allclose(got.float().detach().numpy(), want.float().detach().numpy(), rtol=3e-2, atol=3e-2)


def test_an_explicit_dtype_is_respected():
    # torch: "ops called with an explicit dtype=... argument are not eligible" (its CPU prod lacks bfloat16)
    with rt.autocast("cpu"):
        assert (X @ W.t()).prod().dtype == rt.float32
        assert (X @ W.t()).prod(dtype=rt.bfloat16).dtype == rt.bfloat16
        assert (X @ W.t()).sum(dtype=rt.float16).dtype == rt.float16


def test_autocast_state_nesting_decorator_and_errors():
    assert not rt.is_autocast_enabled("cpu")
    assert rt.get_autocast_dtype("cpu") == rt.bfloat16 and rt.get_autocast_dtype("cuda") == rt.float16
    with rt.autocast("cpu"):
        assert rt.is_autocast_enabled("cpu") and not rt.is_autocast_enabled("cuda")
        assert (X @ W.t()).dtype == rt.bfloat16
        with rt.autocast("cpu", enabled=False):
            assert (X @ W.t()).dtype == rt.float32
            with rt.autocast("cpu", dtype=rt.float16):
                assert (X @ W.t()).dtype == rt.float16
        assert (X @ W.t()).dtype == rt.bfloat16
    assert not rt.is_autocast_enabled("cpu")

    @rt.autocast("cpu")
    def forward(x):
        return F.linear(x, W)

    assert forward(X).dtype == rt.bfloat16
    assert F.linear(X, W).dtype == rt.float32

    with pytest.raises(ValueError, match="not supported"):
        rt.autocast("mps")
    with pytest.raises(ValueError, match="lower-precision"):
        rt.autocast("cpu", dtype=rt.float32)
    with pytest.raises(ValueError, match="str"):
        rt.autocast(rt.device("cpu"))


def test_state_functions_with_torch_names():
    rt.set_autocast_enabled("cpu", True)
    try:
        assert rt.is_autocast_enabled("cpu") and rt.is_autocast_cpu_enabled()
        assert F.linear(X, W).dtype == rt.bfloat16
        rt.set_autocast_cpu_dtype(rt.float16)
        assert rt.get_autocast_cpu_dtype() == rt.float16 and F.linear(X, W).dtype == rt.float16
    finally:
        rt.set_autocast_cpu_dtype(rt.bfloat16)
        rt.set_autocast_cpu_enabled(False)
        rt.clear_autocast_cache()
    assert not rt.is_autocast_enabled("cpu") and F.linear(X, W).dtype == rt.float32
    rt.set_autocast_enabled(False)  # the one-argument form: CUDA
    assert not rt.is_autocast_enabled("cuda") and rt.get_autocast_gpu_dtype() == rt.float16
    rt.set_autocast_cache_enabled(False)
    try:
        assert not rt.is_autocast_cache_enabled()
        with rt.autocast("cpu"):
            assert not rt.is_autocast_cache_enabled()
    finally:
        rt.set_autocast_cache_enabled(True)
    assert rt.is_autocast_cache_enabled()


def test_several_backwards_in_one_region_reuse_parameters_safely():
    # Each loss has its own backward (gradient accumulation); a parameter's cached cast must stay usable.
    model = rt.nn.Linear(8, 2)
    m_t = torch.nn.Linear(8, 2)
    m_t.load_state_dict({k: torch.from_numpy(np.array(v.detach().numpy(), copy=True))
                         for k, v in model.state_dict().items()})
    xs = [pair((4, 8), seed) for seed in (11, 12, 13)]
    with rt.autocast("cpu"):
        for x, _ in xs:
            model(x).float().sum().backward()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        for _, tx in xs:
            m_t(tx).float().sum().backward()
    np.testing.assert_allclose(model.weight.grad.numpy(), m_t.weight.grad.numpy(), rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(model.bias.grad.numpy(), m_t.bias.grad.numpy(), rtol=1e-6)


def test_autocast_exception_inside_region_restores_state():
    with pytest.raises(RuntimeError):
        with rt.autocast("cpu"):
            raise RuntimeError("boom")
    assert not rt.is_autocast_enabled("cpu")
    assert F.linear(X, W).dtype == rt.float32


@pytest.mark.skipif(rt.cuda.is_available(), reason="checks the behaviour without a GPU")
def test_cuda_autocast_and_scaler_without_gpu_warn_and_disable():
    with pytest.warns(UserWarning, match="CUDA is not available"):
        ac = rt.autocast("cuda")
    with ac:
        assert not rt.is_autocast_enabled("cuda")
    with pytest.warns(UserWarning, match="CUDA is not available"):
        scaler = rt.amp.GradScaler()
    assert not scaler.is_enabled() and scaler.get_scale() == 1.0
    loss = F.linear(X, W).sum()
    assert scaler.scale(loss) is loss


def test_cuda_amp_spellings_are_deprecated_aliases():
    from rustytorch.cuda.amp import GradScaler, autocast
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        autocast(enabled=False)
        GradScaler(enabled=False)
    assert sum(issubclass(w.category, FutureWarning) for w in caught) == 2
    assert issubclass(autocast, rt.amp.autocast) and issubclass(GradScaler, rt.amp.GradScaler)
    from rustytorch.cuda.amp import custom_bwd, custom_fwd
    with pytest.warns(FutureWarning, match="custom_fwd"):
        custom_fwd(lambda ctx, x: x)
    with pytest.warns(FutureWarning, match="custom_bwd"):
        custom_bwd(lambda ctx, g: g)


def make_matmul_function(seen, **fwd_options):
    """A custom matmul whose forward and backward record the dtypes their products ran in."""
    class MatMul(rt.autograd.Function):
        @staticmethod
        @rt.amp.custom_fwd(device_type="cpu", **fwd_options)
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            out = a @ b
            seen["forward"] = (a.dtype, b.dtype, out.dtype)
            return out

        @staticmethod
        @rt.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            grad_a = grad @ b.t()
            seen["backward"] = grad_a.dtype
            return grad_a, a.t() @ grad

    return MatMul


def test_custom_fwd_runs_forward_in_the_region_and_custom_bwd_restores_it_in_backward():
    seen = {}
    a = rt.randn(4, 8, requires_grad=True)
    b = rt.randn(8, 3, requires_grad=True)
    with rt.autocast("cpu"):
        out = make_matmul_function(seen).apply(a, b)
    assert seen["forward"] == (rt.float32, rt.float32, rt.bfloat16)
    out.float().sum().backward()  # outside the region: custom_bwd reopens it for backward
    assert seen["backward"] == rt.bfloat16
    assert a.grad.dtype == rt.float32 and b.grad.dtype == rt.float32
    seen.clear()
    out = make_matmul_function(seen).apply(a, b)  # no region: float32 throughout
    out.sum().backward()
    assert seen == {"forward": (rt.float32, rt.float32, rt.float32), "backward": rt.float32}


def test_custom_fwd_cast_inputs_casts_arguments_and_switches_autocast_off():
    seen = {}
    a = rt.randn(4, 8, requires_grad=True)
    b = rt.randn(8, 3, requires_grad=True)
    with rt.autocast("cpu"):
        out = make_matmul_function(seen, cast_inputs=rt.float32).apply(a.bfloat16(), b.bfloat16())
    assert seen["forward"] == (rt.float32, rt.float32, rt.float32)
    out.sum().backward()
    assert seen["backward"] == rt.float32  # the forward ran without autocast, so does backward
    assert a.grad.dtype == rt.float32 and a.grad.shape == (4, 8)
    with pytest.raises(ValueError, match="expected `device_type` of type `str`"):
        rt.amp.custom_fwd(device_type=None)
    with pytest.raises(TypeError):
        rt.amp.custom_fwd(lambda ctx, x: x)  # device_type is required, as in torch


def test_a_custom_backward_autocasts_when_backward_is_called_inside_a_region():
    seen = {}

    class Plain(rt.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(b)
            return a @ b

        @staticmethod
        def backward(ctx, grad):
            (b,) = ctx.saved_tensors
            grad_a = grad @ b.t()
            seen["backward"] = grad_a.dtype
            return grad_a, None

    a = rt.randn(2, 4, requires_grad=True)
    b = rt.randn(4, 3)
    Plain.apply(a, b).sum().backward()
    assert seen["backward"] == rt.float32
    with rt.autocast("cpu"):  # torch runs backward under the caller's autocast state; so do custom functions
        Plain.apply(a, b).sum().backward()
    assert seen["backward"] == rt.bfloat16 and a.grad.dtype == rt.float32


def make_models(seed=0):
    rt.manual_seed(seed)
    m_rt = rt.nn.Sequential(rt.nn.Linear(8, 32), rt.nn.ReLU(), rt.nn.Linear(32, 4))
    m_t = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    m_t.load_state_dict({k: torch.from_numpy(np.array(v.detach().numpy(), copy=True))
                         for k, v in m_rt.state_dict().items()})
    return m_rt, m_t


def test_bfloat16_training_follows_torch_and_keeps_float32_weights():
    m_rt, m_t = make_models()
    o_rt = rt.optim.SGD(m_rt.parameters(), lr=0.1)
    o_t = torch.optim.SGD(m_t.parameters(), lr=0.1)
    rng = np.random.default_rng(5)
    losses_rt, losses_t = [], []
    for _ in range(10):
        xb = rng.standard_normal((16, 8)).astype(np.float32)
        yb = rng.integers(0, 4, 16)
        o_rt.zero_grad()
        o_t.zero_grad()
        with rt.autocast("cpu"):
            out = m_rt(rt.tensor(xb))
            assert out.dtype == rt.bfloat16
            loss = F.cross_entropy(out, rt.tensor(yb))
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss_t = TF.cross_entropy(m_t(torch.from_numpy(xb)), torch.from_numpy(yb))
        loss.backward()
        loss_t.backward()
        assert all(p.grad.dtype == rt.float32 for p in m_rt.parameters())
        o_rt.step()
        o_t.step()
        losses_rt.append(loss.item())
        losses_t.append(loss_t.item())
    assert all(p.dtype == rt.float32 for p in m_rt.parameters())
    assert losses_rt[-1] < losses_rt[0]
    np.testing.assert_allclose(losses_rt, losses_t, rtol=2e-2, atol=2e-2)


def test_grad_scaler_scales_unscales_and_steps():
    m_rt, _ = make_models()
    opt = rt.optim.SGD(m_rt.parameters(), lr=0.1)
    scaler = rt.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=2)
    x = rt.randn(16, 8)
    y = rt.randint(0, 4, (16,))
    with rt.autocast("cpu", dtype=rt.float16):
        loss = F.cross_entropy(m_rt(x), y)
    assert scaler.get_scale() == 1024.0
    scaled = scaler.scale(loss)
    assert math.isclose(scaled.item(), loss.item() * 1024.0, rel_tol=1e-6)
    scaled.backward()
    raw = [p.grad.clone() for p in m_rt.parameters()]
    before = [p.detach().clone() for p in m_rt.parameters()]
    scaler.unscale_(opt)
    for p, g in zip(m_rt.parameters(), raw):
        np.testing.assert_allclose(p.grad.numpy(), g.numpy() / 1024.0, rtol=1e-6)
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    for p, b0 in zip(m_rt.parameters(), before):
        np.testing.assert_allclose(p.detach().numpy(), b0.numpy() - 0.1 * p.grad.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 1024.0 and scaler._get_growth_tracker() == 1


def test_grad_scaler_skips_inf_steps_backs_off_and_grows():
    m_rt, _ = make_models()
    opt = rt.optim.SGD(m_rt.parameters(), lr=0.1)
    scaler = rt.amp.GradScaler("cpu", init_scale=256.0, growth_interval=2)
    x, y = rt.randn(16, 8), rt.randint(0, 4, (16,))

    def iteration(poison=False):
        opt.zero_grad()
        scaler.scale(F.cross_entropy(m_rt(x), y)).backward()
        if poison:
            first = next(iter(m_rt.parameters()))
            with rt.no_grad():
                first.grad[0, 0] = float("inf")
        result = scaler.step(opt)
        scaler.update()
        return result

    before = [p.detach().clone() for p in m_rt.parameters()]
    assert iteration(poison=True) is None  # skipped
    for p, b0 in zip(m_rt.parameters(), before):
        np.testing.assert_array_equal(p.detach().numpy(), b0.numpy())
    assert scaler.get_scale() == 128.0
    iteration()
    assert scaler.get_scale() == 128.0
    iteration()
    assert scaler.get_scale() == 256.0  # two clean steps in a row: grown
    assert not np.array_equal(next(iter(m_rt.parameters())).detach().numpy(), before[0].numpy())

    with pytest.raises(RuntimeError, match="Closure"):
        scaler.step(opt, closure=lambda: None)


def test_grad_scaler_state_dict_settings_and_errors():
    scaler = rt.amp.GradScaler("cpu", init_scale=8.0, growth_factor=4.0, backoff_factor=0.25, growth_interval=7)
    sd = scaler.state_dict()
    assert sd == {"scale": 8.0, "growth_factor": 4.0, "backoff_factor": 0.25, "growth_interval": 7,
                  "_growth_tracker": 0}
    other = rt.amp.GradScaler("cpu")
    other.load_state_dict(sd)
    assert other.state_dict() == sd
    scaler.set_growth_factor(3.0)
    assert scaler.get_growth_factor() == 3.0
    with pytest.raises(RuntimeError, match="empty"):
        other.load_state_dict(rt.amp.GradScaler("cpu", enabled=False).state_dict())
    with pytest.raises(RuntimeError, match="scaler.scale"):
        rt.amp.GradScaler("cpu").step(rt.optim.SGD([rt.zeros(2, requires_grad=True)], lr=0.1))
    with pytest.raises(ValueError, match="backoff_factor"):
        rt.amp.GradScaler("cpu", backoff_factor=2.0)
    scaled = rt.amp.GradScaler("cpu", init_scale=2.0).scale([rt.ones(2), (rt.ones(1),)])
    assert isinstance(scaled, list) and isinstance(scaled[1], tuple)
    assert scaled[0].tolist() == [2.0, 2.0] and scaled[1][0].tolist() == [2.0]
    disabled = rt.amp.GradScaler("cpu", enabled=False)
    p = rt.zeros(2, requires_grad=True)
    p.grad = rt.ones(2)
    disabled.step(rt.optim.SGD([p], lr=1.0))
    assert p.tolist() == [-1.0, -1.0]


def test_grad_scaler_refuses_float16_gradients():
    p = rt.zeros(2, dtype=rt.float16, requires_grad=True)
    opt = rt.optim.SGD([p], lr=0.1)
    scaler = rt.amp.GradScaler("cpu")
    scaler.scale(p.sum()).backward()
    with pytest.raises(ValueError, match="FP16 gradients"):
        scaler.step(opt)
