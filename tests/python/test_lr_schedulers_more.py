"""The schedulers added for issue 23 against torch.optim.lr_scheduler (PyTorch 1.13): ConstantLR,
PolynomialLR, MultiplicativeLR, ChainedScheduler, CosineAnnealingWarmRestarts (step() and step(epoch) with fractional
epochs), CyclicLR (every mode, momentum cycling) and OneCycleLR (cos/linear, three_phase, momentum
or Adam's beta1). Each lr (and momentum) sequence over 50 steps equals torch's to 1e-12; state
dicts round-trip; bad arguments raise torch's errors."""
import pytest
import torch

import rustytorch as rt
import rustytorch.optim  # noqa: F401

STEPS = 50


def pair(make_optimizer):
    """The same one-parameter optimizer in both libraries, built by make_optimizer(optim, params)."""
    return (make_optimizer(rt.optim, [rt.nn.Parameter(rt.zeros(1))]),
            make_optimizer(torch.optim, [torch.nn.Parameter(torch.zeros(1))]))


def sgd(optim, params):
    return optim.SGD(params, lr=0.1, momentum=0.9)


def two_groups(optim, params):
    extra = rt.nn.Parameter(rt.zeros(1)) if optim is rt.optim else torch.nn.Parameter(torch.zeros(1))
    return optim.SGD([{"params": params}, {"params": [extra], "lr": 0.5}], lr=0.1, momentum=0.9)


def adam(optim, params):
    return optim.Adam(params, lr=0.01, betas=(0.9, 0.99))


def momentum_of(group):
    return group["betas"][0] if "betas" in group else group.get("momentum")


def assert_same_schedule(o_rt, o_t, s_rt, s_t, steps=STEPS, epochs=None):
    for i in range(steps):
        assert s_rt.get_last_lr() == pytest.approx(s_t.get_last_lr(), rel=1e-12, abs=1e-15), f"step {i}"
        for g_rt, g_t in zip(o_rt.param_groups, o_t.param_groups):
            assert g_rt["lr"] == pytest.approx(g_t["lr"], rel=1e-12, abs=1e-15), f"step {i}"
            assert momentum_of(g_rt) == pytest.approx(momentum_of(g_t), rel=1e-12, abs=1e-15), f"step {i}"
        o_rt.step()
        o_t.step()
        if epochs is None:
            s_rt.step()
            s_t.step()
        else:
            s_rt.step(epochs[i])
            s_t.step(epochs[i])


SCHEDULERS = [
    ("constant", sgd, lambda s, o: s.ConstantLR(o, factor=0.25, total_iters=7)),
    ("constant_default", sgd, lambda s, o: s.ConstantLR(o)),
    ("polynomial", sgd, lambda s, o: s.PolynomialLR(o, total_iters=30, power=2.0)),
    ("polynomial_linear", two_groups, lambda s, o: s.PolynomialLR(o, total_iters=10)),
    ("warm_restarts", sgd, lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=7, eta_min=1e-3)),
    ("warm_restarts_mult", two_groups, lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2)),
    ("cyclic_triangular", sgd, lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=5)),
    ("cyclic_triangular2", two_groups,
     lambda s, o: s.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=[0.1, 0.3], step_size_up=4, step_size_down=6,
                             mode="triangular2")),
    ("cyclic_exp_range", sgd,
     lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3, mode="exp_range", gamma=0.97,
                             base_momentum=0.7, max_momentum=0.95)),
    ("cyclic_no_momentum", sgd,
     lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=6, cycle_momentum=False)),
    ("cyclic_scale_fn", sgd,
     lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4, scale_fn=lambda x: 0.5 ** x,
                             scale_mode="iterations")),
    ("onecycle_cos", sgd, lambda s, o: s.OneCycleLR(o, max_lr=0.5, total_steps=STEPS)),
    ("onecycle_linear", two_groups,
     lambda s, o: s.OneCycleLR(o, max_lr=[0.5, 1.0], epochs=5, steps_per_epoch=10, anneal_strategy="linear",
                               pct_start=0.4, div_factor=10.0, final_div_factor=100.0)),
    ("onecycle_three_phase", sgd,
     lambda s, o: s.OneCycleLR(o, max_lr=0.5, total_steps=STEPS, three_phase=True, base_momentum=0.8)),
    ("onecycle_adam_betas", adam, lambda s, o: s.OneCycleLR(o, max_lr=0.05, total_steps=STEPS)),
    ("onecycle_no_momentum", adam, lambda s, o: s.OneCycleLR(o, max_lr=0.05, total_steps=STEPS,
                                                             cycle_momentum=False)),
    ("multiplicative", two_groups, lambda s, o: s.MultiplicativeLR(o, lambda e: 0.9 if e % 3 else 1.05)),
    ("chained", sgd, lambda s, o: s.ChainedScheduler([s.ConstantLR(o, factor=0.1, total_iters=4),
                                                      s.ExponentialLR(o, gamma=0.95)])),
    ("chained_polynomial_step", two_groups,
     lambda s, o: s.ChainedScheduler([s.PolynomialLR(o, total_iters=40, power=0.5), s.StepLR(o, 7, gamma=0.5)])),
]


