"""rt.optim against torch.optim: 20 training steps of the same small model from the same initial weights
and data follow PyTorch's loss curve within 1e-4; schedulers produce PyTorch's lr sequences; state_dicts
round-trip and have torch's layout."""
import math

import numpy as np
import pytest
import torch

import rustytorch as rt
import rustytorch.nn  # noqa: F401  (until rustytorch/__init__ imports them)
import rustytorch.optim  # noqa: F401

STEPS = 20


def to_torch(t):
    return torch.from_numpy(np.array(t.detach().numpy(), copy=True))


def make_models():
    rt.manual_seed(0)
    m_rt = rt.nn.Sequential(rt.nn.Linear(6, 16), rt.nn.Tanh(), rt.nn.Linear(16, 3))
    m_t = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
    m_t.load_state_dict({k: to_torch(v) for k, v in m_rt.state_dict().items()})
    return m_rt, m_t


TEACHER = np.random.default_rng(99).standard_normal((6, 3))


def data(step):
    rng = np.random.default_rng(100 + step)
    x = rng.standard_normal((16, 6)).astype(np.float32)
    y = np.argmax(x @ TEACHER, axis=1).astype(np.int64)
    return x, y


def train(lib, model, opt, sched=None, plateau=False):
    losses = []
    for step in range(STEPS):
        x, y = data(step)
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(lib.from_numpy(x)), lib.from_numpy(y))
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
        if sched is not None:
            sched.step(losses[-1]) if plateau else sched.step()
    return losses


OPTIMIZERS = [
    ("sgd", lambda o, p: o.SGD(p, lr=0.1)),
    ("sgd_momentum_wd", lambda o, p: o.SGD(p, lr=0.05, momentum=0.9, weight_decay=1e-3, dampening=0.1)),
    ("sgd_nesterov", lambda o, p: o.SGD(p, lr=0.05, momentum=0.8, nesterov=True)),
    ("adam", lambda o, p: o.Adam(p, lr=1e-2)),
    ("adam_amsgrad_wd", lambda o, p: o.Adam(p, lr=1e-2, betas=(0.8, 0.99), weight_decay=1e-2, amsgrad=True)),
    ("adamw", lambda o, p: o.AdamW(p, lr=1e-2, weight_decay=0.1)),
    ("adamw_amsgrad", lambda o, p: o.AdamW(p, lr=5e-3, amsgrad=True, eps=1e-6)),
]


@pytest.mark.parametrize("name,make", OPTIMIZERS, ids=[o[0] for o in OPTIMIZERS])
def test_loss_curve_matches_torch(name, make):
    m_rt, m_t = make_models()
    curve_rt = train(rt, m_rt, make(rt.optim, m_rt.parameters()))
    curve_t = train(torch, m_t, make(torch.optim, m_t.parameters()))
    np.testing.assert_allclose(curve_rt, curve_t, atol=1e-4, rtol=0)
    assert np.mean(curve_rt[-5:]) < np.mean(curve_rt[:5])


def test_fused_step_bindings_match_the_python_chain():
    """_C._adam_step_ / _C._sgd_step_ (what GPU parameters take) against the Python optimizers'
    own chain of ops, on the CPU: same state layout, same results."""
    from rustytorch import _C
    for cls, decoupled in ((rt.optim.Adam, False), (rt.optim.AdamW, True)):
        p = rt.nn.Parameter(rt.randn(4, 3, dtype=rt.float64))
        q = p.detach().clone()
        m, v, vmax = rt.zeros_like(q), rt.zeros_like(q), rt.zeros_like(q)
        opt = cls([p], lr=0.05, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1, amsgrad=True)
        for step in range(1, 4):
            g = rt.randn(4, 3, dtype=rt.float64)
            p.grad = g.clone()
            opt.step()
            _C._adam_step_(q, m, v, vmax, g, lr=0.05, beta1=0.8, beta2=0.95, eps=1e-6, weight_decay=0.1,
                           decoupled_weight_decay=decoupled, step=float(step))
            np.testing.assert_allclose(q.numpy(), p.detach().numpy(), rtol=1e-12, atol=1e-12)
    p = rt.nn.Parameter(rt.randn(5, dtype=rt.float64))
    q, buf = p.detach().clone(), rt.empty(5, dtype=rt.float64)
    opt = rt.optim.SGD([p], lr=0.1, momentum=0.9, dampening=0.2, weight_decay=0.01)
    for step in range(3):
        g = rt.randn(5, dtype=rt.float64)
        p.grad = g.clone()
        opt.step()
        _C._sgd_step_(q, buf, g, lr=0.1, momentum=0.9, dampening=0.2, weight_decay=0.01, nesterov=False,
                      first=step == 0)
        np.testing.assert_allclose(q.numpy(), p.detach().numpy(), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="needs a momentum buffer"):
        _C._sgd_step_(q, None, g, lr=0.1, momentum=0.9, dampening=0.0, weight_decay=0.0, nesterov=False, first=True)


