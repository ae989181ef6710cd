"""Helpers of the remote-attach CLI tests: an attachable job that works until told to finish, and an attach
that records it into a store."""
import json
import os
import socket
import sqlite3
import subprocess
import time

import pytest

from conftest import RTORCH, run

# The job: a little work every step until told to finish, then a known number of matmuls, then exit.
JOB_SCRIPT = """
import os, sys, time
import rustytorch as rt
stop = sys.argv[1]
w = rt.randn(16, 16)
while not os.path.exists(stop):
    rt.add(w, w)
    time.sleep(0.02)
for _ in range(25):
    rt.matmul(w, w)
"""


def wait_for(predicate, what, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def clean_env(**extra):
    env = dict(os.environ, **extra)
    for var in ("PYTHONPATH", "RT_PYTHONPATH", "RT_ATTACH"):
        env.pop(var, None)
    return env


def start_job(tmp_path, runtime_dir, job, prefix=(), run_options=(), script_text=JOB_SCRIPT):
    """`rtorch run --attach` of script_text (argv[1]: the file whose creation tells it to finish), started
    with `prefix` (e.g. a wrapper command); returns once the job's manifest is there."""
    script = tmp_path / "job.py"
    script.write_text(script_text)
    stop = tmp_path / "stop"
    env = clean_env(RT_RUNTIME_DIR=str(runtime_dir), RT_LAUNCH_JOB_ID=job, OMP_NUM_THREADS="1")
    process = subprocess.Popen([*prefix, str(RTORCH), "run", "--attach", *run_options, str(script), str(stop)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: list(runtime_dir.glob(f"{job}.r0.*.json")) or process.poll() is not None, "the job's manifest")
    if process.poll() is not None:
        pytest.fail(f"the job ended early: {process.communicate()}")
    return process, stop


def recording_ranks(runtime_dir):
    """How many of the job's ranks record for a subscriber (`rtorch ps --json` asks each agent)."""
    r = run([RTORCH, "ps", "--json"], env={"RT_RUNTIME_DIR": str(runtime_dir)})
    lines = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    return sum(1 for line in lines if line["status"].get("recording"))


def record_until_done(attach_cmd, env, runtime_dir, job, job_process, stop, store, ranks=1):
    """Runs `attach_cmd` (an `rtorch attach --record STORE`), lets the job finish once every rank is subscribed,
    and checks that the store holds one session per rank with the job's 25 matmuls."""
    attach = subprocess.Popen(attach_cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: recording_ranks(runtime_dir) == ranks or attach.poll() is not None, "the attach")
    if attach.poll() is not None:
        job_process.kill()
        pytest.fail(f"rtorch attach ended before attaching: {attach.communicate()}")
    stop.write_text("")
    out, err = attach.communicate(timeout=120)
    job_process.communicate(timeout=120)
    assert attach.returncode == 0, f"rtorch attach failed:\n{out}\n{err}"
    with sqlite3.connect(store) as c:
        sessions = [row[0] for row in c.execute("SELECT id FROM Sessions ORDER BY id")]
        assert len(sessions) == ranks, (sessions, out, err)
        for sid in sessions:
            ops = [r[0] for r in c.execute(
                "SELECT s.value FROM Ops o JOIN StringIds s ON s.id = o.nameId WHERE o.sessionId = ?", (sid,))]
            meta = dict(c.execute("SELECT key, value FROM SessionMetadata WHERE sessionId = ?", (sid,)).fetchall())
            assert ops.count("matmul") == 25, (sid, len(ops), out, err)
            assert meta.get("job_id") == job, meta
    return out
