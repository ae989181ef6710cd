"""DistributedDataParallel with real processes on gloo: gradients equal to one process training on the
concatenated batch, parity with Debian's PyTorch 1.13 DDP, unused parameters named, no_sync, comm hooks,
buckets and their overlap with the backward pass."""
import json

import numpy as np
import pytest

import rustytorch as rt
import rustytorch.distributed as dist
from dist_ranks import run_ranks

pytestmark = pytest.mark.skipif(not dist.is_gloo_available(), reason="the gloo backend is not built")

# A deterministic MLP and data: every process builds the same from numpy seeds.
MODEL = """
import json, os
import numpy as np
import rustytorch as rt
import rustytorch.distributed as dist
from rustytorch.nn.parallel import DistributedDataParallel as DDP

def make_model(dtype):
    rng = np.random.default_rng(7)
    m = rt.nn.Sequential(rt.nn.Linear(6, 16), rt.nn.Tanh(), rt.nn.Linear(16, 8), rt.nn.Tanh(), rt.nn.Linear(8, 3))
    with rt.no_grad():
        for p in m.parameters():
            p.copy_(rt.tensor(rng.standard_normal(tuple(p.shape)) * 0.5, dtype=dtype))
    return m.to(dtype)

def batch(step, dtype, n=12):
    rng = np.random.default_rng(100 + step)
    return (rt.tensor(rng.standard_normal((n, 6)), dtype=dtype), rt.tensor(rng.integers(0, 3, n), dtype=rt.int64))
"""


def reference_namespace():
    """MODEL's make_model and batch, in this process (no process group)."""
    ns = {}
    exec(MODEL.replace("import rustytorch.distributed as dist\n", "").replace(
        "from rustytorch.nn.parallel import DistributedDataParallel as DDP\n", ""), ns)
    return ns


