"""The collective ledger with real ranks: a desync and a hang reported by rank 0 naming the ranks, the
collectives and their call sites; RT_DISTRIBUTED_DEBUG=DETAIL refusing a mismatched collective; ledger
dumps that load as Chrome traces."""
import json
import os
import re

import pytest

import rustytorch as rt
import rustytorch.distributed as dist
from dist_ranks import run_ranks

pytestmark = pytest.mark.skipif(not dist.is_gloo_available(), reason="the gloo backend is not built")


def script(tmp_path, name, code):
    """The ranks run a file, so call sites read `name:line`."""
    path = tmp_path / name
    path.write_text(code)
    return f"exec(compile(open({str(path)!r}).read(), {str(path)!r}, 'exec'))"


def line_of(code, needle):
    return next(i for i, line in enumerate(code.splitlines(), 1) if needle in line)


DESYNC = """\
import os, time
import rustytorch as rt
import rustytorch.distributed as dist
dist.init_process_group("gloo")
if dist.get_rank() == 0:
    dist.all_reduce(rt.ones(20, 10), async_op=True)
else:
    dist.broadcast(rt.zeros(34112), src=0, async_op=True)
time.sleep(4)
os._exit(0)
"""


def test_a_desync_is_reported_with_both_calls_and_every_rank_dumps_its_ledger(tmp_path):
    results = run_ranks(script(tmp_path, "train.py", DESYNC), 2, expect_failure=True, timeout=60,
                        env={"RT_LEDGER_DIR": str(tmp_path)})
    err = results[0]["stderr"]
    reduce_line, bcast_line = line_of(DESYNC, "all_reduce"), line_of(DESYNC, "broadcast")
    assert ("collective desync in group 'default' at sequence 1: rank 1 called broadcast([34112] float32, root 0) "
            f"at train.py:{bcast_line}, sequence 1 in group 'default' where rank 0 called all_reduce([20, 10] "
            f"float32) at train.py:{reduce_line}, sequence 1 in group 'default'") in err, err
    assert err.count("collective desync") == 1  # reported once
    for rank in (0, 1):
        doc = json.loads((tmp_path / f"rank{rank}.ledger.json").read_text())
        records = doc["rt_ledger"]["records"]
        assert doc["rt_ledger"]["rank"] == rank
        assert [r["op"] for r in records] == ["all_reduce" if rank == 0 else "broadcast"]
        assert records[0]["site"] == f"train.py:{reduce_line if rank == 0 else bcast_line}"
        complete = [e for e in doc["traceEvents"] if e["ph"] == "X"]
        assert len(complete) == 1 and complete[0]["pid"] == rank and complete[0]["args"]["seq"] == 1


HANG = """\
import os, time
import rustytorch as rt
import rustytorch.distributed as dist
dist.init_process_group("gloo")
dist.barrier()
if dist.get_rank() == 1:
    time.sleep(5)               # everyone waits for rank 1
dist.all_reduce(rt.ones(8))
dist.destroy_process_group()
"""


def test_a_hang_names_the_rank_everyone_waits_for(tmp_path):
    results = run_ranks(script(tmp_path, "hang.py", HANG), 3, expect_failure=True, timeout=60,
                        env={"RT_DISTRIBUTED_HANG_SECONDS": "1"})
    assert all(r["returncode"] == 0 for r in results), results
    err = results[0]["stderr"]
    line = line_of(HANG, "all_reduce")
    # Ranks 0 and 2 wait; on a loaded machine one of them may not have published yet when the other crosses
    # the threshold, so either may be listed alone.
    assert re.search(r"suspected hang in group 'default': (ranks 0, 2 have|rank 0 has|rank 2 has) waited", err), err
    assert f"in all_reduce([8] float32) at hang.py:{line}, sequence 2 in group 'default'" in err
    assert (f"rank 1 has not called it: its last collective is barrier() at hang.py:{line_of(HANG, 'barrier')}, "
            "sequence 1 in group 'default' (finished)") in err
    # then rank 1's Python stack, showing where it is
    stack = err[err.index("Python stack of rank 1, which the others wait for:"):]
    assert f'hang.py", line {line_of(HANG, "time.sleep")}' in stack, err