def test_sgd_maximize_and_nesterov_match_torch():
    m_rt, m_t = make_models()
    for p in m_rt.parameters():
        p.grad = rt.ones_like(p)
    for p in m_t.parameters():
        p.grad = torch.ones_like(p)
    o_rt = rt.optim.SGD(m_rt.parameters(), lr=0.1, momentum=0.9, nesterov=True, maximize=True)
    o_t = torch.optim.SGD(m_t.parameters(), lr=0.1, momentum=0.9, nesterov=True, maximize=True)
    for _ in range(3):
        o_rt.step()
        o_t.step()
    for (name, p), q in zip(m_rt.named_parameters(), m_t.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), atol=1e-6, err_msg=name)


def test_param_groups_with_their_own_lr_match_torch():
    m_rt, m_t = make_models()
    o_rt = rt.optim.SGD([{"params": m_rt[0].parameters()}, {"params": m_rt[2].parameters(), "lr": 0.01}],
                        lr=0.1, momentum=0.9)
    o_t = torch.optim.SGD([{"params": m_t[0].parameters()}, {"params": m_t[2].parameters(), "lr": 0.01}],
                          lr=0.1, momentum=0.9)
    np.testing.assert_allclose(train(rt, m_rt, o_rt), train(torch, m_t, o_t), atol=1e-4, rtol=0)
    assert [g["lr"] for g in o_rt.param_groups] == [0.1, 0.01]


SCHEDULERS = [
    ("step", lambda s, o: s.StepLR(o, step_size=3, gamma=0.5)),
    ("multistep", lambda s, o: s.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.3)),
    ("exponential", lambda s, o: s.ExponentialLR(o, gamma=0.9)),
    ("cosine", lambda s, o: s.CosineAnnealingLR(o, T_max=7, eta_min=0.001)),
    ("linear", lambda s, o: s.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=6)),
    ("lambda", lambda s, o: s.LambdaLR(o, lambda e: 1.0 / (1 + e))),
    ("sequential", lambda s, o: s.SequentialLR(o, [s.LinearLR(o, 0.1, total_iters=4), s.CosineAnnealingLR(o, 10),
                                                   s.StepLR(o, 2)], milestones=[4, 12])),
]


@pytest.mark.filterwarnings("ignore:The epoch parameter")  # torch's own notice when SequentialLR restarts a child
@pytest.mark.parametrize("name,make", SCHEDULERS, ids=[s[0] for s in SCHEDULERS])
def test_scheduler_lrs_match_torch(name, make):
    o_rt = rt.optim.SGD([rt.nn.Parameter(rt.zeros(1))], lr=0.1)
    o_t = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    s_rt, s_t = make(rt.optim.lr_scheduler, o_rt), make(torch.optim.lr_scheduler, o_t)
    for _ in range(25):
        assert s_rt.get_last_lr() == pytest.approx(s_t.get_last_lr(), rel=1e-12, abs=1e-15)
        assert o_rt.param_groups[0]["lr"] == pytest.approx(o_t.param_groups[0]["lr"], rel=1e-12, abs=1e-15)
        o_rt.step()
        o_t.step()
        s_rt.step()
        s_t.step()


def test_training_with_scheduler_matches_torch():
    m_rt, m_t = make_models()
    o_rt, o_t = rt.optim.Adam(m_rt.parameters(), lr=0.02), torch.optim.Adam(m_t.parameters(), lr=0.02)
    s_rt = rt.optim.lr_scheduler.CosineAnnealingLR(o_rt, T_max=STEPS)
    s_t = torch.optim.lr_scheduler.CosineAnnealingLR(o_t, T_max=STEPS)
    np.testing.assert_allclose(train(rt, m_rt, o_rt, s_rt), train(torch, m_t, o_t, s_t), atol=1e-4, rtol=0)


def test_reduce_lr_on_plateau_matches_torch():
    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.97, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6]
    o_rt = rt.optim.SGD([rt.nn.Parameter(rt.zeros(1))], lr=0.1)
    o_t = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    s_rt = rt.optim.lr_scheduler.ReduceLROnPlateau(o_rt, patience=2, factor=0.5, cooldown=1)
    s_t = torch.optim.lr_scheduler.ReduceLROnPlateau(o_t, patience=2, factor=0.5, cooldown=1)
    for m in metrics:
        s_rt.step(m)
        s_t.step(m)
        assert o_rt.param_groups[0]["lr"] == pytest.approx(o_t.param_groups[0]["lr"])


