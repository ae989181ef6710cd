"""rt.nn.Module semantics: Python subclasses, registration, traversal, hooks, modes, state_dict and its
errors, conversion, copying and containers, checked against torch.nn.Module's behaviour."""
import copy
from collections import OrderedDict

import numpy as np
import pytest
import torch

import rustytorch as rt
import rustytorch.nn  # noqa: F401  (until rustytorch/__init__ imports it)


def make_net(nn):
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.register_buffer("steps", (rt if nn is rt.nn else torch).zeros(1))
            self.register_buffer("cache", (rt if nn is rt.nn else torch).zeros(2), persistent=False)

        def forward(self, x):
            return self.fc(x).relu()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter((rt if nn is rt.nn else torch).ones(4))
            self.block = Block()
            self.heads = nn.ModuleList([nn.Linear(4, 2), nn.Linear(4, 3)])
            self.extra = nn.ModuleDict({"b": nn.Linear(4, 1), "a": nn.Identity()})
            self.plain = 3

        def forward(self, x):
            h = self.block(x) * self.scale
            return [head(h) for head in self.heads]

    return Net()


def test_python_subclass_registers_like_torch():
    ours, theirs = make_net(rt.nn), make_net(torch.nn)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert list(ours.state_dict().keys()) == list(theirs.state_dict().keys())
    assert "block.cache" not in ours.state_dict()
    assert isinstance(ours.scale, rt.nn.Parameter) and isinstance(ours.scale, rt.Tensor)
    assert ours.scale.requires_grad and ours.plain == 3
    assert "scale" in dir(ours) and "block" in dir(ours)
    out = ours(rt.randn(2, 4))
    assert [tuple(o.shape) for o in out] == [(2, 2), (2, 3)]


def test_shared_parameters_are_yielded_once():
    net = rt.nn.Sequential(rt.nn.Linear(3, 3), rt.nn.Linear(3, 3))
    net[1].weight = net[0].weight
    assert len(list(net.parameters())) == 3
    assert len(list(net.named_parameters(remove_duplicate=False))) == 4


def test_reassigning_attributes_follows_torch_rules():
    m = rt.nn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign"):
        m.weight = rt.zeros(2, 2)
    m.bias = None
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    m.bias = rt.nn.Parameter(rt.zeros(2))
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    m.child = rt.nn.ReLU()
    assert "child" in m._modules
    m.child = rt.nn.Tanh()
    assert isinstance(m.child, rt.nn.Tanh)
    del m.child
    assert "child" not in m._modules
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        m.nothing


def test_assigning_before_init_and_missing_forward_give_clear_errors():
    class Early(rt.nn.Module):
        def __init__(self):
            self.fc = rt.nn.Linear(2, 2)
            super().__init__()

    with pytest.raises(AttributeError, match=r"before Module.__init__\(\) call"):
        Early()

    class NoForward(rt.nn.Module):
        pass

    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        NoForward()(rt.zeros(1))


def test_forward_hooks_modify_inputs_and_outputs_and_can_be_removed():
    m = rt.nn.Identity()
    calls = []
    pre = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
    post = m.register_forward_hook(lambda mod, args, out: calls.append(tuple(out.shape)) or out + 1)
    y = m(rt.ones(3))
    assert y.tolist() == [3.0, 3.0, 3.0] and calls == [(3,)]
    pre.remove()
    with post:
        pass
    assert m(rt.ones(3)).tolist() == [1.0, 1.0, 1.0]


def test_train_eval_propagate_and_dropout_follows_mode():
    net = rt.nn.Sequential(rt.nn.Linear(4, 4), rt.nn.Dropout(0.5))
    net.eval()
    assert not any(m.training for m in net.modules())
    x = rt.randn(8, 4)
    assert np.array_equal(net(x).detach().numpy(), net(x).detach().numpy())
    net.train()
    assert all(m.training for m in net.modules())
    with pytest.raises(ValueError, match="boolean"):
        net.train("yes")


