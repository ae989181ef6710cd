"""`rtorch launch --attach`: every rank of a real 2-rank DDP job serves its session on a private Unix socket
(docs/remote-attach.md). `rtorch attach JOB --record` saves what the ranks recorded; a headless client pauses
both ranks at their next backward, steps and inspects one, and continues, after which the job ends with the same
parameters as an unpaused run; a rank killed while attached shows as ended, and attach does not hang."""
import collections
import json
import math
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import BUILD_DIR, RTORCH

sys.path.insert(0, str(BUILD_DIR / "python"))
import rustytorch as rt  # noqa: E402  (the headless client: rt.remote.Client)

HANG_GUARD = 180  # seconds; only a bound against a hung job, never a timing check

SCRIPT = """
import contextlib, json, os, sys, time
from collections import Counter
import rustytorch as rt
import rustytorch.distributed as dist
from rustytorch.nn.parallel import DistributedDataParallel as DDP

out, steps, profile = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "profile"
dist.init_process_group("gloo")
rank = dist.get_rank()
rt.manual_seed(0)
model = DDP(rt.nn.Sequential(rt.nn.Linear(8, 16), rt.nn.Tanh(), rt.nn.Linear(16, 2)))
opt = rt.optim.SGD(model.parameters(), lr=0.1)
deadline = time.time() + 90
while not os.path.exists(os.path.join(out, "go")) and time.time() < deadline:  # the test attaches first
    time.sleep(0.02)
ctx = rt.profiler.profile() if profile else contextlib.nullcontext()
with ctx as prof:
    for i in range(steps):
        rt.manual_seed(100 + i)
        x = rt.randn(16, 8) * (rank + 1)
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        time.sleep(0.02)
counts = Counter(e.name for e in prof.events()) if profile else {}
params = [p.detach().numpy().tolist() for p in model.parameters()]
with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
    json.dump({"counts": counts, "params": params}, f)
dist.destroy_process_group()
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def job(tmp_path, monkeypatch):
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("RT_RUNTIME_DIR", str(runtime))
    (tmp_path / "train.py").write_text(SCRIPT)
    started = []

    def start(job_id, steps, profile, attach=True):
        env = dict(os.environ)
        for var in ("PYTHONPATH", "RT_PYTHONPATH", "RT_LAUNCH_STATUS_DIR", "MASTER_ADDR", "MASTER_PORT",
                    "RT_ATTACH"):
            env.pop(var, None)
        env["RT_LAUNCH_JOB_ID"] = job_id
        out = tmp_path / job_id
        out.mkdir()
        args = [str(RTORCH), "launch", "--nproc-per-node", "2", "--master-port", str(free_port())]
        if attach:
            args.append("--attach")
        args += [str(tmp_path / "train.py"), str(out), str(steps), "profile" if profile else "plain"]
        proc = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        started.append(proc)
        return proc, out

    yield start
    for proc in started:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()


def wait_ranks(job_id, n=2):
    deadline = time.time() + HANG_GUARD
    while time.time() < deadline:
        ranks = [m for m in rt.remote.list_jobs() if m["job"] == job_id]
        if len(ranks) == n:
            return sorted(ranks, key=lambda m: m["rank"])
        time.sleep(0.05)
    pytest.fail(f"the ranks of {job_id} never became attachable: {rt.remote.list_jobs()}")


def finish(proc, what):
    try:
        out, err = proc.communicate(timeout=HANG_GUARD)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"{what} did not end within {HANG_GUARD} s\nstdout:\n{out}\nstderr:\n{err}")
    return proc.returncode, out, err


def wait_notice(client, text, seen):
    deadline = time.time() + 60
    while time.time() < deadline:
        notices = client.notices
        for n in notices[seen[0]:]:
            seen[0] += 1
            if text in n:
                return json.loads(n)
        client.poll(0.05)
    pytest.fail(f"no notice with {text!r}; got {client.notices}")


def test_attach_record_saves_what_each_rank_recorded(job, tmp_path):
    proc, out = job("attach-record", steps=8, profile=True)
    wait_ranks("attach-record")
    listed = subprocess.run([str(RTORCH), "ps"], capture_output=True, text=True, timeout=60)
    assert "attach-record" in listed.stdout and "0/2" in listed.stdout and "1/2" in listed.stdout, listed.stdout
    store = tmp_path / "attached.sqlite"
    attach = subprocess.Popen([str(RTORCH), "attach", "attach-record", "--record", str(store), "--quiet"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    # Both ranks have a subscriber before training starts (their sessions are served whole anyway).
    deadline = time.time() + 60
    while time.time() < deadline:
        status = [json.loads(rt.remote.Client(m["socket"]).request("status")) for m in wait_ranks("attach-record")]
        if all(s.get("clients", 0) >= 2 for s in status):
            break
        time.sleep(0.05)
    (out / "go").touch()
    code, _, err = finish(proc, "the job")
    assert code == 0, err
    acode, aout, aerr = finish(attach, "rtorch attach")
    assert acode == 0, aout + aerr
    assert aout.count("ended: the process exited") == 2, aout
    with sqlite3.connect(store) as c:
        sessions = c.execute("SELECT id, complete FROM Sessions ORDER BY id").fetchall()
        programs = {}
        for sid, complete in sessions:
            meta = dict(c.execute("SELECT key, value FROM SessionMetadata WHERE sessionId = ?", (sid,)).fetchall())
            assert meta["job_id"] == "attach-record" and meta["rank"] in ("0", "1"), meta
            # The rank's clock as rtorch attach measured it: one machine, so about 0 (Note [Rank clocks]).
            assert abs(int(meta["rank_clock_offset_ns"])) <= int(meta["rank_clock_error_ns"]) + 1000, meta
            if meta.get("attached") == "agent":
                continue  # what the agent recorded around the program's own profile
            assert complete == 1
            programs[int(meta["rank"])] = sid
        assert sorted(programs) == [0, 1], sessions
        for rank, sid in programs.items():
            names = [r[0] for r in c.execute(
                "SELECT s.value FROM Ops o JOIN StringIds s ON s.id = o.nameId WHERE o.sessionId = ?", (sid,))]
            local = json.loads((out / f"rank{rank}.json").read_text())["counts"]
            assert collections.Counter(names) == collections.Counter(local), f"rank {rank} differs"
            assert local.get("linear", 0) == 16  # 8 steps, 2 layers: a real record, not an empty one


def test_pause_all_ranks_step_inspect_continue_keeps_the_result(job):
    reference, ref_out = job("unpaused", steps=4, profile=False, attach=False)
    (ref_out / "go").touch()
    code, _, err = finish(reference, "the unpaused job")
    assert code == 0, err

    proc, out = job("paused", steps=4, profile=False)
    ranks = wait_ranks("paused")
    clients = [rt.remote.Client(m["socket"], "test_launch_attach") for m in ranks]
    for c in clients:
        c.request("pause")
    (out / "go").touch()
    seen = [[0], [0]]
    first = [wait_notice(c, '"paused"', s) for c, s in zip(clients, seen)]
    assert all(p["index"] == 0 and p["reason"] == "start" for p in first), first
    state = json.loads(clients[0].request("paused_state"))
    assert state["node"]["name"].endswith("Backward0") and state["grad_outputs"][0]["defined"], state
    clients[0].request("step")
    stepped = wait_notice(clients[0], '"paused"', seen[0])
    assert stepped["index"] == 1 and stepped["reason"] == "step", stepped
    # The gradient's values, read in pieces of 50, agree with the statistics the pause reports.
    stats = json.loads(clients[0].request("paused_state"))["grad_outputs"][0]
    values, offset = [], 0
    while True:
        piece = json.loads(clients[0].request("read_tensor", {"side": "grad_outputs", "index": 0, "offset": offset,
                                                              "limit": 50}))
        values += piece["values"]
        offset += len(piece["values"])
        if not piece["truncated"]:
            break
    assert piece["shape"] == stats["shape"] and len(values) == stats["numel"], (piece, stats)
    assert math.isclose(math.sqrt(sum(v * v for v in values)), stats["norm"], rel_tol=1e-5), stats
    assert math.isclose(min(values), stats["min"], rel_tol=1e-6) and math.isclose(max(values), stats["max"], rel_tol=1e-6)
    assert json.loads(clients[1].request("paused_state"))["index"] == 0  # rank 1 still held at its start
    for c in clients:
        c.request("continue")
    code, _, err = finish(proc, "the paused job")
    assert code == 0, err
    for rank in (0, 1):
        paused = json.loads((out / f"rank{rank}.json").read_text())["params"]
        unpaused = json.loads((ref_out / f"rank{rank}.json").read_text())["params"]
        assert paused == unpaused, f"rank {rank}: pausing changed the parameters"


def test_a_rank_killed_while_attached_shows_as_ended(job):
    proc, out = job("killed", steps=100000, profile=False)
    ranks = wait_ranks("killed")
    (out / "go").touch()
    attach = subprocess.Popen([str(RTORCH), "attach", "killed", "--quiet"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, start_new_session=True)
    # Kill rank 1 only once `rtorch attach` has subscribed to it: a subscriber makes the agent follow a session
    # (status "session" != 0); this probe does not subscribe.
    probe = rt.remote.Client(ranks[1]["socket"], "probe")
    deadline = time.time() + HANG_GUARD
    while json.loads(probe.request("status"))["session"] == 0:
        assert time.time() < deadline and attach.poll() is None, "rtorch attach never subscribed to rank 1"
        time.sleep(0.05)
    del probe
    os.kill(ranks[1]["pid"], signal.SIGKILL)
    acode, aout, aerr = finish(attach, "rtorch attach")
    finish(proc, "the job")
    line = [l for l in aout.splitlines() if l.startswith("rank 1 ")]
    assert line and "(incomplete)" in line[0] and "ended:" in line[0], aout + aerr
    assert f"pid {ranks[1]['pid']}" in line[0]