def test_optimizer_state_dict_has_torch_layout_and_round_trips():
    m_rt, m_t = make_models()
    o_rt = rt.optim.Adam(m_rt.parameters(), lr=1e-2, amsgrad=True)
    o_t = torch.optim.Adam(m_t.parameters(), lr=1e-2, amsgrad=True)
    train(rt, m_rt, o_rt)
    train(torch, m_t, o_t)
    sd_rt, sd_t = o_rt.state_dict(), o_t.state_dict()
    assert sorted(sd_rt["state"].keys()) == sorted(sd_t["state"].keys()) == [0, 1, 2, 3]
    assert sorted(sd_rt["state"][0].keys()) == sorted(sd_t["state"][0].keys())
    common = set(sd_t["param_groups"][0]) & set(sd_rt["param_groups"][0])
    assert {"lr", "betas", "eps", "weight_decay", "amsgrad", "params"} <= common
    assert float(sd_rt["state"][0]["step"].item()) == STEPS
    for key in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
        np.testing.assert_allclose(sd_rt["state"][3][key].numpy(), sd_t["state"][3][key].numpy(), atol=1e-5)

    # A fresh optimizer loaded from the state dict continues exactly like the original.
    m2 = rt.nn.Sequential(rt.nn.Linear(6, 16), rt.nn.Tanh(), rt.nn.Linear(16, 3))
    m2.load_state_dict(m_rt.state_dict())
    o2 = rt.optim.Adam(m2.parameters(), lr=0.5)
    o2.load_state_dict(o_rt.state_dict())
    assert o2.param_groups[0]["lr"] == 1e-2 and o2.param_groups[0]["params"][0] is m2[0].weight
    np.testing.assert_allclose(train(rt, m2, o2), train(rt, m_rt, o_rt), atol=1e-6, rtol=0)


def test_scheduler_state_dict_round_trips():
    o = rt.optim.SGD([rt.nn.Parameter(rt.zeros(1))], lr=0.1)
    s = rt.optim.lr_scheduler.StepLR(o, step_size=2)
    for _ in range(5):
        s.step()
    o2 = rt.optim.SGD([rt.nn.Parameter(rt.zeros(1))], lr=0.1)
    s2 = rt.optim.lr_scheduler.StepLR(o2, step_size=7)
    s2.load_state_dict(s.state_dict())
    assert s2.last_epoch == 5 and s2.step_size == 2 and s2.get_last_lr() == s.get_last_lr()


def test_optimizer_errors_are_clear():
    p = rt.nn.Parameter(rt.zeros(2))
    with pytest.raises(ValueError, match="empty parameter list"):
        rt.optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        rt.optim.Adam([p], lr=-1)
    with pytest.raises(ValueError, match="Nesterov momentum requires"):
        rt.optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="required optimization parameter lr"):
        rt.optim.SGD([p])
    with pytest.raises(ValueError, match="more than one parameter group"):
        rt.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        rt.optim.SGD([p * 2], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors"):
        rt.optim.SGD(p, lr=0.1)
    opt = rt.optim.SGD([p], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})
    with pytest.raises(KeyError, match="initial_lr"):
        rt.optim.lr_scheduler.StepLR(rt.optim.SGD([rt.nn.Parameter(rt.zeros(1))], lr=0.1), 2, last_epoch=3)


def test_closure_is_evaluated_with_grad_enabled():
    m = rt.nn.Linear(2, 1)
    opt = rt.optim.SGD(m.parameters(), lr=0.1)
    x = rt.randn(4, 2)

    def closure():
        opt.zero_grad()
        loss = m(x).pow(2).mean()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert math.isfinite(float(loss.item()))


def test_a_cpu_adam_or_sgd_step_is_one_fused_op_per_group():
    model = rt.nn.Sequential(rt.nn.Linear(8, 16), rt.nn.ReLU(), rt.nn.Linear(16, 2))
    x, y = rt.randn(4, 8), rt.randn(4, 2)
    for opt in (rt.optim.Adam(model.parameters(), lr=1e-2, amsgrad=True),
                rt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)):
        for _ in range(2):
            opt.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            with rt.profiler.profile() as prof:
                opt.step()
            rows = {r.key: r.count for r in prof.key_averages()}
            fused = "_fused_adam_" if isinstance(opt, rt.optim.Adam) else "_fused_sgd_"
            assert rows.get(fused) == 1, rows
            assert not {"add_", "lerp_", "addcdiv_", "mul_"} & set(rows), rows
