"""rt.ops: plugin ops from Python. The shipped fused-bias-gelu (build/plugins/) against PyTorch, its gradients,
the profiler's view, autocast, emulated CUDA when the build has it, and the error paths through the ops fixture
(tests/plugins/fixtures/ops_fixture.cpp, namespace rtx_test)."""
import json
import os
from pathlib import Path

import numpy as np
import pytest
import torch

import rustytorch as rt

BUILD_DIR = Path(os.environ.get("RT_BUILD_DIR", Path(__file__).resolve().parents[2] / "build"))
GELU_DIR = BUILD_DIR / "plugins" / "fused-bias-gelu"
FIXTURE_DIR = BUILD_DIR / "tests" / "plugins" / "fixtures" / "ops-fixture"


@pytest.fixture(scope="module", autouse=True)
def plugins():
    for d in (GELU_DIR, FIXTURE_DIR):
        if not (d / "plugin.json").exists():
            pytest.fail(f"{d} is not built: build the fused_bias_gelu and ops_fixture targets")
    rt.ops.load_library(GELU_DIR)
    rt.ops.load_library(FIXTURE_DIR / "plugin.json")


def to_torch(t, requires_grad=False):
    return torch.tensor(t.detach().cpu().numpy(), requires_grad=requires_grad)


def test_load_library_takes_a_folder_its_manifest_or_its_library_and_loads_once():
    a = rt.ops.load_library(GELU_DIR)
    b = rt.ops.load_library(GELU_DIR / "plugin.json")
    c = rt.ops.load_library(str(GELU_DIR / "libfused_bias_gelu.so"))
    assert a == b == c
    assert a["id"] == "org.rustytorch.fused-bias-gelu" and a["namespaces"] == ["rtx"]
    assert a["ops"] == ["rtx::fused_bias_gelu"]
    with pytest.raises(RuntimeError, match="nowhere"):
        rt.ops.load_library("/nowhere/at/all")
    # By id, from the search paths (a build tree's build/plugins is one).
    assert rt.ops.load_library("org.rustytorch.fused-bias-gelu") == a
    with pytest.raises(ValueError, match=r"'org.example.absent' is neither a path nor the id of a plugin in the "
                                         r"search paths \(.*plugins"):
        rt.ops.load_library("org.example.absent")


def test_registered_lists_each_op_with_its_schema_plugin_and_devices():
    ops = {o.name: o for o in rt.ops.registered()}
    info = ops["rtx::fused_bias_gelu"]
    assert info.schema == "fused_bias_gelu(Tensor x, Tensor b) -> Tensor"
    assert info.plugin == "org.rustytorch.fused-bias-gelu"
    assert "cpu" in info.devices and info.differentiable
    assert info.backward_node == "FusedBiasGeluBackward0"
    assert ops["rtx_test::no_backward"].differentiable is False
    assert ops["rtx_test::lowp"].autocast == "lower_precision"
    op = rt.ops.rtx.fused_bias_gelu
    assert op.schema == info.schema and "gelu(x + b)" in op.__doc__
    assert "fused_bias_gelu" in dir(rt.ops.rtx) and "rtx" in dir(rt.ops)


@pytest.mark.parametrize("dtype,tol", [(rt.float32, 2e-6), (rt.float64, 1e-13)])
@pytest.mark.parametrize("shape", [(5,), (33, 17), (2, 3, 130), (300, 256)])
def test_forward_matches_torch_gelu_of_x_plus_b(dtype, tol, shape):
    rt.manual_seed(0)
    x = rt.randn(*shape, dtype=dtype) * 3
    b = rt.randn(shape[-1], dtype=dtype)
    y = rt.ops.rtx.fused_bias_gelu(x, b)
    ref = torch.nn.functional.gelu(to_torch(x).double() + to_torch(b).double())
    assert y.dtype == dtype and tuple(y.shape) == shape
    np.testing.assert_allclose(y.numpy().astype(np.float64), ref.numpy(), rtol=tol, atol=1e-7)
    # And the same as our unfused composition.
    np.testing.assert_allclose(y.numpy(), rt.nn.functional.gelu(x + b).numpy(), rtol=10 * tol, atol=1e-6)