def test_zero_grad_sets_to_none_or_zeroes():
    m = rt.nn.Linear(3, 2)
    m(rt.randn(4, 3)).sum().backward()
    m.zero_grad(set_to_none=False)
    assert np.all(m.weight.grad.numpy() == 0)
    m.zero_grad()
    assert m.weight.grad is None and m.bias.grad is None


def test_apply_to_double_and_requires_grad():
    net = rt.nn.Sequential(rt.nn.Linear(3, 3), rt.nn.BatchNorm1d(3))
    seen = []
    net.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "BatchNorm1d", "Sequential"]
    net.double()
    assert all(p.dtype == rt.float64 for p in net.parameters())
    assert net[1].running_mean.dtype == rt.float64
    assert net[1].num_batches_tracked.dtype == rt.int64
    assert all(isinstance(p, rt.nn.Parameter) for p in net.parameters())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    net.to(rt.float32)
    assert net[0].weight.dtype == rt.float32


def test_state_dict_round_trip_and_values_are_detached_aliases():
    a, b = make_net(rt.nn), make_net(rt.nn)
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    for (name, p), (_, q) in zip(a.named_parameters(), b.named_parameters()):
        assert np.array_equal(p.detach().numpy(), q.detach().numpy()), name
    sd = a.state_dict()
    assert not sd["scale"].requires_grad
    assert a.state_dict(keep_vars=True)["scale"].requires_grad
    with rt.no_grad():
        a.scale.mul_(3)
    assert sd["scale"].tolist() == [3.0] * 4


def test_load_state_dict_errors_match_torch_wording():
    m = rt.nn.Sequential(rt.nn.Linear(4, 3), rt.nn.Linear(3, 2))
    t = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2))
    bad = OrderedDict([("0.weight", rt.zeros(3, 5)), ("0.bias", rt.zeros(3)), ("2.weight", rt.zeros(2, 3))])
    bad_t = OrderedDict([("0.weight", torch.zeros(3, 5)), ("0.bias", torch.zeros(3)), ("2.weight", torch.zeros(2, 3))])
    with pytest.raises(RuntimeError) as ours:
        m.load_state_dict(bad)
    with pytest.raises(RuntimeError) as theirs:
        t.load_state_dict(bad_t)
    assert str(ours.value) == str(theirs.value).replace("torch.Size(", "").replace("])", "]")
    assert 'Missing key(s) in state_dict: "1.weight", "1.bias"' in str(ours.value)
    assert 'Unexpected key(s) in state_dict: "2.weight"' in str(ours.value)
    assert "size mismatch for 0.weight" in str(ours.value)
    with pytest.raises(RuntimeError, match="size mismatch"):
        m.load_state_dict(bad, strict=False)
    missing, unexpected = m.load_state_dict({"0.bias": rt.ones(3)}, strict=False)
    assert missing == ["0.weight", "1.weight", "1.bias"] and unexpected == []
    assert m[0].bias.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(TypeError, match="dict-like"):
        m.load_state_dict([1, 2])


def test_deepcopy_gives_independent_parameters():
    a = rt.nn.Sequential(rt.nn.Linear(2, 2), rt.nn.BatchNorm1d(2))
    b = copy.deepcopy(a)
    with rt.no_grad():
        b[0].weight.fill_(5.0)
    assert not np.any(a[0].weight.detach().numpy() == 5.0)
    assert isinstance(b[0].weight, rt.nn.Parameter) and b[0].weight.requires_grad


def test_get_submodule_and_parameter():
    net = make_net(rt.nn)
    assert net.get_submodule("block.fc") is net.block.fc
    assert net.get_parameter("heads.1.bias") is net.heads[1].bias
    with pytest.raises(AttributeError, match="has no attribute `nope`"):
        net.get_submodule("block.nope")


