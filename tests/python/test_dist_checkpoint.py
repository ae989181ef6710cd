"""rustytorch.distributed.checkpoint: the commit order survives a crash at every write, damaged files are found by
their sha256 and skipped with a warning, keep=K pruning, and an exact round trip of a DDP model, SGD momentum,
the sampler's epoch and every rank's RNG state with 1 and 2 real processes."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import rustytorch as rt
import rustytorch.distributed as dist
from rustytorch.distributed import checkpoint as ckpt
from dist_ranks import run_ranks

HANG_GUARD = 90  # seconds; a bound against a hung child, never a timing check


def small_model(seed=0):
    rng = np.random.default_rng(seed)
    m = rt.nn.Sequential(rt.nn.Linear(3, 4), rt.nn.Tanh(), rt.nn.Linear(4, 2)).to(rt.float64)
    with rt.no_grad():
        for p in m.parameters():
            p.copy_(rt.tensor(rng.standard_normal(tuple(p.shape)), dtype=rt.float64))
    return m


def train(model, opt, steps, first=0):
    for step in range(first, first + steps):
        rng = np.random.default_rng(step)
        x = rt.tensor(rng.standard_normal((5, 3)), dtype=rt.float64)
        loss = (model(x) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


def params(model):
    return [p.detach().numpy().copy() for p in model.parameters()]


def saved_steps(d):
    return [s for s, _ in ckpt.list_checkpoints(d)]


def save_steps(d, steps, keep=2):
    """A model trained one step per checkpoint; returns {step: parameters} as saved."""
    m = small_model()
    opt = rt.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    saved = {}
    for step in steps:
        train(m, opt, 1, first=step)
        ckpt.save(d, model=m, optimizer=opt, step=step, keep=keep)
        saved[step] = params(m)
    return saved


def load_into_fresh(d, **kw):
    m = small_model(seed=99)
    opt = rt.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    return ckpt.load_latest(d, model=m, optimizer=opt, **kw), m, opt


def assert_params_equal(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


# ---- layout, keep, errors ------------------------------------------------------------------------

def test_layout_manifest_and_latest(tmp_path):
    d = tmp_path / "ck"
    saved = save_steps(d, [1, 2])
    assert (d / "latest").read_text() == "step-000002\n"
    assert sorted(os.listdir(d)) == ["latest", "step-000001", "step-000002"]
    folder = d / "step-000002"
    assert sorted(os.listdir(folder)) == ["manifest.json", "model.safetensors", "optimizer.safetensors",
                                          "state.safetensors"]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["format"] == "rustytorch.distributed.checkpoint" and manifest["step"] == 2
    assert sorted(manifest["files"]) == ["model.safetensors", "optimizer.safetensors", "state.safetensors"]
    for name, info in manifest["files"].items():
        assert info["bytes"] == (folder / name).stat().st_size and len(info["sha256"]) == 64
    # model.safetensors is a plain state_dict that rt.load (or any safetensors reader) reads by name
    assert list(rt.load(folder / "model.safetensors").keys()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    step, m, _ = load_into_fresh(d)
    assert step == 2
    assert_params_equal(params(m), saved[2])


@pytest.mark.parametrize("keep", [1, 2, 3])
def test_keep_prunes_older_checkpoints(tmp_path, keep):
    d = tmp_path / "ck"
    save_steps(d, [1, 2, 3, 4, 5], keep=keep)
    assert saved_steps(d) == [1, 2, 3, 4, 5][-keep:]
    assert (d / "latest").read_text().strip() == "step-000005"


def test_missing_empty_and_bad_directories(tmp_path):
    m = small_model()
    with pytest.raises(FileNotFoundError, match="no such directory: .*nowhere.*Hint: create it"):
        ckpt.load_latest(tmp_path / "nowhere", model=m)
    (tmp_path / "empty").mkdir()
    assert ckpt.load_latest(tmp_path / "empty", model=m) is None
    assert ckpt.load_latest(tmp_path / "empty", model=m, return_extra=True) == (None, None)
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError, match="is not a directory"):
        ckpt.load_latest(tmp_path / "file", model=m)
    with pytest.raises(NotADirectoryError, match="exists and is not a directory"):
        ckpt.save(tmp_path / "file", model=m, step=1)
    with pytest.raises(ValueError, match="step must be 0 or more"):
        ckpt.save(tmp_path / "ck", model=m, step=-1)
    with pytest.raises(TypeError, match="step must be an int"):
        ckpt.save(tmp_path / "ck", model=m, step=1.0)
    with pytest.raises(ValueError, match="keep must be an int of at least 1"):
        ckpt.save(tmp_path / "ck", model=m, step=1, keep=0)


def test_missing_optimizer_or_sampler_state_is_named(tmp_path):
    d = tmp_path / "ck"
    m = small_model()
    ckpt.save(d, model=m, step=3, extra={"note": "no optimizer"})
    opt = rt.optim.SGD(m.parameters(), lr=0.1)
    with pytest.raises(ckpt.CheckpointError, match="holds no optimizer state"):
        ckpt.load_latest(d, model=m, optimizer=opt)
    from rustytorch.utils.data.distributed import DistributedSampler
    with pytest.raises(ckpt.CheckpointError, match="holds no sampler state"):
        ckpt.load_latest(d, model=m, sampler=DistributedSampler(list(range(8)), num_replicas=1, rank=0))
    assert ckpt.load_latest(d, model=m, return_extra=True) == (3, {"note": "no optimizer"})


# ---- damaged checkpoints -----------------------------------------------------------------------

@pytest.mark.parametrize("damage", ["truncate", "flip_byte", "no_manifest", "bad_manifest", "missing_file"])
def test_damaged_latest_falls_back_to_the_previous_complete_one(tmp_path, damage):
    d = tmp_path / "ck"
    saved = save_steps(d, [1, 2])
    folder = d / "step-000002"
    target = folder / "optimizer.safetensors"
    data = target.read_bytes()
    if damage == "truncate":
        target.write_bytes(data[:len(data) // 2])
        expected = "optimizer.safetensors has .* bytes, the manifest says"
    elif damage == "flip_byte":
        target.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))
        expected = "optimizer.safetensors has sha256 .*damaged"
    elif damage == "no_manifest":
        (folder / "manifest.json").unlink()
        expected = "has no manifest.json"
    elif damage == "bad_manifest":
        (folder / "manifest.json").write_text('{"format": "rustytorch.distrib')
        expected = "manifest.json cannot be read"
    else:
        target.unlink()
        expected = "optimizer.safetensors is missing"
    with pytest.warns(ckpt.CheckpointWarning, match=f"step-000001.*step 1.*instead of the latest: .*{expected}"):
        step, m, _ = load_into_fresh(d)
    assert step == 1
    assert_params_equal(params(m), saved[1])


def test_every_checkpoint_damaged_is_an_error_naming_each(tmp_path):
    d = tmp_path / "ck"
    save_steps(d, [1, 2])
    for s in (1, 2):
        f = d / f"step-00000{s}" / "model.safetensors"
        f.write_bytes(f.read_bytes()[:10])
    with pytest.raises(ckpt.CheckpointError, match="no complete checkpoint.*step-000002.*model.safetensors"
                                                   ".*step-000001.*model.safetensors"):
        load_into_fresh(d)


def test_missing_latest_pointer_takes_the_newest_complete_folder(tmp_path):
    d = tmp_path / "ck"
    saved = save_steps(d, [1, 2])
    (d / "latest").unlink()
    with pytest.warns(ckpt.CheckpointWarning, match="latest' is missing"):
        step, m, _ = load_into_fresh(d)
    assert step == 2
    assert_params_equal(params(m), saved[2])


# ---- crashes between writes (a child process that dies with os._exit at one point of save) -------------------

CRASHING_SAVE = """
import os, sys
import numpy as np
import rustytorch as rt
from rustytorch.distributed import checkpoint as ckpt
d, where, nth = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = rt.nn.Linear(3, 2)
opt = rt.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
m(rt.ones(1, 3)).sum().backward(); opt.step()
ckpt.save(d, model=m, optimizer=opt, step=1)
np.save(os.path.join(d, "..", "step1.npy"), m.weight.detach().numpy())
calls = [0]
original = getattr(ckpt, where)
def dying(*args, **kw):
    calls[0] += 1
    if calls[0] == nth:
        os._exit(17)          # as kill -9: no cleanup, no exception handler runs
    return original(*args, **kw)
