"""nn.Sequential runs a Linear and the activation after it as one op (Note [Linear + activation in
Sequential]) while rt.backends.cpu.fuse_linear_activation is True: the same values and gradients as the
two modules and as PyTorch, the same autograd graph, the activation's op taking the bias in a profile,
each op in its module's scope, and the plain path wherever a hook, a subclass or a bad input needs the
Linear's own forward."""
import os
import subprocess
import sys

import pytest

import rustytorch as rt
import rustytorch.nn as nn


def _net(act):
    rt.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), act, nn.Linear(16, 4), nn.Tanh())


def _run(net, x, fuse):
    saved = rt.backends.cpu.fuse_linear_activation
    rt.backends.cpu.fuse_linear_activation = fuse
    try:
        net.zero_grad()
        with rt.profiler.profile(record_shapes=True) as prof:
            y = net(x)
        y.sum().backward()
    finally:
        rt.backends.cpu.fuse_linear_activation = saved
    # The activations that added a bias (two inputs): the fused pairs.
    fused = sorted(e.name for e in prof.events()
                   if e.name in ("relu", "gelu", "silu", "sigmoid", "tanh") and len(e.input_shapes) == 2)
    scopes = [(e.name, e.scope) for e in prof.events() if e.depth == 0]
    return y.detach(), [p.grad.clone() for p in net.parameters()], fused, y.grad_fn, scopes


@pytest.mark.parametrize("act,name", [(nn.ReLU(), "relu"), (nn.ReLU(inplace=True), "relu"), (nn.GELU(), "gelu"),
                                      (nn.GELU("tanh"), "gelu"), (nn.SiLU(), "silu"), (nn.Sigmoid(), "sigmoid")])
def test_fused_sequential_matches_the_two_modules(act, name):
    net = _net(act)
    x = rt.randn(5, 6)
    fused, fused_grads, fused_pairs, fused_fn, fused_scopes = _run(net, x, True)
    plain, plain_grads, plain_pairs, plain_fn, plain_scopes = _run(net, x, False)
    assert fused_pairs == sorted([name, "tanh"])  # both pairs fused: each activation added its Linear's bias
    assert plain_pairs == []
    assert fused_scopes == plain_scopes  # the same ops in the same modules
    assert rt.allclose(fused, plain, rtol=1e-5, atol=1e-6)
    for a, b in zip(fused_grads, plain_grads):
        assert rt.allclose(a, b, rtol=1e-4, atol=1e-6)

    def chain(fn):
        names = []
        while fn is not None:
            names.append(fn.name())
            nexts = [f for f, _ in fn.next_functions if f is not None and "AccumulateGrad" not in f.name()]
            fn = nexts[0] if nexts else None
        return names
    # PyTorch's chain for these modules (our in-place ReLU adds a CloneBackward0 when it runs unfused).
    backward = {"relu": "ReluBackward0", "gelu": "GeluBackward0", "silu": "SiluBackward0", "sigmoid": "SigmoidBackward0"}
    assert chain(fused_fn) == ["TanhBackward0", "AddmmBackward0", backward[name], "AddmmBackward0"]


def test_matches_pytorch(torch):
    rt.manual_seed(1)
    net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3))
    tnet = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 3))
    with torch.no_grad():
        for p, q in zip(net.parameters(), tnet.parameters()):
            q.copy_(torch.from_numpy(p.detach().numpy()))
    x = rt.randn(4, 8)
    y = net(x)
    ty = tnet(torch.from_numpy(x.numpy()))
    assert abs(y.detach().numpy() - ty.detach().numpy()).max() < 1e-5
    y.sum().backward()
    ty.sum().backward()
    assert abs(net[0].weight.grad.numpy() - tnet[0].weight.grad.numpy()).max() < 1e-4


def test_hooks_subclasses_and_bad_inputs_take_the_plain_path():
    net = _net(nn.ReLU())
    x = rt.randn(3, 6)
    seen = []
    handle = net[0].register_forward_hook(lambda m, args, out: seen.append(out.min().item()))
    _, _, fused, _, _ = _run(net, x, True)
    handle.remove()
    assert seen and seen[0] < 0  # the hook saw the Linear's own output, before the ReLU
    assert fused == ["tanh"]     # the second pair still fused

    class MyReLU(nn.ReLU):
        def forward(self, input):
            return super().forward(input) * 2

    doubled = _net(MyReLU())
    _, _, fused, _, _ = _run(doubled, x, True)
    assert fused == ["tanh"]

    with pytest.raises(Exception, match="in_features"):
        net(rt.randn(3, 7))  # the Linear's own error, not the fused op's


def test_switch_from_the_environment():
    env = dict(os.environ, RT_FUSE_LINEAR_ACTIVATION="0")
    out = subprocess.run([sys.executable, "-c", "import rustytorch as rt; print(rt.backends.cpu.fuse_linear_activation)"],
                         env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert rt.backends.cpu.fuse_linear_activation is True


def test_bad_activation_name_is_refused():
    with pytest.raises(ValueError, match="not one of relu"):
        rt._C._linear_pointwise(rt.randn(2, 3), rt.randn(4, 3), None, "softplus")