def test_containers_behave_like_torch():
    seq = rt.nn.Sequential(OrderedDict([("fc", rt.nn.Linear(2, 2)), ("act", rt.nn.ReLU())]))
    assert isinstance(seq[-1], rt.nn.ReLU) and len(seq[0:1]) == 1 and seq.fc is seq[0]
    seq.append(rt.nn.Tanh())
    assert list(seq._modules.keys()) == ["fc", "act", "2"]
    with pytest.raises(IndexError, match="out of range"):
        seq[5]
    ml = rt.nn.ModuleList([rt.nn.ReLU()])
    ml += [rt.nn.Tanh(), rt.nn.SiLU()]
    ml.insert(1, rt.nn.GELU())
    assert [type(m).__name__ for m in ml] == ["ReLU", "GELU", "Tanh", "SiLU"]
    del ml[0]
    assert list(ml._modules.keys()) == ["0", "1", "2"]
    with pytest.raises(NotImplementedError, match="iterate over it"):
        ml(rt.zeros(1))
    md = rt.nn.ModuleDict({"x": rt.nn.ReLU()})
    md["y"] = rt.nn.Tanh()
    assert list(md.keys()) == ["x", "y"] and "y" in md and isinstance(md.pop("x"), rt.nn.ReLU)


def test_parameter_repr_and_type_checks():
    p = rt.nn.Parameter(rt.zeros(2))
    assert repr(p).startswith("Parameter containing:")
    assert p.is_leaf and p.requires_grad
    assert not rt.nn.Parameter(rt.zeros(2), requires_grad=False).requires_grad
    with pytest.raises(TypeError, match="rt.tensor"):
        rt.nn.Parameter([1.0, 2.0])


def test_register_names_are_validated():
    m = rt.nn.Module()
    with pytest.raises(KeyError, match='contain ".", got: a.b'):
        m.register_buffer("a.b", rt.zeros(1))
    with pytest.raises(KeyError, match="empty string"):
        m.register_parameter("", None)
    m.x = 1
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("x", rt.zeros(1))


def test_init_functions_match_torch_formulas():
    assert rt.nn.init.calculate_gain("leaky_relu", 0.2) == torch.nn.init.calculate_gain("leaky_relu", 0.2)
    assert rt.nn.init.calculate_gain("tanh") == torch.nn.init.calculate_gain("tanh")
    rt.manual_seed(1)
    w = rt.empty(200, 100)
    rt.nn.init.xavier_uniform_(w)
    bound = np.sqrt(6.0 / 300)
    assert np.abs(w.numpy()).max() <= bound and np.abs(w.numpy()).max() > 0.98 * bound
    rt.nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert abs(w.numpy().std() - np.sqrt(2.0 / 200)) < 0.05 * np.sqrt(2.0 / 200)
    rt.nn.init.trunc_normal_(w, std=0.5, a=-0.6, b=0.6)
    assert np.abs(w.numpy()).max() <= 0.6
    rt.nn.init.constant_(w, 0.25)
    assert np.all(w.numpy() == 0.25)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        rt.nn.init.xavier_uniform_(rt.empty(5))
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        rt.nn.init.calculate_gain("swish")


def test_clip_grad_norm_and_value_match_torch():
    grads = [np.random.default_rng(i).standard_normal((3, 4)).astype(np.float32) for i in range(2)]
    ps_rt = [rt.nn.Parameter(rt.zeros(3, 4)) for _ in grads]
    ps_t = [torch.nn.Parameter(torch.zeros(3, 4)) for _ in grads]
    for p, q, g in zip(ps_rt, ps_t, grads):
        p.grad = rt.from_numpy(g.copy())
        q.grad = torch.from_numpy(g.copy())
    total_rt = rt.nn.utils.clip_grad_norm_(ps_rt, 1.0)
    total_t = torch.nn.utils.clip_grad_norm_(ps_t, 1.0)
    assert abs(float(total_rt.item()) - float(total_t)) < 1e-5
    for p, q in zip(ps_rt, ps_t):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6)
    rt.nn.utils.clip_grad_value_(ps_rt, 0.01)
    assert np.abs(ps_rt[0].grad.numpy()).max() <= 0.01
    vec = rt.nn.utils.parameters_to_vector(ps_rt)
    assert tuple(vec.shape) == (24,)
