"""A client measures an attached process's clock (AgentClient::estimate_clock, Note [Rank clocks] in
rt/prof/rank_merge.h): on one machine the offset is about zero; for a process whose clocks are moved by
libfaketime (Debian's `faketime`, standing in for another host's clock) it matches the moved clock within the
bound the estimate gives."""
import json
import shutil
import subprocess
import sys
import time

import pytest

from attached_job import start_job, wait_for
from conftest import BUILD_DIR

sys.path.insert(0, str(BUILD_DIR / "python"))
import rustytorch as rt  # noqa: E402

# Reads this process's steady clock (rt::now_ns reads the same clock) into <stop>.stamp, then waits.
STAMP_SCRIPT = """
import os, sys, time
stop = sys.argv[1]
with open(stop + ".stamp.tmp", "w") as f:
    f.write(str(time.monotonic_ns()))
os.rename(stop + ".stamp.tmp", stop + ".stamp")
deadline = time.time() + 60
while not os.path.exists(stop) and time.time() < deadline:
    time.sleep(0.02)
"""


@pytest.fixture
def attachable(tmp_path):
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    started = []

    def start(job_id, prefix=()):
        """Starts the job; returns a client of it, the job's clock reading, and ours before and after it."""
        before = time.monotonic_ns()
        process, stop = start_job(tmp_path, runtime, job_id, prefix=prefix, script_text=STAMP_SCRIPT)
        started.append((process, stop))
        stamp = stop.parent / (stop.name + ".stamp")
        wait_for(lambda: stamp.exists() or process.poll() is not None, "the job's clock reading")
        after = time.monotonic_ns()
        manifest = json.loads(next(runtime.glob(f"{job_id}.r0.*.json")).read_text())
        return rt.remote.Client(manifest["socket"], "test_attach_clock"), int(stamp.read_text()), before, after

    yield start
    for process, stop in started:
        stop.touch()
        try:
            process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


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
    # The job read its clock (child_stamp) at some moment of ours between `before` and `after`.
    assert child_stamp - after - e["error_ns"] <= e["offset_ns"] <= child_stamp - before + e["error_ns"], (
        e, child_stamp, before, after)
