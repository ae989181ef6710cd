"""Fault test: kill -9 of rank 1 in the middle of a deterministic 2-rank DDP run under
`rtorch launch --max-restarts 1`; the relaunched ranks resume from rustytorch.distributed.checkpoint and finish
with final parameters bit-identical to an uninterrupted run. The relaunch time (from the kill to the first line
of a restarted rank) is printed and kept in the junit properties, never asserted.
Every launcher runs in its own session, killed with everything it started when the test ends."""
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from conftest import RTORCH

HANG_GUARD = 180  # seconds; only a bound against a hung job, never a timing check

STEPS = 16          # 2 ranks x 4 samples per step, 64 samples: 8 steps per epoch, so the run spans two epochs
SAVE_EVERY = 3      # checkpoints after steps 3, 6, 9, 12, 15 (step=3 means: 3 steps done, the next to run is 3)
KILL_AT = 10        # rank 1 stops in the middle of step 10, after its backward; the resume starts at step 9

TRAIN = """
import os, sys, time
run_dir = sys.argv[1]
rank, restart = int(os.environ["RANK"]), int(os.environ["TORCHELASTIC_RESTART_COUNT"])
with open(os.path.join(run_dir, f"start-rank{rank}-restart{restart}"), "w") as f:
    f.write(repr(time.time()))
print(f"start rank {rank} restart {restart}", flush=True)

import numpy as np
import rustytorch as rt
import rustytorch.distributed as dist
from rustytorch.distributed import checkpoint as ckpt
from rustytorch.nn.parallel import DistributedDataParallel as DDP
from rustytorch.utils.data.distributed import DistributedSampler

STEPS, SAVE_EVERY, KILL_AT, BATCH = %(steps)d, %(save_every)d, %(kill_at)d, 4
kill_me = os.environ.get("KILL_RANK1_AT_STEP") is not None and rank == 1 and restart == 0

dist.init_process_group("gloo")
rt.manual_seed(1234 + rank)                  # dropout draws a different stream on every rank
data_rng = np.random.default_rng(0)
X = rt.tensor(data_rng.standard_normal((64, 8)), dtype=rt.float32)
Y = rt.tensor(data_rng.integers(0, 3, 64), dtype=rt.int64)
init = np.random.default_rng(1)
net = rt.nn.Sequential(rt.nn.Linear(8, 16), rt.nn.Tanh(), rt.nn.Dropout(0.25), rt.nn.Linear(16, 3))
with rt.no_grad():
    for p in net.parameters():
        p.copy_(rt.tensor(init.standard_normal(tuple(p.shape)) * 0.5, dtype=rt.float32))
model = DDP(net)
opt = rt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
sampler = DistributedSampler(list(range(64)), shuffle=True, seed=5)
steps_per_epoch = len(sampler) // BATCH

ckpt_dir = os.path.join(run_dir, "ckpt")
os.makedirs(ckpt_dir, exist_ok=True)
start = ckpt.load_latest(ckpt_dir, model=model, optimizer=opt, sampler=sampler) or 0
print(f"rank {rank} restart {restart} resumes at step {start}", flush=True)

order = None
for step in range(start, STEPS):
    if step %% steps_per_epoch == 0:
        sampler.set_epoch(step // steps_per_epoch)
    if order is None or step %% steps_per_epoch == 0:
        order = list(sampler)                # the epoch's order: from the sampler's epoch (restored on resume)
    idx = order[(step %% steps_per_epoch) * BATCH:(step %% steps_per_epoch + 1) * BATCH]
    loss = rt.nn.functional.cross_entropy(model(X[rt.tensor(idx)]), Y[rt.tensor(idx)])
    opt.zero_grad()
    loss.backward()
    if kill_me and step == KILL_AT:
        with open(os.path.join(run_dir, "pid.tmp"), "w") as f:
            f.write(str(os.getpid()))
        os.rename(os.path.join(run_dir, "pid.tmp"), os.path.join(run_dir, "pid"))
        time.sleep(120)                      # killed here by the test, in the middle of the step
    opt.step()
    if (step + 1) %% SAVE_EVERY == 0:
        ckpt.save(ckpt_dir, model=model, optimizer=opt, sampler=sampler, step=step + 1)

final = {name: p.detach().numpy() for name, p in model.module.named_parameters()}
np.savez(os.path.join(run_dir, f"final-rank{rank}.npz"), **final)
print(f"done rank {rank} restart {restart}", flush=True)
dist.destroy_process_group()
""" % {"steps": STEPS, "save_every": SAVE_EVERY, "kill_at": KILL_AT}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def clean_env(extra=None):
    env = dict(os.environ)
    for var in ("PYTHONPATH", "RT_PYTHONPATH", "RT_LAUNCH_JOB_ID", "RT_LAUNCH_STATUS_DIR", "MASTER_ADDR",
                "MASTER_PORT", "TORCHELASTIC_RESTART_COUNT", "KILL_RANK1_AT_STEP"):
        env.pop(var, None)
    env.update(extra or {})
    return env


