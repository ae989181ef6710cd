"""A client measures an attached process's clock (AgentClient::estimate_clock, Note [Rank clocks] in
rt/prof/rank_merge.h): on one machine the offset is about zero; for a process whose clocks are moved by
libfaketime (Debian's `faketime`, standing in for another host's clock) it matches the moved clock within the
bound the estimate gives."""
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import BUILD_DIR, RTORCH

sys.path.insert(0, str(BUILD_DIR / "python"))
import rustytorch as rt  # noqa: E402

HANG_GUARD = 120  # seconds; only a bound against a hung process, never a timing check

SCRIPT = """
import os, sys, time
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(time.monotonic_ns()))    # this process's steady clock (rt::now_ns reads the same clock)
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
deadline = time.time() + 60
while not os.path.exists(sys.argv[2]) and time.time() < deadline:
    time.sleep(0.02)
"""


@pytest.fixture
def attachable(tmp_path, monkeypatch):
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("RT_RUNTIME_DIR", str(runtime))
    (tmp_path / "wait.py").write_text(SCRIPT)
    started = []

    def start(job_id, prefix=()):
        env = dict(os.environ, RT_LAUNCH_JOB_ID=job_id)
        stamp, done = tmp_path / f"{job_id}.stamp", tmp_path / f"{job_id}.done"
        before = time.monotonic_ns()
        proc = subprocess.Popen([*prefix, str(RTORCH), "run", "--attach", str(tmp_path / "wait.py"), str(stamp),
                                 str(done)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        started.append((proc, done))
        deadline = time.time() + HANG_GUARD
        while not stamp.exists() or not [m for m in rt.remote.list_jobs() if m["job"] == job_id]:
            if proc.poll() is not None or time.time() > deadline:
                out, err = proc.communicate()
                pytest.fail(f"{job_id} never became attachable (exit {proc.returncode})\n{out}\n{err}")
            time.sleep(0.02)
        after = time.monotonic_ns()
        socket_path = [m for m in rt.remote.list_jobs() if m["job"] == job_id][0]["socket"]
        return rt.remote.Client(socket_path, "test_attach_clock"), int(stamp.read_text()), before, after

    yield start
    for proc, done in started:
        done.touch()
        try:
            proc.communicate(timeout=HANG_GUARD)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()


def test_same_machine_offset_is_zero_within_its_bound(attachable):
    client, _, _, _ = attachable("clock-here")
    e = client.estimate_clock(round_trips=8)
    assert e["round_trips"] == 8 and e["error_ns"] > 0, e
    # One steady clock for every process of a machine: the true offset is 0.
    assert abs(e["offset_ns"]) <= e["error_ns"] + 1000, e
    with pytest.raises(ValueError, match="at least 1"):
        client.estimate_clock(round_trips=0)


@pytest.mark.skipif(shutil.which("faketime") is None, reason="Debian's faketime is not installed (scripts/setup.sh)")
def test_a_moved_clock_is_measured_within_its_bound(attachable):
    # The process's clocks run 2 hours ahead of ours, as another host's steady clock would be anywhere.
    client, child_stamp, before, after = attachable("clock-moved", prefix=("faketime", "-f", "+7200s"))
    e = client.estimate_clock(round_trips=8)
    assert abs(e["offset_ns"]) > 3600 * 10**9, e  # really another clock
    # The child read its clock (child_stamp) at some moment of ours between `before` and `after`.
    assert child_stamp - after - e["error_ns"] <= e["offset_ns"] <= child_stamp - before + e["error_ns"], (
        e, child_stamp, before, after)