@pytest.mark.filterwarnings("ignore::UserWarning")  # torch's notes on stepping order
@pytest.mark.parametrize("name,make_optimizer,make", SCHEDULERS, ids=[s[0] for s in SCHEDULERS])
def test_schedule_matches_torch(name, make_optimizer, make):
    o_rt, o_t = pair(make_optimizer)
    s_rt, s_t = make(rt.optim.lr_scheduler, o_rt), make(torch.optim.lr_scheduler, o_t)
    assert_same_schedule(o_rt, o_t, s_rt, s_t)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("T_mult", [1, 2, 3])
def test_warm_restarts_with_fractional_epochs_match_torch(T_mult):
    o_rt, o_t = pair(sgd)
    s_rt = rt.optim.lr_scheduler.CosineAnnealingWarmRestarts(o_rt, T_0=4, T_mult=T_mult, eta_min=0.005)
    s_t = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(o_t, T_0=4, T_mult=T_mult, eta_min=0.005)
    iters = 7
    epochs = [e + i / iters for e in range(8) for i in range(iters)][:STEPS]
    assert_same_schedule(o_rt, o_t, s_rt, s_t, epochs=epochs)
    # Interleaved: jump, then plain steps continue from the jumped-to epoch.
    s_rt.step(26)
    s_t.step(26)
    for _ in range(5):
        s_rt.step()
        s_t.step()
        assert s_rt.get_last_lr() == pytest.approx(s_t.get_last_lr(), rel=1e-12)
    assert s_rt.last_epoch == s_t.last_epoch == 31


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_closed_forms_match_torch_when_stepping_to_an_epoch():
    for make in (lambda s, o: s.ConstantLR(o, factor=0.5, total_iters=4),
                 lambda s, o: s.PolynomialLR(o, total_iters=8, power=3.0)):
        o_rt, o_t = pair(sgd)
        s_rt, s_t = make(rt.optim.lr_scheduler, o_rt), make(torch.optim.lr_scheduler, o_t)
        for epoch in (3, 4, 9, 2, 8):
            s_rt.step(epoch)
            s_t.step(epoch)
            assert s_rt.get_last_lr() == pytest.approx(s_t.get_last_lr(), rel=1e-12, abs=1e-15)


def test_cyclic_lr_drives_adams_beta1_too():
    """A superset of 1.13 (whose CyclicLR refuses Adam with cycle_momentum, as torch 2.0+ no longer does)."""
    opt = rt.optim.Adam([rt.nn.Parameter(rt.zeros(1))], lr=0.01, betas=(0.9, 0.99))
    sched = rt.optim.lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=2, base_momentum=0.8,
                                           max_momentum=0.9)
    seen = []
    for _ in range(5):
        seen.append((opt.param_groups[0]["lr"], opt.param_groups[0]["betas"]))
        sched.step()
    assert [round(lr, 12) for lr, _ in seen] == [0.01, 0.055, 0.1, 0.055, 0.01]
    assert [b for _, b in seen] == [pytest.approx((m, 0.99)) for m in (0.9, 0.85, 0.8, 0.85, 0.9)]