MISMATCH = """\
import json, os, time
import rustytorch as rt
import rustytorch.distributed as dist
dist.init_process_group("gloo")
n = 4 if dist.get_rank() == 0 else 5
try:
    dist.all_reduce(rt.ones(n))
    print("RESULT " + json.dumps(None))
except dist.DistBackendError as e:
    print("RESULT " + json.dumps(str(e)), flush=True)
time.sleep(1)   # rank 0 hosts the store: it stays while rank 1 reads its fingerprint
os._exit(0)
"""


def test_detail_mode_refuses_a_mismatched_collective_before_it_runs(tmp_path):
    results = run_ranks(script(tmp_path, "detail.py", MISMATCH), 2, env={"RT_DISTRIBUTED_DEBUG": "DETAIL"})
    line = line_of(MISMATCH, "all_reduce")
    assert results[0] == (f"RT_DISTRIBUTED_DEBUG=DETAIL: collective mismatch in group 'default' at sequence 1: rank 1 "
                          f"called all_reduce([5] float32) at detail.py:{line}, sequence 1 in group 'default' where "
                          f"rank 0 called all_reduce([4] float32) at detail.py:{line}, sequence 1 in group 'default'")
    assert "rank 0 called all_reduce([4] float32)" in results[1]


def test_torch_distributed_debug_is_honoured_and_agreeing_ranks_run(tmp_path):
    code = """
import json
import rustytorch as rt
import rustytorch.distributed as dist
dist.init_process_group("gloo")
t = rt.ones(3)
for _ in range(5):
    dist.all_reduce(t)
print("RESULT " + json.dumps(t.tolist()))
"""
    assert run_ranks(code, 2, env={"TORCH_DISTRIBUTED_DEBUG": "DETAIL"}) == [[32.0] * 3] * 2


def test_the_ledger_of_one_process_names_each_call(tmp_path):
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/one", rank=0, world_size=1)
    try:
        t = rt.ones(2, 3)
        dist.all_reduce(t)  # the line below is recorded as the call site
        w = dist.broadcast(t, src=0, async_op=True)
        w.wait()
        out = tmp_path / "ledger.json"
        dist.write_ledger_trace(out)
        doc = json.loads(out.read_text())
    finally:
        dist.destroy_process_group()
    mine = [r for r in doc["rt_ledger"]["records"] if r["group"] == "default"][-2:]
    assert [r["op"] for r in mine] == ["all_reduce", "broadcast"]
    assert [r["sizes"] for r in mine] == [[2, 3], [2, 3]]
    assert mine[0]["site"].startswith("test_dist_ledger.py:")
    assert all(r["end_ns"] >= r["enqueue_ns"] > 0 for r in mine)
    assert mine[1]["peer"] == 0


DEAD_PEER = """\
import json, os, signal, time
import rustytorch as rt
import rustytorch.distributed as dist
dist.init_process_group("gloo")
dist.barrier()
time.sleep(1.0)                  # every rank has published its ledger summary
if dist.get_rank() == int(os.environ["VICTIM"]):
    os.kill(os.getpid(), signal.SIGKILL)
try:
    dist.all_reduce(rt.ones(1000))
    print("RESULT " + json.dumps(None))
except dist.DistBackendError as e:
    print("RESULT " + json.dumps(str(e)), flush=True)
time.sleep(3)   # the survivors stay until each has named the dead rank (rank 0 hosts the store)
os._exit(0)
"""


@pytest.mark.parametrize("victim", [2, 0])
def test_a_rank_blocked_on_a_dead_peer_gets_an_error_naming_it(tmp_path, victim):
    results = run_ranks(script(tmp_path, "dead.py", DEAD_PEER), 3, expect_failure=True, timeout=60,
                        env={"VICTIM": str(victim)})
    assert results[victim]["returncode"] == -9
    for r in {0, 1, 2} - {victim}:
        msg = results[r]["result"]
        assert msg is not None, results[r]["stderr"]
        assert "all_reduce #2 in group 'default'" in msg and "failed in gloo" in msg, msg
        if victim == 0:  # rank 0 hosted the store: its silence is the store's
            assert "the job's store (hosted by rank 0) no longer answers: rank 0 has died" in msg, msg
        else:
            assert f"rank {victim} stopped publishing its ledger summary" in msg and "most likely died" in msg, msg
