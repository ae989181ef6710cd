"""A `rtorch launch` job whose ranks load the fused-bias-gelu plugin and train a small model through
rt.ops.rtx.fused_bias_gelu with DDP over gloo: every rank shares the op's name, the gradients all-reduce through the
plugin's backward, and the ranks end with the same parameters."""
import textwrap

import pytest

from conftest import BUILD_DIR
from test_launch_store import launch


SCRIPT = """
import sys
import rustytorch as rt
import rustytorch.distributed as dist
from rustytorch.nn.parallel import DistributedDataParallel as DDP

rt.ops.load_library(sys.argv[1])
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()


class Net(rt.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = rt.nn.Linear(4, 16, bias=False)
        self.bias = rt.nn.Parameter(rt.zeros(16))
        self.fc2 = rt.nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(rt.ops.rtx.fused_bias_gelu(self.fc1(x), self.bias))


rt.manual_seed(0)
model = DDP(Net())
opt = rt.optim.SGD(model.parameters(), lr=0.05)
rt.manual_seed(100 + rank)  # each rank its own data
x = rt.randn(64, 4)
y = (x * rt.tensor([1.0, -2.0, 0.5, 3.0])).sum(1, keepdim=True)
losses = []
for step in range(40):
    loss = ((model(x) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())
assert losses[-1] < 0.5 * losses[0], losses
flat = rt.cat([p.detach().reshape(-1) for p in model.parameters()])
gathered = [rt.zeros_like(flat) for _ in range(world)]
dist.all_gather(gathered, flat)
assert all(rt.equal(g, gathered[0]) for g in gathered), "ranks diverged"
h = model.module.fc1(x)
node = rt.ops.rtx.fused_bias_gelu(h, model.module.bias).grad_fn.name()
print(f"rank {rank} trained through {node}: loss {losses[0]:.4f} -> {losses[-1]:.4f}", flush=True)
dist.destroy_process_group()
"""


def test_two_ranks_train_through_the_plugin_op_with_ddp(tmp_path):
    plugin = BUILD_DIR / "plugins" / "fused-bias-gelu"
    if not (plugin / "plugin.json").exists():
        pytest.fail(f"{plugin} is not built: build the fused_bias_gelu target")
    (tmp_path / "train.py").write_text(textwrap.dedent(SCRIPT))
    # test_launch_store's launcher: a clean environment, a free port, a bound against a hung launch.
    r = launch(tmp_path, "--nproc-per-node", "2", "train.py", plugin)
    out, err = r.stdout, r.stderr
    assert r.returncode == 0, f"stdout:\n{out}\nstderr:\n{err}"
    for rank in (0, 1):
        assert f"rank {rank} trained through FusedBiasGeluBackward0" in out, out
