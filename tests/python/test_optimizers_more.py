"""The optimizers added for issue 23 against torch.optim (PyTorch 1.13): RMSprop, Adagrad, Adadelta,
Adamax, NAdam, RAdam and LBFGS, plus SparseAdam's refusal.

- 20-step trajectories of a small MLP from the same weights and data follow torch's parameters within
  1e-10 in float64 and 1e-5 in float32, for each option that changes the update (weight_decay,
  momentum, centered, maximize, lr_decay, initial_accumulator_value, momentum_decay...).
- LBFGS on Rosenbrock in float64, with and without the strong-Wolfe line search, follows torch's
  iterates, losses and evaluation counts.
- State dicts have torch's keys, a state dict taken mid-run (ours or torch's) loaded into a fresh
  optimizer continues the same trajectory, and groups added later behave as in torch.
- Bad arguments raise torch's messages (or clearer ones).
"""
import numpy as np
import pytest
import torch

import rustytorch as rt
import rustytorch.optim  # noqa: F401

STEPS = 20
TEACHER = np.random.default_rng(7).standard_normal((6, 3))


def to_torch(t):
    return torch.from_numpy(np.array(t.detach().numpy(), copy=True))


def to_rt(value):
    """A torch state-dict value as rustytorch's (tensors converted, containers rebuilt)."""
    if isinstance(value, torch.Tensor):
        return rt.tensor(value.detach().numpy()) if value.dim() else rt.tensor(value.item(), dtype={
            torch.float32: rt.float32, torch.float64: rt.float64}.get(value.dtype, rt.float32))
    if isinstance(value, dict):
        return {k: to_rt(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_rt(v) for v in value)
    return value


def make_models(dtype):
    rt.manual_seed(3)
    m_rt = rt.nn.Sequential(rt.nn.Linear(6, 16), rt.nn.Tanh(), rt.nn.Linear(16, 3))
    m_t = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
    m_t.load_state_dict({k: to_torch(v) for k, v in m_rt.state_dict().items()})
    if dtype == "float64":
        m_rt, m_t = m_rt.double(), m_t.double()
    return m_rt, m_t


def batch(step, dtype):
    rng = np.random.default_rng(200 + step)
    x = rng.standard_normal((16, 6)).astype(dtype)
    return x, np.argmax(x @ TEACHER, axis=1).astype(np.int64)


def train_step(lib, model, opt, step, dtype):
    x, y = batch(step, dtype)
    opt.zero_grad()
    loss = lib.nn.functional.cross_entropy(model(lib.from_numpy(x)), lib.from_numpy(y))
    loss.backward()
    opt.step()
    return float(loss.item())


def params_close(m_rt, m_t, tol, context):
    for (name, p), q in zip(m_rt.named_parameters(), m_t.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=tol, atol=tol,
                                   err_msg=f"{context}: {name}")


OPTIMIZERS = [
    ("rmsprop", lambda o, p: o.RMSprop(p, lr=1e-2)),
    ("rmsprop_momentum_wd", lambda o, p: o.RMSprop(p, lr=5e-3, alpha=0.9, momentum=0.8, weight_decay=1e-2)),
    ("rmsprop_centered", lambda o, p: o.RMSprop(p, lr=5e-3, centered=True, eps=1e-6)),
    ("rmsprop_centered_momentum_maximize",
     lambda o, p: o.RMSprop(p, lr=1e-3, centered=True, momentum=0.5, maximize=True, weight_decay=1e-3)),
    ("adagrad", lambda o, p: o.Adagrad(p, lr=0.1)),
    ("adagrad_decay_wd_accumulator",
     lambda o, p: o.Adagrad(p, lr=0.1, lr_decay=0.05, weight_decay=1e-2, initial_accumulator_value=0.3, eps=1e-8)),
    ("adagrad_maximize", lambda o, p: o.Adagrad(p, lr=0.05, maximize=True)),
    ("adadelta", lambda o, p: o.Adadelta(p)),
    ("adadelta_rho_wd", lambda o, p: o.Adadelta(p, lr=0.5, rho=0.8, eps=1e-5, weight_decay=1e-2)),
    ("adadelta_maximize", lambda o, p: o.Adadelta(p, lr=2.0, maximize=True)),
    ("adamax", lambda o, p: o.Adamax(p, lr=1e-2)),
    ("adamax_betas_wd", lambda o, p: o.Adamax(p, lr=2e-2, betas=(0.8, 0.95), weight_decay=1e-2, eps=1e-6)),
    ("adamax_maximize", lambda o, p: o.Adamax(p, lr=1e-2, maximize=True)),
    ("nadam", lambda o, p: o.NAdam(p, lr=1e-2)),
    ("nadam_wd_momentum_decay", lambda o, p: o.NAdam(p, lr=1e-2, betas=(0.85, 0.99), weight_decay=1e-2,
                                                     momentum_decay=1e-2)),
    ("radam", lambda o, p: o.RAdam(p, lr=1e-2)),
    ("radam_rectified_early", lambda o, p: o.RAdam(p, lr=1e-2, betas=(0.9, 0.9), weight_decay=1e-2)),
]
MAXIMIZING = {name for name, _ in OPTIMIZERS if "maximize" in name}


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-10), ("float32", 1e-5)])
@pytest.mark.parametrize("name,make", OPTIMIZERS, ids=[o[0] for o in OPTIMIZERS])
def test_trajectory_matches_torch(name, make, dtype, tol):
    m_rt, m_t = make_models(dtype)
    o_rt, o_t = make(rt.optim, list(m_rt.parameters())), make(torch.optim, list(m_t.parameters()))
    losses = []
    for step in range(STEPS):
        losses.append(train_step(rt, m_rt, o_rt, step, dtype))
        loss_t = train_step(torch, m_t, o_t, step, dtype)
        assert losses[-1] == pytest.approx(loss_t, rel=tol, abs=tol), f"step {step}"
        params_close(m_rt, m_t, tol, f"step {step}")
    moved_up = np.mean(losses[-5:]) > np.mean(losses[:5])
    assert moved_up == (name in MAXIMIZING), losses