setattr(ckpt, where, dying)
m(rt.ones(1, 3)).sum().backward(); opt.step()
ckpt.save(d, model=m, optimizer=opt, step=2)
os._exit(0)
"""

# (function that dies, on which call): every point of the commit order in Note [Checkpoint commit]
CRASH_POINTS = [
    ("_fsync_file", 1),     # the model file written, before its fsync
    ("_fsync_file", 3),     # the state file written, the manifest not yet
    ("_fsync_dir", 1),      # every file and the manifest written, the temporary folder not yet renamed
    ("_fsync_dir", 2),      # the folder renamed to step-000002, `latest` not yet replaced
    ("_point_latest", 1),   # the same, entering the pointer update
]


@pytest.mark.parametrize("where, nth", CRASH_POINTS)
def test_crash_during_save_leaves_latest_on_the_previous_checkpoint(tmp_path, where, nth):
    d = tmp_path / "ck"
    script = tmp_path / "crash.py"
    script.write_text(textwrap.dedent(CRASHING_SAVE))
    r = subprocess.run([sys.executable, str(script), str(d), where, str(nth)], capture_output=True, text=True,
                       timeout=HANG_GUARD)
    assert r.returncode == 17, r.stderr
    assert (d / "latest").read_text() == "step-000001\n"
    left = sorted(os.listdir(d))
    if (where, nth) in (("_fsync_dir", 2), ("_point_latest", 1)):
        assert left == ["latest", "step-000001", "step-000002"]   # complete, but not committed by `latest`
    else:
        assert len(left) == 3 and left[0].startswith(".tmp-step-000002-") and left[1:] == ["latest", "step-000001"]
    m = rt.nn.Linear(3, 2)
    opt = rt.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the previous checkpoint is complete: no warning
        assert ckpt.load_latest(d, model=m, optimizer=opt) == 1
    np.testing.assert_array_equal(m.weight.detach().numpy(), np.load(tmp_path / "step1.npy"))
    # the next save of step 2 replaces whatever the crash left behind and cleans up
    ckpt.save(d, model=m, optimizer=opt, step=2)
    assert sorted(os.listdir(d)) == ["latest", "step-000001", "step-000002"]
    assert ckpt.load_latest(d, model=m, optimizer=opt) == 2


# ---- DDP round trip with real ranks ----------------------------------------------------------------------

ROUND_TRIP = """
import json, os, random
import numpy as np
import rustytorch as rt
import rustytorch.distributed as dist
from rustytorch.distributed import checkpoint as ckpt
from rustytorch.nn.parallel import DistributedDataParallel as DDP
from rustytorch.utils.data.distributed import DistributedSampler