def single_process_params(steps, dtype_name, world):
    """The reference: one process, the whole batch, the same SGD."""
    ns = reference_namespace()
    dtype = getattr(rt, dtype_name)
    m = ns["make_model"](dtype)
    opt = rt.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    for step in range(steps):
        x, y = ns["batch"](step, dtype, 12)
        loss = rt.nn.functional.cross_entropy(m(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return [p.detach().numpy().tolist() for p in m.parameters()]


@pytest.mark.parametrize("world", [2, 3])
def test_gradients_equal_one_process_on_the_concatenated_batch(world):
    code = MODEL + f"""
dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()
model = DDP(make_model(rt.float64), bucket_cap_mb=0.0005)   # several buckets of ~500 bytes
opt = rt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(5):
    x, y = batch(step, rt.float64, 12)
    shard = slice(r * 12 // n, (r + 1) * 12 // n)
    loss = rt.nn.functional.cross_entropy(model(x[shard]), y[shard])
    opt.zero_grad()
    loss.backward()
    opt.step()
print("RESULT " + json.dumps({{"params": [p.detach().numpy().tolist() for p in model.module.parameters()],
                               "buckets": model.bucket_sizes(), "keys": list(model.state_dict().keys())[:2]}}))
"""
    results = run_ranks(code, world)
    want = single_process_params(5, "float64", world)
    for res in results:
        for got, ref in zip(res["params"], want):
            np.testing.assert_allclose(np.array(got), np.array(ref), rtol=0, atol=1e-12)
        assert len(res["buckets"]) >= 3, res["buckets"]
        assert res["keys"] == ["module.0.weight", "module.0.bias"]


def test_parameters_match_pytorch_ddp_after_20_steps():
    torch = pytest.importorskip("torch")
    import torch.distributed  # noqa: F401
    torch_code = """
import json, os
import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
torch.set_num_threads(1)
rng = np.random.default_rng(7)
m = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 8), torch.nn.Tanh(),
                        torch.nn.Linear(8, 3))
with torch.no_grad():
    for p in m.parameters():
        p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)) * 0.5, dtype=torch.float32))
dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()
model = DDP(m)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(20):
    g = np.random.default_rng(100 + step)
    x = torch.tensor(g.standard_normal((12, 6)), dtype=torch.float32)
    y = torch.tensor(g.integers(0, 3, 12), dtype=torch.int64)
    shard = slice(r * 6, (r + 1) * 6)
    loss = torch.nn.functional.cross_entropy(model(x[shard]), y[shard])
    opt.zero_grad()
    loss.backward()
    opt.step()
print("RESULT " + json.dumps([p.detach().numpy().tolist() for p in model.module.parameters()]))
"""
    ours_code = MODEL + """
dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()
model = DDP(make_model(rt.float32))
opt = rt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(20):
    x, y = batch(step, rt.float32, 12)
    shard = slice(r * 6, (r + 1) * 6)
    loss = rt.nn.functional.cross_entropy(model(x[shard]), y[shard])
    opt.zero_grad()
    loss.backward()
    opt.step()
print("RESULT " + json.dumps([p.detach().numpy().tolist() for p in model.module.parameters()]))
"""
    theirs = run_ranks(torch_code, 2, timeout=180)
    ours = run_ranks(ours_code, 2)
    for got, ref in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(np.array(got), np.array(ref), rtol=0, atol=1e-6)
    for got, ref in zip(ours[1], ours[0]):
        assert got == ref  # every rank holds the same parameters


def test_a_parameter_without_gradient_is_named_and_find_unused_parameters_handles_it():
    code = MODEL + """
class Net(rt.nn.Module):
    def __init__(self):
        super().__init__()
        self.used = rt.nn.Linear(4, 2)
        self.head = rt.nn.Linear(2, 1)
        self.unused = rt.nn.Linear(4, 2)
    def forward(self, x):
        return self.head(self.used(x))
dist.init_process_group("gloo")
out = {}
model = DDP(Net())
for step in range(2):
    try:
        model(rt.ones(3, 4)).sum().backward()
    except RuntimeError as e:
        out["error"] = str(e)
        break
rt.manual_seed(0)
model2 = DDP(Net(), find_unused_parameters=True)
for step in range(3):
    model2.zero_grad()
    model2(rt.ones(3, 4) * (dist.get_rank() + 1)).sum().backward()
out["unused_grad"] = model2.module.unused.weight.grad is None
out["used_grad"] = model2.module.used.weight.grad.tolist()
print("RESULT " + json.dumps(out))
"""
    results = run_ranks(code, 2)
    for res in results:
        assert "received no gradient" in res["error"]
        assert "unused.weight" in res["error"] and "unused.bias" in res["error"]
        assert "used.weight" not in res["error"].replace("unused.weight", "")
        assert "find_unused_parameters=True" in res["error"]
        assert res["unused_grad"] is True
    assert results[0]["used_grad"] == results[1]["used_grad"]


def test_no_sync_accumulates_locally_then_reduces_everything():
    code = MODEL + """
dist.init_process_group("gloo")
r = dist.get_rank()
model = DDP(make_model(rt.float64))
for micro in range(3):
    x, y = batch(micro, rt.float64, 4)
    x, y = x[r * 2:(r + 1) * 2], y[r * 2:(r + 1) * 2]
    if micro < 2:
        with model.no_sync():
            rt.nn.functional.cross_entropy(model(x), y).backward()
        local = model.module[0].weight.grad.clone()
    else:
        rt.nn.functional.cross_entropy(model(x), y).backward()
print("RESULT " + json.dumps({"grad": model.module[0].weight.grad.tolist(), "local": local.tolist()}))
"""
    results = run_ranks(code, 2)
    ns = reference_namespace()
    m = ns["make_model"](rt.float64)
    for micro in range(3):
        x, y = ns["batch"](micro, rt.float64, 4)
        for r in range(2):   # each rank's mean loss, averaged over ranks by DDP
            (rt.nn.functional.cross_entropy(m(x[r * 2:(r + 1) * 2]), y[r * 2:(r + 1) * 2]) / 2).backward()
    want = m[0].weight.grad.numpy()
    for res in results:
        np.testing.assert_allclose(np.array(res["grad"]), want, rtol=0, atol=1e-12)
    assert results[0]["local"] != results[1]["local"]   # inside no_sync nothing was exchanged


def test_fp16_compression_hook_and_overlap_with_backward():
    code = MODEL + """
from rustytorch.distributed.algorithms.ddp_comm_hooks import default_hooks
import rustytorch.profiler as prof
dist.init_process_group("gloo")
r = dist.get_rank()
big = rt.nn.Sequential(*[rt.nn.Linear(256, 256) for _ in range(6)]).double()
model = DDP(big, bucket_cap_mb=0.3)
x = rt.randn(32, 256, dtype=rt.float64)
model(x).sum().backward()          # first iteration: buckets are rebuilt from the arrival order
model.zero_grad()
with prof.profile() as p:
    model(x).sum().backward()
events = p.events()
backward = [e for e in events if e.is_backward]
reduces = [e for e in events if e.name == "all_reduce"]
comms = [c for c in p.collectives() if c.name == "all_reduce"]
hooked = DDP(make_model(rt.float32))
hooked.register_comm_hook(None, default_hooks.fp16_compress_hook)
xb, yb = batch(0, rt.float32, 12)
rt.nn.functional.cross_entropy(hooked(xb[r * 6:(r + 1) * 6]), yb[r * 6:(r + 1) * 6]).backward()
print("RESULT " + json.dumps({
    "buckets": len(model.bucket_sizes()), "reduces": len(reduces),
    "first_reduce_start": min(e.time_range.start for e in reduces),
    "backward_end": max(e.time_range.end for e in backward),
    "comms": [[c.group, c.seq, c.bytes, c.dtype, c.enqueue_ns, c.start_ns, c.end_ns, c.call_site] for c in comms],
    "hooked": [p.grad.tolist() for p in hooked.module.parameters()]}))
"""
    results = run_ranks(code, 2, timeout=180)
    ns = reference_namespace()
    m = ns["make_model"](rt.float32)
    xb, yb = ns["batch"](0, rt.float32, 12)
    for r in range(2):
        (rt.nn.functional.cross_entropy(m(xb[r * 6:(r + 1) * 6]), yb[r * 6:(r + 1) * 6]) / 2).backward()
    for res in results:
        assert res["buckets"] >= 4 and res["reduces"] == res["buckets"]
        # communication overlaps the backward: the first bucket's all-reduce starts before backward ends
        assert res["first_reduce_start"] < res["backward_end"]
        # ... as the profiler's collective records show: each bucket's all-reduce, with its bytes, ran on
        # gloo's workers while backward nodes were still running
        comms = res["comms"]
        assert len(comms) == res["buckets"]
        assert sum(c[2] for c in comms) == 6 * (256 * 256 + 256) * 8
        assert all(c[0] == "default" and c[3] == "float64" and c[4] <= c[5] <= c[6] for c in comms)
        assert sorted(c[1] for c in comms) == list(range(comms[0][1], comms[0][1] + len(comms)))
        assert min(c[5] for c in comms) / 1e3 < res["backward_end"]
        for got, p in zip(res["hooked"], m.parameters()):
            np.testing.assert_allclose(np.array(got), p.grad.numpy(), rtol=2e-3, atol=2e-3)


def test_mismatched_models_are_refused_naming_the_parameter():
    code = """
import json
import rustytorch as rt
import rustytorch.distributed as dist
from rustytorch.nn.parallel import DistributedDataParallel as DDP
dist.init_process_group("gloo")
width = 4 if dist.get_rank() == 0 else 5
try:
    DDP(rt.nn.Sequential(rt.nn.Linear(3, width)))
    print("RESULT " + json.dumps(None))
except RuntimeError as e:
    print("RESULT " + json.dumps(str(e)))
"""
    for msg in run_ranks(code, 2):
        assert "parameter 0.weight on rank 1 is [5, 3]" in msg and "rank 0's 0.weight is [4, 3]" in msg
