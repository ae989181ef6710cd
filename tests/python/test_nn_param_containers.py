"""nn.ParameterList and nn.ParameterDict against torch 1.13: registration (parameters(), named_parameters(),
state_dict keys and order inside a model), indexing and slicing, append/extend/+=, the dict methods
(update orders, pop, popitem, setdefault, get, |), wrapping of plain tensors, optimizers seeing the
entries, state_dict round trips, reprs, and the errors."""
from collections import OrderedDict

import numpy as np
import pytest

import rustytorch as rt

torch = pytest.importorskip("torch")


def _names(module):
    return [n for n, _ in module.named_parameters()]


def _build(nn, lib):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.scales = nn.ParameterList([nn.Parameter(lib.ones(2)), nn.Parameter(lib.zeros(3))])
            self.scales.append(lib.full((4,), 2.0))      # a plain tensor becomes a Parameter
            self.scales.extend([nn.Parameter(lib.ones(1))])
            self.scales += [nn.Parameter(lib.ones(5))]
            self.heads = nn.ParameterDict({"reg": nn.Parameter(lib.ones(2, 1)), "cls": nn.Parameter(lib.ones(2, 3))})
            self.heads["aux"] = lib.zeros(2)
            self.heads.update([("z", nn.Parameter(lib.ones(1))), ("b", nn.Parameter(lib.ones(1)))])
            self.fc = nn.Linear(2, 2)

        def forward(self, x):
            return self.fc(x * self.scales[0]) @ self.heads["cls"]

    return Net()


def test_registration_and_state_dict_keys_match_torch():
    m_r, m_t = _build(rt.nn, rt), _build(torch.nn, torch)
    assert _names(m_r) == _names(m_t)
    assert list(m_r.state_dict()) == list(m_t.state_dict())
    assert all(isinstance(p, rt.nn.Parameter) for p in m_r.scales)
    assert all(isinstance(p, rt.nn.Parameter) for p in m_r.heads.values())
    assert len(m_r.scales) == len(m_t.scales) == 5 and len(m_r.heads) == len(m_t.heads) == 5
    assert list(m_r.heads) == list(m_t.heads) == ["cls", "reg", "aux", "z", "b"]  # a plain dict is sorted


def test_torch_state_dict_loads_and_gradients_reach_the_entries():
    m_r, m_t = _build(rt.nn, rt), _build(torch.nn, torch)
    with torch.no_grad():
        for p in m_t.parameters():
            p.copy_(torch.randn(p.shape))
    m_r.load_state_dict({k: rt.from_numpy(v.numpy().copy()) for k, v in m_t.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((4, 2)).astype(np.float32)
    out_r, out_t = m_r(rt.from_numpy(x.copy())), m_t(torch.from_numpy(x))
    np.testing.assert_allclose(out_r.detach().numpy(), out_t.detach().numpy(), rtol=1e-5, atol=1e-6)
    out_r.sum().backward()
    out_t.sum().backward()
    np.testing.assert_allclose(m_r.scales[0].grad.numpy(), m_t.scales[0].grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m_r.heads["cls"].grad.numpy(), m_t.heads["cls"].grad.numpy(), rtol=1e-5, atol=1e-6)
    opt = rt.optim.SGD(m_r.parameters(), lr=0.5)
    before = m_r.heads["cls"].detach().clone()
    opt.step()
    assert not rt.equal(before, m_r.heads["cls"].detach())


def test_parameter_list_indexing():
    pl = rt.nn.ParameterList([rt.nn.Parameter(rt.full((1,), float(i))) for i in range(4)])
    assert float(pl[-1].item()) == 3.0
    sub = pl[1:3]
    assert isinstance(sub, rt.nn.ParameterList) and [float(p.item()) for p in sub] == [1.0, 2.0]
    assert sub[0] is pl[1]
    assert [float(p.item()) for p in pl[::-2]] == [3.0, 1.0]
    pl[1] = rt.ones(1) * 7
    assert isinstance(pl[1], rt.nn.Parameter) and float(pl[1].item()) == 7.0
    assert _names(pl) == ["0", "1", "2", "3"]
    assert "0" not in dir(pl)
    with pytest.raises(IndexError, match="out of range"):
        pl[4]
    with pytest.raises(TypeError, match="iterable"):
        pl.extend(rt.ones(3))
    with pytest.raises(RuntimeError, match="should not be called"):
        pl(rt.ones(1))


def test_parameter_list_holds_other_objects_like_torch():
    pl_r, pl_t = rt.nn.ParameterList([rt.ones(2), "tag"]), torch.nn.ParameterList([torch.ones(2), "tag"])
    assert pl_r[1] == pl_t[1] == "tag"
    assert _names(pl_r) == _names(pl_t) == ["0"]
    assert repr(pl_r).replace("rustytorch", "torch") == repr(pl_t)


def test_parameter_dict_methods_match_torch():
    def run(nn, lib):
        d = nn.ParameterDict(OrderedDict([("b", nn.Parameter(lib.ones(1))), ("a", nn.Parameter(lib.ones(2)))]))
        log = [list(d.keys())]
        d.update({"d": lib.ones(3), "c": lib.ones(4)})
        log.append(list(d))
        log.append(list(reversed(d)))
        log.append("a" in d and "x" not in d)
        log.append(tuple(d.pop("a").shape))
        log.append(d.popitem()[0])
        log.append(tuple(d.setdefault("e", lib.zeros(5)).shape))
        log.append(tuple(d.setdefault("b", lib.zeros(9)).shape))
        log.append(d.get("missing", "default"))
        merged = d | nn.ParameterDict({"f": lib.ones(1)})
        log.append(list(merged))
        log.append(list(d.copy()))
        log.append(list(d.fromkeys(["p", "q"])))
        d2 = nn.ParameterDict()
        d2 |= d
        log.append([n for n, _ in d2.named_parameters()])
        del d["b"]
        log.append([n for n, _ in d.named_parameters()])
        d.clear()
        log.append(len(d))
        return log

    assert run(rt.nn, rt) == run(torch.nn, torch)


def test_parameter_dict_state_dict_round_trip_and_repr():
    d = rt.nn.ParameterDict({"w": rt.nn.Parameter(rt.randn(2, 3)), "b": rt.nn.Parameter(rt.randn(3))})
    d2 = rt.nn.ParameterDict({"w": rt.nn.Parameter(rt.zeros(2, 3)), "b": rt.nn.Parameter(rt.zeros(3))})
    d2.load_state_dict(d.state_dict())
    assert rt.equal(d2["w"].detach(), d["w"].detach())
    t = torch.nn.ParameterDict({"w": torch.nn.Parameter(torch.randn(2, 3)), "b": torch.nn.Parameter(torch.randn(3))})
    assert repr(d).replace("rustytorch", "torch") == repr(t)


def test_parameter_dict_errors():
    d = rt.nn.ParameterDict()
    with pytest.raises(TypeError, match="not a string"):
        d[1] = rt.nn.Parameter(rt.ones(1))
    with pytest.raises(ValueError, match="has length 3; 2 is required"):
        d.update([("a", rt.ones(1), 3)])
    with pytest.raises(TypeError, match="should be Iterable"):
        d.update([5])
    with pytest.raises(KeyError):
        d.popitem()
    with pytest.raises(RuntimeError, match="should not be called"):
        d(rt.ones(1))