d = os.environ["CKPT_DIR"]
dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()

def make():
    rng = np.random.default_rng(7)
    m = rt.nn.Sequential(rt.nn.Linear(4, 8), rt.nn.Tanh(), rt.nn.Linear(8, 2)).to(rt.float64)
    with rt.no_grad():
        for p in m.parameters():
            p.copy_(rt.tensor(rng.standard_normal(tuple(p.shape)), dtype=rt.float64))
    model = DDP(m)
    return model, rt.optim.SGD(model.parameters(), lr=0.05, momentum=0.9), DistributedSampler(list(range(10)))

def run(model, opt, sampler, steps, first):
    for step in range(first, first + steps):
        x = rt.randn(6, 4, dtype=rt.float64)          # draws from this rank's generator
        loss = (model(x) ** 2).mean()
        opt.zero_grad(); loss.backward(); opt.step()

def snapshot(model, opt, sampler):
    return {"params": [p.detach().numpy().tolist() for p in model.module.parameters()],
            "momentum": [opt.state[p]["momentum_buffer"].numpy().tolist() for p in model.module.parameters()],
            "epoch": sampler.epoch, "order": list(iter(sampler))}

rt.manual_seed(1000 + r); random.seed(2000 + r); np.random.seed(3000 + r)   # a different stream on every rank
model, opt, sampler = make()
run(model, opt, sampler, 3, 0)
sampler.set_epoch(4)
ckpt.save(d, model=model, optimizer=opt, sampler=sampler, step=3, extra={"lr": 0.05, "rank0_note": "hi"})
saved = snapshot(model, opt, sampler)
rng_after_save = (rt.get_rng_state(), random.getstate(), np.random.get_state())
draws = [rt.randn(3).tolist(), random.random(), float(np.random.rand())]
rt.set_rng_state(rng_after_save[0]); random.setstate(rng_after_save[1]); np.random.set_state(rng_after_save[2])
run(model, opt, sampler, 2, 3)                   # what resuming at step 3 must reproduce
after = [p.detach().numpy().tolist() for p in model.module.parameters()]

rt.manual_seed(5); random.seed(5); np.random.seed(5)
model2, opt2, sampler2 = make()
step, extra = ckpt.load_latest(d, model=model2, optimizer=opt2, sampler=sampler2, return_extra=True)
loaded = snapshot(model2, opt2, sampler2)
draws2 = [rt.randn(3).tolist(), random.random(), float(np.random.rand())]
ckpt.load_latest(d, model=model2, optimizer=opt2, sampler=sampler2)
run(model2, opt2, sampler2, 2, 3)
after2 = [p.detach().numpy().tolist() for p in model2.module.parameters()]
print("RESULT " + json.dumps({"step": step, "extra": extra, "same_state": saved == loaded, "draws": draws,
                              "same_draws": draws == draws2, "same_after": after == after2, "params": saved["params"],
                              "epoch": loaded["epoch"]}))
