"""`rtorch launch --store`: every rank of a real job records its whole run into one SQLite store, as its own
session named after the rank and tagged with the job (docs/launch.md). The store is read back with plain SQL
(docs/store-schema.md) and with `rtorch trace list`."""
import os
import signal
import socket
import sqlite3
import subprocess
import textwrap

import pytest

from conftest import RTORCH

HANG_GUARD = 180  # seconds; only a bound against a hung launcher, never a timing check

SCRIPT = """
import rustytorch as rt
import rustytorch.distributed as dist
from rustytorch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
for i in range(3):
    t = rt.ones(4) * (rank + 1)
    dist.all_reduce(t)
    assert t.tolist() == [world * (world + 1) / 2] * 4, t.tolist()
rt.manual_seed(0)
model = DDP(rt.nn.Linear(4, 2))
opt = rt.optim.SGD(model.parameters(), lr=0.1)
loss = model(rt.ones(3, 4) * (rank + 1)).sum()
opt.zero_grad()
loss.backward()
opt.step()
dist.destroy_process_group()
print(f"rank {rank} done", flush=True)
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(tmp_path, *args, env=None):
    full = dict(os.environ)
    for var in ("PYTHONPATH", "RT_PYTHONPATH", "RT_LAUNCH_JOB_ID", "RT_LAUNCH_STATUS_DIR", "MASTER_ADDR",
                "MASTER_PORT", "TORCHELASTIC_RESTART_COUNT"):
        full.pop(var, None)
    full.update(env or {})
    proc = subprocess.Popen([str(RTORCH), "launch", "--master-port", str(free_port()), *map(str, args)], cwd=tmp_path,
                            env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=HANG_GUARD)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"rtorch launch did not end within {HANG_GUARD} s\nstdout:\n{out}\nstderr:\n{err}")
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def sessions(db):
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT id, name, complete FROM Sessions ORDER BY id").fetchall()
        out = []
        for sid, name, complete in rows:
            meta = dict(c.execute("SELECT key, value FROM SessionMetadata WHERE sessionId = ?", (sid,)).fetchall())
            ops = [r[0] for r in c.execute(
                "SELECT s.value FROM Ops o JOIN StringIds s ON s.id = o.nameId WHERE o.sessionId = ?", (sid,))]
            out.append({"id": sid, "name": name, "complete": complete, "meta": meta, "ops": ops})
        return out


@pytest.mark.parametrize("nproc", [2, 4])
def test_each_rank_records_its_run_into_one_store(tmp_path, nproc):
    (tmp_path / "train.py").write_text(textwrap.dedent(SCRIPT))
    r = launch(tmp_path, "--nproc-per-node", nproc, "--store", "job.sqlite", "train.py",
               env={"RT_LAUNCH_JOB_ID": f"jobtest{nproc}"})
    assert r.returncode == 0, f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    for rank in range(nproc):
        assert f"[rank {rank}]: rank {rank} done" in r.stdout

    found = sessions(tmp_path / "job.sqlite")
    assert len(found) == nproc, found
    assert sorted(s["meta"]["rank"] for s in found) == [str(i) for i in range(nproc)]
    for s in found:
        rank = s["meta"]["rank"]
        assert s["complete"] == 1
        assert s["name"] == f"rank {rank} of {nproc} \u00b7 train.py"
        assert s["meta"]["job_id"] == f"jobtest{nproc}"
        assert s["meta"]["world_size"] == str(nproc)
        assert s["meta"]["local_rank"] == rank
        assert s["meta"]["restart_count"] == "0"
        assert s["meta"]["host"] == socket.gethostname()
        assert s["meta"]["profile_memory"] == "true"
        # Three explicit all_reduces and DDP's gradient all_reduce, each through the Gloo backend.
        assert s["ops"].count("all_reduce") >= 4, sorted(set(s["ops"]))
        assert s["ops"].count("gloo:all_reduce") >= 4, sorted(set(s["ops"]))

    listed = subprocess.run([str(RTORCH), "trace", "list", str(tmp_path / "job.sqlite")], capture_output=True,
                            text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    for rank in range(nproc):
        assert f"rank {rank} of {nproc} \u00b7 train.py" in listed.stdout

    # The profiler's collective records: the three 16-byte all_reduces and DDP's bucket of Linear(4, 2)'s 10
    # float32 gradients, then the broadcast of rank 0's parameters, each in the default group.
    with sqlite3.connect(tmp_path / "job.sqlite") as c:
        for sid in (s["id"] for s in found):
            rows = c.execute("SELECT n.value, g.value, k.seq, k.bytes, k.enqueue <= k.start AND k.start <= k.end "
                             "FROM Collectives k JOIN StringIds n ON n.id = k.nameId "
                             "JOIN StringIds g ON g.id = k.groupNameId WHERE k.sessionId = ? ORDER BY k.start",
                             (sid,)).fetchall()
            reduces = [r for r in rows if r[0] == "all_reduce"]
            assert [r[3] for r in reduces[:3]] == [16, 16, 16], rows
            assert reduces[-1][3] == 40, rows
            assert all(r[1] == "default" and r[4] == 1 for r in rows), rows
    summary = subprocess.run([str(RTORCH), "trace", "summary", str(tmp_path / "job.sqlite"), "--session",
                              str(found[0]["id"])], capture_output=True, text=True, timeout=60)
    assert summary.returncode == 0, summary.stderr
    section = summary.stdout.split("Collectives (backend start to end)")[1]
    row = next(line.split() for line in section.splitlines() if line.startswith("default") and "all_reduce" in line)
    assert row[2] == str(len(reduces)), section


def test_no_profile_memory_reaches_every_rank(tmp_path):
    (tmp_path / "train.py").write_text(textwrap.dedent(SCRIPT))
    r = launch(tmp_path, "--nproc-per-node", 2, "--store", tmp_path / "job.sqlite", "--no-profile-memory", "train.py")
    assert r.returncode == 0, f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    found = sessions(tmp_path / "job.sqlite")
    assert [s["meta"]["profile_memory"] for s in found] == ["false", "false"]
    assert len({s["meta"]["job_id"] for s in found}) == 1


def test_a_store_that_cannot_be_opened_stops_the_launch_before_any_rank_starts(tmp_path):
    (tmp_path / "train.py").write_text("print('ran', flush=True)\n")
    (tmp_path / "not-a-store.sqlite").write_text("this is not an SQLite database, just text that fills a header\n" * 4)
    r = launch(tmp_path, "--nproc-per-node", 2, "--store", "not-a-store.sqlite", "train.py")
    assert r.returncode == 1
    assert "rtorch launch: cannot use --store" in r.stderr
    assert "not a RustyTorch store" in r.stderr
    assert "ran" not in r.stdout