def test_gradients_match_torch_and_central_differences_in_float64():
    rt.manual_seed(1)
    x = rt.randn(6, 9, dtype=rt.float64, requires_grad=True)
    b = rt.randn(9, dtype=rt.float64, requires_grad=True)
    w = rt.randn(6, 9, dtype=rt.float64)
    y = rt.ops.rtx.fused_bias_gelu(x, b)
    assert y.grad_fn.name() == "FusedBiasGeluBackward0"
    (y * w).sum().backward()
    tx, tb = to_torch(x, True), to_torch(b, True)
    (torch.nn.functional.gelu(tx + tb) * to_torch(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-12, atol=1e-13)

    def loss(xv, bv):
        return float((rt.ops.rtx.fused_bias_gelu(rt.tensor(xv), rt.tensor(bv)) * w).sum())

    xv, bv, eps = x.detach().numpy(), b.detach().numpy(), 1e-6
    for (i, j) in [(0, 0), (3, 4), (5, 8)]:
        d = np.zeros_like(xv)
        d[i, j] = eps
        assert abs((loss(xv + d, bv) - loss(xv - d, bv)) / (2 * eps) - x.grad[i, j].item()) < 1e-6
    for j in (0, 8):
        d = np.zeros_like(bv)
        d[j] = eps
        assert abs((loss(xv, bv + d) - loss(xv, bv - d)) / (2 * eps) - b.grad[j].item()) < 1e-6


def test_the_backward_node_is_in_the_graph_and_training_through_it_learns():
    rt.manual_seed(2)
    lin = rt.nn.Linear(4, 8)
    bias = rt.nn.Parameter(rt.zeros(8))
    head = rt.nn.Linear(8, 1)
    params = list(lin.parameters()) + [bias] + list(head.parameters())
    opt = rt.optim.SGD(params, lr=0.05)
    x = rt.randn(32, 4)
    target = x.sum(1, keepdim=True)
    losses = []
    for _ in range(30):
        out = head(rt.ops.rtx.fused_bias_gelu(lin(x), bias))
        loss = ((out - target) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    nodes = []
    fn = head(rt.ops.rtx.fused_bias_gelu(lin(x), bias)).grad_fn
    stack = [fn]
    while stack:
        n = stack.pop()
        if n is None:
            continue
        nodes.append(n.name())
        stack.extend(f for f, _ in n.next_functions)
    assert "FusedBiasGeluBackward0" in nodes


def test_the_profiler_records_the_op_by_name_tagged_with_its_plugin(tmp_path):
    x, b = rt.randn(16, 8, requires_grad=True), rt.randn(8)
    with rt.profiler.profile() as prof:
        rt.ops.rtx.fused_bias_gelu(x, b).sum().backward()
    names = [e.key for e in prof.key_averages()]
    assert "rtx::fused_bias_gelu" in names and "FusedBiasGeluBackward0" in names
    prof.export_chrome_trace(str(tmp_path / "trace.json"))
    trace = json.loads((tmp_path / "trace.json").read_text())
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    ops = [e for e in events if e.get("name") == "rtx::fused_bias_gelu"]
    assert ops and all(e["args"]["plugin"] == "org.rustytorch.fused-bias-gelu" for e in ops)
    assert all("plugin" not in e.get("args", {}) for e in events if e.get("name") == "sum")


def test_arguments_bind_by_position_keyword_and_default_with_tuple_results():
    x = rt.tensor([1.0, 2.0], dtype=rt.float64)
    w = rt.tensor([10.0, 20.0], dtype=rt.float64)
    first, second = rt.ops.rtx_test.combine(x)
    assert first.tolist() == [3.0, 4.0] and second.tolist() == [1.0, 4.0]
    first, _ = rt.ops.rtx_test.combine(x, w, k=0, negate=True, alpha=2)
    assert first.tolist() == [-12.0, -24.0]
    first, _ = rt.ops.rtx_test.combine(x=x, w=None)
    assert first.tolist() == [3.0, 4.0]
    y = rt.tensor([1.0, 2.0])
    assert rt.ops.rtx_test.scale_(y) is y and y.tolist() == [2.0, 4.0]


@pytest.mark.parametrize("call,error,message", [
    (lambda x, b: rt.ops.rtx.fused_bias_gelu(x), TypeError, r"missing required argument 'b' \(position 2\)"),
    (lambda x, b: rt.ops.rtx.fused_bias_gelu(x, b, x), TypeError, r"takes 2 arguments .* but 3 were given"),
    (lambda x, b: rt.ops.rtx.fused_bias_gelu(x, 0.5), TypeError, r"argument 'b' \(position 2\) must be Tensor, not float"),
    (lambda x, b: rt.ops.rtx.fused_bias_gelu(x, b=b, c=1), TypeError, r"unexpected keyword argument 'c'"),
    (lambda x, b: rt.ops.rtx.fused_bias_gelu(x, b, x=x), TypeError, r"multiple values for argument 'x'"),
    (lambda x, b: rt.ops.rtx_test.combine(x.double(), k=1.5), TypeError, r"argument 'k' \(position 4\) must be int"),
    (lambda x, b: rt.ops.rtx_test.combine(x.double(), negate=1), TypeError, r"must be bool, not int"),
    (lambda x, b: rt.ops.rtx.fused_bias_gelu(x, rt.randn(3)), ValueError,
     r"plugin org.rustytorch.fused-bias-gelu: rtx::fused_bias_gelu \(cpu kernel\): fused_bias_gelu: b has 3 elements"),
    (lambda x, b: rt.ops.rtx_test.cuda_only(x), RuntimeError, r"rtx_test::cuda_only has no CPU kernel \(kernels: cuda\)"),
    (lambda x, b: rt.ops.rtx_test.no_backward(x.requires_grad_()), RuntimeError,
     r"rtx_test::no_backward: an argument requires grad, but plugin org.rustytorch.test.ops-fixture registered no "
     r"CPU backward"),
    (lambda x, b: rt.ops.rtx_test.fails(x), ValueError, r"rtx_test::fails \(cpu kernel\): fails: this kernel always fails"),
    (lambda x, b: rt.ops.rtx_test.bad_alias(x), RuntimeError, r"but its kernel returned a new tensor"),
    (lambda x, b: rt.ops.rtx.nope, AttributeError, r"rt.ops.rtx has no op 'nope' \(its ops: fused_bias_gelu\)"),
    (lambda x, b: rt.ops.nowhere, AttributeError, r"rt.ops has no namespace 'nowhere' \(namespaces: rtx, rtx_test\)"),
])
def test_errors_name_the_op_and_the_problem(call, error, message):
    x, b = rt.randn(2, 4), rt.randn(4)
    with pytest.raises(error, match=message):
        call(x, b)


def test_no_grad_runs_an_op_without_a_backward():
    x = rt.randn(3, requires_grad=True)
    with rt.no_grad():
        assert rt.ops.rtx_test.no_backward(x).tolist() == (x.detach() * 2).tolist()


def test_autocast_applies_the_declared_policy():
    x = rt.randn(2, 2)
    rt_dtype_float32, rt_dtype_bfloat16 = 6, 5  # abi.h's RtDType values
    assert rt.ops.rtx_test.lowp(x).item() == rt_dtype_float32
    with rt.autocast("cpu"):
        assert rt.ops.rtx_test.lowp(x).item() == rt_dtype_bfloat16
        assert rt.ops.rtx.fused_bias_gelu(x, rt.randn(2)).dtype == rt.float32  # declares no policy


@pytest.mark.skipif(not rt.cuda.is_available(), reason="no CUDA device (a GPU, or RT_CUDA_EMULATED_DEVICES=1 "
                                                       "in an emulated build)")
def test_cuda_kernels_match_the_cpu_ones_forward_and_backward():
    rt.manual_seed(3)
    # 300 rows: the bias gradient's first pass splits them into 5 chunks of 64 (the last one short).
    for (rows, n), dtype, tol in (((50, 70), rt.float32, 1e-6), ((300, 37), rt.float32, 1e-6),
                                  ((50, 70), rt.float64, 1e-14)):
        x = rt.randn(rows, n, dtype=dtype, requires_grad=True)
        b = rt.randn(n, dtype=dtype, requires_grad=True)
        xc = x.detach().cuda().requires_grad_()
        bc = b.detach().cuda().requires_grad_()
        y, yc = rt.ops.rtx.fused_bias_gelu(x, b), rt.ops.rtx.fused_bias_gelu(xc, bc)
        assert yc.device.type == "cuda" and yc.grad_fn.name() == "FusedBiasGeluBackward0"
        np.testing.assert_allclose(yc.cpu().detach().numpy(), y.detach().numpy(), rtol=tol, atol=tol)
        g = rt.randn(rows, n, dtype=dtype)
        (y * g).sum().backward()
        (yc * g.cuda()).sum().backward()
        np.testing.assert_allclose(xc.grad.cpu().numpy(), x.grad.numpy(), rtol=tol, atol=tol)
        np.testing.assert_allclose(bc.grad.cpu().numpy(), b.grad.numpy(), rtol=100 * tol, atol=100 * tol)
    with pytest.raises(RuntimeError, match=r"rtx_test::no_backward has no CUDA kernel \(kernels: cpu\)"):
        rt.ops.rtx_test.no_backward(rt.randn(3).cuda())
    with pytest.raises(RuntimeError, match=r"every tensor must be on one device"):
        rt.ops.rtx.fused_bias_gelu(rt.randn(2, 3).cuda(), rt.randn(3))