"""


@pytest.mark.skipif(not dist.is_gloo_available(), reason="the gloo backend is not built")
@pytest.mark.parametrize("world", [1, 2])
def test_ddp_optimizer_sampler_and_rng_round_trip_exactly(tmp_path, world):
    d = tmp_path / "ck"
    results = run_ranks(ROUND_TRIP, world, env={"CKPT_DIR": str(d)})
    for res in results:
        assert res["step"] == 3 and res["extra"] == {"lr": 0.05, "rank0_note": "hi"} and res["epoch"] == 4
        assert res["same_state"], "parameters, momentum buffers or the sampler's order differ after load_latest"
        assert res["same_draws"], "the RNG streams (rustytorch, random, numpy) differ after load_latest"
        assert res["same_after"], "two more steps after resuming differ from the uninterrupted ones"
    if world == 2:
        assert results[0]["draws"] != results[1]["draws"]  # each rank got its own RNG state back
    assert sorted(os.listdir(d)) == ["latest", "step-000003"]
    # the checkpoint of a DDP model loads into a plain model, in a process without a process group
    plain = rt.nn.Sequential(rt.nn.Linear(4, 8), rt.nn.Tanh(), rt.nn.Linear(8, 2)).to(rt.float64)
    assert ckpt.load_latest(d, model=plain) == 3
    assert [p.detach().numpy().tolist() for p in plain.parameters()] == results[0]["params"]


SAVE_FAILS = """
import json, os
import rustytorch as rt
import rustytorch.distributed as dist
from rustytorch.distributed import checkpoint as ckpt
dist.init_process_group("gloo")
try:
    ckpt.save(os.environ["CKPT_FILE"], model=rt.nn.Linear(2, 2), step=1)
    print("RESULT " + json.dumps("saved"))
except ckpt.CheckpointError as e:
    print("RESULT " + json.dumps(str(e)))
"""


@pytest.mark.skipif(not dist.is_gloo_available(), reason="the gloo backend is not built")
def test_rank0s_write_error_reaches_every_rank(tmp_path):
    (tmp_path / "a_file").write_text("not a directory")
    results = run_ranks(SAVE_FAILS, 2, env={"CKPT_FILE": str(tmp_path / "a_file")})
    for msg in results:
        assert msg.startswith("checkpoint.save: rank 0 could not write step 1 to")
        assert "NotADirectoryError" in msg and "exists and is not a directory" in msg


DIFFERENT_DIRS = """
import json, os
import rustytorch as rt
import rustytorch.distributed as dist
from rustytorch.distributed import checkpoint as ckpt
dist.init_process_group("gloo")
m = rt.nn.Sequential(rt.nn.Linear(3, 4), rt.nn.Tanh(), rt.nn.Linear(4, 2)).to(rt.float64)
try:
    ckpt.load_latest(os.environ["CKPT_DIR_%d" % dist.get_rank()], model=m)
    print("RESULT " + json.dumps("loaded"))
except Exception as e:
    print("RESULT " + json.dumps(f"{type(e).__name__}: {e}"))
"""


@pytest.mark.skipif(not dist.is_gloo_available(), reason="the gloo backend is not built")
def test_ranks_that_see_different_checkpoints_all_raise(tmp_path):
    save_steps(tmp_path / "node0", [1, 2])
    save_steps(tmp_path / "node1", [1])
    results = run_ranks(DIFFERENT_DIRS, 2, env={"CKPT_DIR_0": str(tmp_path / "node0"),
                                                "CKPT_DIR_1": str(tmp_path / "node1")})
    for msg in results:
        assert msg.startswith("CheckpointError: checkpoint.load_latest: the ranks found different checkpoints")
        assert "rank 0: step-000002, rank 1: step-000001" in msg and "every rank sees" in msg
    # a rank that cannot read the directory at all: it raises its own error, the others name it
    results = run_ranks(DIFFERENT_DIRS, 2, env={"CKPT_DIR_0": str(tmp_path / "node0"),
                                                "CKPT_DIR_1": str(tmp_path / "missing")})
    assert results[1].startswith("FileNotFoundError: checkpoint.load_latest: no such directory")
    assert results[0].startswith("CheckpointError: checkpoint.load_latest: other ranks could not read")
    assert "rank 1: FileNotFoundError" in results[0]
