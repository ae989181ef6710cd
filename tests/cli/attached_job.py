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


def start_job(tmp_path, runtime_dir, job, prefix=(), run_options=()):
    script = tmp_path / "job.py"
    script.write_text(JOB_SCRIPT)
    stop = tmp_path / "stop"
    env = clean_env(RT_RUNTIME_DIR=str(runtime_dir), RT_LAUNCH_JOB_ID=job, OMP_NUM_THREADS="1")
    process = subprocess.Popen([*prefix, str(RTORCH), "run", "--attach", *run_options, str(script), str(stop)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: list(runtime_dir.glob(f"{job}.r0.*.json")) or process.poll() is not None, "the job's manifest")
    if process.poll() is not None:
        pytest.fail(f"the job ended early: {process.communicate()}")
    return process, stop


def agent_clients(runtime_dir):
    """How many clients the job's agent has besides the `rtorch ps` that asks."""
    r = run([RTORCH, "ps", "--json"], env={"RT_RUNTIME_DIR": str(runtime_dir)})
    lines = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    return lines[0]["status"].get("clients", 0) - 1 if lines else 0


def record_until_done(attach_cmd, env, runtime_dir, job, job_process, stop, store):
    attach = subprocess.Popen(attach_cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: agent_clients(runtime_dir) >= 1 or attach.poll() is not None, "the attach over ssh")
    if attach.poll() is not None:
        job_process.kill()
        pytest.fail(f"rtorch attach ended before attaching: {attach.communicate()}")
    stop.write_text("")
    out, err = attach.communicate(timeout=120)
    job_process.communicate(timeout=60)
    assert attach.returncode == 0, f"rtorch attach failed:\n{out}\n{err}"
    with sqlite3.connect(store) as c:
        sessions = c.execute("SELECT id, complete FROM Sessions").fetchall()
        assert len(sessions) == 1, sessions
        sid = sessions[0][0]
        ops = [r[0] for r in c.execute(
            "SELECT s.value FROM Ops o JOIN StringIds s ON s.id = o.nameId WHERE o.sessionId = ?", (sid,))]
        meta = dict(c.execute("SELECT key, value FROM SessionMetadata WHERE sessionId = ?", (sid,)).fetchall())
    assert ops.count("matmul") == 25, (len(ops), out, err)
    assert meta.get("job_id") == job, meta
    return out