@pytest.fixture
def launch(tmp_path):
    """start(run_dir, *launch_args, env=...) -> Popen of `rtorch launch ... train.py run_dir` in its own session."""
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(TRAIN))
    started = []

    def start(run_dir, *args, env=None):
        run_dir.mkdir()
        proc = subprocess.Popen([str(RTORCH), "launch", "--master-port", str(free_port()), *map(str, args),
                                 str(script), str(run_dir)], cwd=run_dir, env=clean_env(env),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the launcher's session: mpirun, supervisors, scripts
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)


def finish(proc):
    try:
        out, err = proc.communicate(timeout=HANG_GUARD)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"rtorch launch did not end within {HANG_GUARD} s\nstdout:\n{out}\nstderr:\n{err}")
    return proc.returncode, out, err


def final_params(run_dir, rank):
    with np.load(run_dir / f"final-rank{rank}.npz") as f:
        return {k: f[k].copy() for k in f.files}


def assert_bit_identical(got, want, what):
    assert list(got) == list(want), what
    for name in want:
        assert got[name].dtype == want[name].dtype and got[name].shape == want[name].shape, (what, name)
        assert got[name].tobytes() == want[name].tobytes(), \
            f"{what}: {name} differs (max |diff| {np.max(np.abs(got[name] - want[name]))})"


def test_kill_rank1_midway_resumes_bit_identical(tmp_path, launch, record_property):
    # (a) uninterrupted
    proc = launch(tmp_path / "a", "--nproc-per-node", 2)
    code, out, err = finish(proc)
    assert code == 0, f"stdout:\n{out}\nstderr:\n{err}"
    assert "[rank 0]: rank 0 restart 0 resumes at step 0" in out.splitlines()
    reference = final_params(tmp_path / "a", 0)
    assert_bit_identical(final_params(tmp_path / "a", 1), reference, "uninterrupted run: rank 1 vs rank 0")

    # (b) rank 1 killed with SIGKILL in the middle of step KILL_AT, one restart allowed
    run_b = tmp_path / "b"
    proc = launch(run_b, "--nproc-per-node", 2, "--max-restarts", 1, env={"KILL_RANK1_AT_STEP": str(KILL_AT)})
    pid_file = run_b / "pid"
    deadline = time.monotonic() + HANG_GUARD
    while not pid_file.exists():
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the job ended before rank 1 reached step {KILL_AT}\nstdout:\n{out}\nstderr:\n{err}")
        assert time.monotonic() < deadline, f"rank 1 never reached step {KILL_AT}"
        time.sleep(0.02)
    victim = int(pid_file.read_text())
    killed_at = time.time()
    os.kill(victim, signal.SIGKILL)
    code, out, err = finish(proc)
    assert code == 0, f"stdout:\n{out}\nstderr:\n{err}"
    lines = out.splitlines()
    assert "rtorch launch: rank 1 failed first: signal SIGKILL (9)" in err
    assert f"(pid {victim}, local rank 1, restart 0)" in err
    assert "rtorch launch: restart 1/1" in err.splitlines()
    last_saved = KILL_AT // SAVE_EVERY * SAVE_EVERY
    for rank in (0, 1):
        assert f"[rank {rank}]: start rank {rank} restart 1" in lines            # TORCHELASTIC_RESTART_COUNT=1
        assert f"[rank {rank}]: rank {rank} restart 1 resumes at step {last_saved}" in lines
        assert f"[rank {rank}]: done rank {rank} restart 1" in lines
    assert "[rank 1]: done rank 1 restart 0" not in lines

    for rank in (0, 1):
        assert_bit_identical(final_params(run_b, rank), reference, f"resumed run, rank {rank}, vs uninterrupted")

    restarted = [float((run_b / f"start-rank{r}-restart1").read_text()) for r in (0, 1)]
    relaunch_s = min(restarted) - killed_at
    record_property("relaunch_seconds", f"{relaunch_s:.3f}")
    print(f"\nrelaunch time (SIGKILL of rank 1 -> first line of a restarted rank): {relaunch_s:.3f} s",
          file=sys.stderr)