@pytest.mark.parametrize("name,make", OPTIMIZERS, ids=[o[0] for o in OPTIMIZERS])
def test_foreach_is_accepted_and_changes_nothing(name, make):
    def run(foreach):
        m_rt, _ = make_models("float64")
        opt = make(rt.optim, list(m_rt.parameters()))
        for group in opt.param_groups:
            group["foreach"] = foreach
        for step in range(3):
            train_step(rt, m_rt, opt, step, "float64")
        return [p.detach().numpy().copy() for p in m_rt.parameters()]
    for a, b in zip(run(None), run(True)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name,make", OPTIMIZERS, ids=[o[0] for o in OPTIMIZERS])
def test_state_dict_has_torchs_layout_and_round_trips(name, make):
    m_rt, m_t = make_models("float64")
    o_rt, o_t = make(rt.optim, list(m_rt.parameters())), make(torch.optim, list(m_t.parameters()))
    for step in range(10):
        train_step(rt, m_rt, o_rt, step, "float64")
        train_step(torch, m_t, o_t, step, "float64")
    sd_rt, sd_t = o_rt.state_dict(), o_t.state_dict()
    assert sorted(sd_rt["state"]) == sorted(sd_t["state"])
    for i in sd_t["state"]:
        assert list(sd_rt["state"][i]) == list(sd_t["state"][i]), i
        for key, value in sd_t["state"][i].items():
            ours = sd_rt["state"][i][key]
            if isinstance(value, torch.Tensor):
                assert ours.dtype == {torch.float32: rt.float32, torch.float64: rt.float64}[value.dtype], key
                np.testing.assert_allclose(ours.numpy(), value.numpy(), rtol=1e-10, atol=1e-12, err_msg=key)
            else:
                assert type(ours) is type(value) and ours == value, key
    assert set(sd_t["param_groups"][0]) <= set(sd_rt["param_groups"][0])

    # Ours, loaded into a fresh optimizer over copies of the weights, continues identically.
    m2, _ = make_models("float64")
    m2.load_state_dict(m_rt.state_dict())
    o2 = make(rt.optim, list(m2.parameters()))
    o2.load_state_dict(o_rt.state_dict())
    # torch's, loaded into ours over torch's weights, continues like torch.
    m3, _ = make_models("float64")
    m3.load_state_dict({k: rt.tensor(v.detach().numpy()) for k, v in m_t.state_dict().items()})
    o3 = make(rt.optim, list(m3.parameters()))
    o3.load_state_dict(to_rt(o_t.state_dict()))
    for step in range(10, STEPS):
        train_step(rt, m_rt, o_rt, step, "float64")
        train_step(rt, m2, o2, step, "float64")
        train_step(rt, m3, o3, step, "float64")
        train_step(torch, m_t, o_t, step, "float64")
    for p, q in zip(m_rt.parameters(), m2.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    params_close(m3, m_t, 1e-10, "loaded from torch's state dict")


def test_adagrad_creates_its_state_up_front_like_torch():
    m_rt, m_t = make_models("float32")
    o_rt = rt.optim.Adagrad(m_rt.parameters(), initial_accumulator_value=0.5)
    o_t = torch.optim.Adagrad(m_t.parameters(), initial_accumulator_value=0.5)
    sd_rt, sd_t = o_rt.state_dict(), o_t.state_dict()
    assert sorted(sd_rt["state"]) == sorted(sd_t["state"]) == [0, 1, 2, 3]
    assert float(sd_rt["state"][2]["step"]) == 0.0 and float(sd_rt["state"][2]["sum"].max()) == 0.5


@pytest.mark.parametrize("cls,kwargs", [("RMSprop", dict(momentum=0.9)), ("Adagrad", {}), ("Adadelta", {}),
                                        ("Adamax", {}), ("NAdam", {}), ("RAdam", {})])
def test_param_groups_and_add_param_group_match_torch(cls, kwargs):
    m_rt, m_t = make_models("float64")
    groups_rt = [{"params": m_rt[0].parameters()}]
    groups_t = [{"params": m_t[0].parameters()}]
    o_rt = getattr(rt.optim, cls)(groups_rt, lr=0.01, **kwargs)
    o_t = getattr(torch.optim, cls)(groups_t, lr=0.01, **kwargs)
    for step in range(STEPS):
        if step == 5:  # the head joins later with its own lr, as a fine-tuning script does
            o_rt.add_param_group({"params": m_rt[2].parameters(), "lr": 0.05})
            o_t.add_param_group({"params": m_t[2].parameters(), "lr": 0.05})
            if cls == "Adagrad":  # torch 1.13 creates Adagrad's state in the constructor only
                for p in o_t.param_groups[1]["params"]:
                    o_t.state[p] = {"step": torch.tensor(0.0), "sum": torch.zeros_like(p)}
        train_step(rt, m_rt, o_rt, step, "float64")
        train_step(torch, m_t, o_t, step, "float64")
    params_close(m_rt, m_t, 1e-10, cls)
    assert [g["lr"] for g in o_rt.param_groups] == [0.01, 0.05]


def test_zero_grad_and_skipped_parameters():
    p, q = rt.nn.Parameter(rt.ones(3)), rt.nn.Parameter(rt.ones(2))
    opt = rt.optim.RMSprop([p, q], lr=0.1)
    p.grad = rt.ones(3)
    opt.step()
    assert q.grad is None and len(opt.state[q]) == 0 and opt.state[p]["step"] == 1
    opt.zero_grad(set_to_none=False)
    assert p.grad is not None and float(p.grad.abs().sum()) == 0.0
    opt.zero_grad()
    assert p.grad is None


# ---- LBFGS --------------------------------------------------------------------------------------

def rosenbrock(x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def lbfgs_pair(**kwargs):
    p = rt.nn.Parameter(rt.tensor([-1.5, 2.0], dtype=rt.float64))
    q = torch.nn.Parameter(torch.tensor([-1.5, 2.0], dtype=torch.float64))
    o_rt, o_t = rt.optim.LBFGS([p], **kwargs), torch.optim.LBFGS([q], **kwargs)

    def closure_rt():
        o_rt.zero_grad()
        loss = rosenbrock(p)
        loss.backward()
        return loss

    def closure_t():
        o_t.zero_grad()
        loss = rosenbrock(q)
        loss.backward()
        return loss
    return (p, o_rt, closure_rt), (q, o_t, closure_t)


LBFGS_CASES = [
    ("fixed_step", dict(lr=0.05, max_iter=5, history_size=4)),
    ("fixed_step_full_history", dict(lr=0.02, max_iter=10)),
    ("strong_wolfe", dict(lr=1, max_iter=5, history_size=5, line_search_fn="strong_wolfe")),
    ("strong_wolfe_default", dict(line_search_fn="strong_wolfe")),
    ("strong_wolfe_tight_eval", dict(lr=1, max_iter=10, max_eval=12, history_size=3, line_search_fn="strong_wolfe")),
]


@pytest.mark.parametrize("name,kwargs", LBFGS_CASES, ids=[c[0] for c in LBFGS_CASES])
def test_lbfgs_rosenbrock_iterates_match_torch(name, kwargs):
    """Same iterates up to rounding: the evaluation and iteration counts agree exactly, the points to
    1e-6 and the losses to 1e-6 (ulp-level differences in dot products grow by up to 1e3 per step of ten
    iterations in Rosenbrock's curved valley before the iterates converge on (1, 1))."""
    (p, o_rt, c_rt), (q, o_t, c_t) = lbfgs_pair(**kwargs)
    for step in range(12):
        loss_rt, loss_t = float(o_rt.step(c_rt)), float(o_t.step(c_t))
        assert loss_rt == pytest.approx(loss_t, rel=1e-6, abs=1e-6), f"step {step}"
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-6, atol=1e-6,
                                   err_msg=f"step {step}")
        s_rt, s_t = o_rt.state[p], o_t.state[q]
        assert (s_rt["func_evals"], s_rt["n_iter"]) == (s_t["func_evals"], s_t["n_iter"]), f"step {step}"
    if "strong_wolfe" in name:
        assert float(rosenbrock(p)) < 1e-6  # converged to (1, 1)
        np.testing.assert_allclose(p.detach().numpy(), [1.0, 1.0], atol=1e-3)


def test_lbfgs_trains_an_mlp_like_torch_in_float32():
    m_rt, m_t = make_models("float32")
    x, y = batch(0, "float32")
    opts = {}

    def closure_for(lib, model):
        def closure():
            opts[lib].zero_grad()
            loss = lib.nn.functional.cross_entropy(model(lib.from_numpy(x)), lib.from_numpy(y))
            loss.backward()
            return loss
        return closure
    opts[rt] = rt.optim.LBFGS(m_rt.parameters(), lr=0.5, max_iter=4, history_size=5, line_search_fn="strong_wolfe")
    opts[torch] = torch.optim.LBFGS(m_t.parameters(), lr=0.5, max_iter=4, history_size=5,
                                    line_search_fn="strong_wolfe")
    for step in range(3):
        loss_rt = float(opts[rt].step(closure_for(rt, m_rt)))
        loss_t = float(opts[torch].step(closure_for(torch, m_t)))
        assert loss_rt == pytest.approx(loss_t, rel=1e-4), f"step {step}"
    params_close(m_rt, m_t, 2e-3, "after 3 LBFGS steps")


def test_lbfgs_state_dict_round_trip_continues_identically():
    (p, o_rt, c_rt), _ = lbfgs_pair(lr=1, max_iter=3, line_search_fn="strong_wolfe")
    for _ in range(2):
        o_rt.step(c_rt)
    assert {"func_evals", "n_iter", "d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad",
            "prev_loss"} <= set(o_rt.state_dict()["state"][0])
    (p2, o2, c2), _ = lbfgs_pair(lr=1, max_iter=3, line_search_fn="strong_wolfe")
    with rt.no_grad():
        p2.copy_(p)
    o2.load_state_dict(o_rt.state_dict())
    for _ in range(3):
        o_rt.step(c_rt)
        o2.step(c2)
    np.testing.assert_array_equal(p.detach().numpy(), p2.detach().numpy())


def test_lbfgs_errors_are_clear():
    (p, opt, _), _ = lbfgs_pair()
    with pytest.raises(TypeError, match="needs a closure"):
        opt.step()
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        rt.optim.LBFGS([{"params": [p]}, {"params": [rt.nn.Parameter(rt.zeros(1))]}])
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        opt.add_param_group({"params": [rt.nn.Parameter(rt.zeros(1))]})
    with pytest.raises(ValueError, match="line_search_fn must be None or 'strong_wolfe'"):
        rt.optim.LBFGS([p], line_search_fn="backtracking")
    with pytest.raises(ValueError, match="Invalid learning rate"):
        rt.optim.LBFGS([p], lr=-1)
    with pytest.raises(ValueError, match="history_size"):
        rt.optim.LBFGS([p], history_size=0)


def test_lbfgs_stops_at_once_when_the_gradient_is_already_small():
    p = rt.nn.Parameter(rt.tensor([1.0, 1.0], dtype=rt.float64))
    opt = rt.optim.LBFGS([p])
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = rosenbrock(p)
        loss.backward()
        return loss
    assert float(opt.step(closure)) == 0.0 and len(calls) == 1
    assert p.detach().numpy().tolist() == [1.0, 1.0]


# ---- errors and coverage ------------------------------------------------------------------------

def test_sparse_adam_is_refused_with_what_to_use_instead():
    with pytest.raises(NotImplementedError, match=r"no sparse tensors.*rt\.optim\.Adam"):
        rt.optim.SparseAdam([rt.nn.Parameter(rt.zeros(2))])


BAD_ARGUMENTS = [
    ("RMSprop", dict(lr=-0.1), "Invalid learning rate: -0.1"),
    ("RMSprop", dict(alpha=-1), "Invalid alpha value: -1"),
    ("RMSprop", dict(momentum=-0.5), "Invalid momentum value: -0.5"),
    ("RMSprop", dict(eps=-1e-8), "Invalid epsilon value"),
    ("RMSprop", dict(weight_decay=-1), "Invalid weight_decay value: -1"),
    ("Adagrad", dict(lr=-1), "Invalid learning rate: -1"),
    ("Adagrad", dict(lr_decay=-1), "Invalid lr_decay value: -1"),
    ("Adagrad", dict(initial_accumulator_value=-1), "Invalid initial_accumulator_value value: -1"),
    ("Adadelta", dict(rho=1.5), "Invalid rho value: 1.5"),
    ("Adadelta", dict(lr=-1), "Invalid learning rate: -1"),
    ("Adamax", dict(betas=(1.0, 0.999)), "Invalid beta parameter at index 0: 1.0"),
    ("Adamax", dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    ("NAdam", dict(momentum_decay=-1), "Invalid momentum_decay value: -1"),
    ("NAdam", dict(betas=(0.9, 1.0)), "Invalid beta parameter at index 1: 1.0"),
    ("RAdam", dict(eps=-1), "Invalid epsilon value: -1"),
    ("RAdam", dict(weight_decay=-0.1), "Invalid weight_decay value: -0.1"),
]


@pytest.mark.parametrize("cls,kwargs,message", BAD_ARGUMENTS)
def test_bad_arguments_raise_torchs_errors(cls, kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        getattr(rt.optim, cls)([rt.nn.Parameter(rt.zeros(2))], **kwargs)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        getattr(torch.optim, cls)([torch.nn.Parameter(torch.zeros(2))], **kwargs)


def test_nadam_and_radam_take_no_maximize_as_in_torch_1_13():
    for cls in ("NAdam", "RAdam"):
        with pytest.raises(TypeError):
            getattr(rt.optim, cls)([rt.nn.Parameter(rt.zeros(2))], maximize=True)


def test_every_public_optimizer_has_a_parity_case():
    from test_optim import OPTIMIZERS as FIRST_OPTIMIZERS
    covered = set()
    for cases in (FIRST_OPTIMIZERS, OPTIMIZERS):
        for _, make in cases:
            covered.add(type(make(rt.optim, [rt.nn.Parameter(rt.zeros(1))])).__name__)
    covered |= {"LBFGS", "SparseAdam"}  # LBFGS_CASES above; SparseAdam is refused (no sparse tensors)
    public = {name for name in rt.optim.__all__
              if isinstance(getattr(rt.optim, name), type) and name != "Optimizer"}
    assert public - covered == set()
    torch_public = {name for name in dir(torch.optim) if isinstance(getattr(torch.optim, name), type)
                    and issubclass(getattr(torch.optim, name), torch.optim.Optimizer) and name != "Optimizer"}
    assert torch_public - public <= {"ASGD", "Rprop"}, sorted(torch_public - public)