def test_onecycle_refuses_to_step_past_total_steps():
    opt = rt.optim.SGD([rt.nn.Parameter(rt.zeros(1))], lr=0.1, momentum=0.9)
    sched = rt.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=3)
    for _ in range(3):
        sched.step()
    with pytest.raises(ValueError, match="Tried to step 5 times. The specified number of total steps is 3"):
        sched.step()


@pytest.mark.parametrize("name,make_optimizer,make", [s for s in SCHEDULERS
                                                      if s[0] in ("warm_restarts_mult", "cyclic_triangular2",
                                                                  "onecycle_three_phase", "chained",
                                                                  "polynomial", "constant")],
                         ids=["warm_restarts_mult", "cyclic_triangular2", "onecycle_three_phase", "chained",
                              "polynomial", "constant"])
def test_state_dict_round_trip_continues_the_schedule(name, make_optimizer, make):
    o1, _ = pair(make_optimizer)
    s1 = make(rt.optim.lr_scheduler, o1)
    for _ in range(13):
        o1.step()
        s1.step()
    o2, _ = pair(make_optimizer)
    s2 = make(rt.optim.lr_scheduler, o2)
    o2.load_state_dict(o1.state_dict())
    s2.load_state_dict(s1.state_dict())
    for _ in range(20):
        s1.step()
        s2.step()
        assert s2.get_last_lr() == s1.get_last_lr()
        assert [momentum_of(g) for g in o2.param_groups] == [momentum_of(g) for g in o1.param_groups]


def test_bad_arguments_raise_clear_errors():
    opt = rt.optim.SGD([rt.nn.Parameter(rt.zeros(1))], lr=0.1, momentum=0.9)
    s = rt.optim.lr_scheduler
    with pytest.raises(ValueError, match="between 0 and 1"):
        s.ConstantLR(opt, factor=1.5)
    with pytest.raises(ValueError, match="total_iters must be positive"):
        s.PolynomialLR(opt, total_iters=0)
    with pytest.raises(ValueError, match="Expected positive integer T_0"):
        s.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="Expected integer T_mult >= 1"):
        s.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=0)
    with pytest.raises(ValueError, match="Expected non-negative epoch"):
        s.CosineAnnealingWarmRestarts(opt, T_0=2).step(-1)
    with pytest.raises(ValueError, match="mode must be one of"):
        s.CyclicLR(opt, base_lr=0.01, max_lr=0.1, mode="zigzag")
    with pytest.raises(ValueError, match="expected 1 values for max_lr"):
        s.CyclicLR(opt, base_lr=0.01, max_lr=[0.1, 0.2])
    with pytest.raises(ValueError, match="total_steps OR"):
        s.OneCycleLR(opt, max_lr=0.1)
    with pytest.raises(ValueError, match="positive integer total_steps"):
        s.OneCycleLR(opt, max_lr=0.1, total_steps=0)
    with pytest.raises(ValueError, match="pct_start"):
        s.OneCycleLR(opt, max_lr=0.1, total_steps=10, pct_start=1.5)
    with pytest.raises(ValueError, match="anneal_strategy"):
        s.OneCycleLR(opt, max_lr=0.1, total_steps=10, anneal_strategy="step")
    no_momentum = rt.optim.Adagrad([rt.nn.Parameter(rt.zeros(1))])
    with pytest.raises(ValueError, match="no momentum or betas; pass cycle_momentum=False"):
        s.OneCycleLR(no_momentum, max_lr=0.1, total_steps=10)
    other = rt.optim.SGD([rt.nn.Parameter(rt.zeros(1))], lr=0.1)
    with pytest.raises(ValueError, match="same optimizer"):
        s.ChainedScheduler([s.ConstantLR(opt), s.ConstantLR(other)])
    with pytest.raises(TypeError, match="is not an Optimizer"):
        s.OneCycleLR(object(), max_lr=0.1, total_steps=10)


def test_every_scheduler_torch_113_has_exists_here():
    ours = set(rt.optim.lr_scheduler.__all__)
    theirs = {name for name in dir(torch.optim.lr_scheduler)
              if isinstance(getattr(torch.optim.lr_scheduler, name), type) and name.endswith(("LR", "Scheduler",
                                                                                                "Restarts", "Plateau"))
              and not name.startswith("_")}
    assert not theirs - ours, sorted(theirs - ours)
