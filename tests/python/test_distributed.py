"""rustytorch.distributed on the gloo backend with real processes: collectives against a local reference,
init methods, object collectives, monitored_barrier, and the errors a user meets first."""
import pytest

import rustytorch as rt
import rustytorch.distributed as dist
from dist_ranks import run_ranks

pytestmark = pytest.mark.skipif(not dist.is_gloo_available(), reason="the gloo backend is not built")

COLLECTIVES = """
import json, os
import rustytorch as rt
import rustytorch.distributed as dist
dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()
bad = []
def check(ok, what):
    if not ok: bad.append(what)
for dtype in (rt.float32, rt.float64, rt.int32, rt.int64, rt.float16, rt.bfloat16, rt.uint8):
    t = rt.full((3, 2), r + 1, dtype=dtype)
    dist.all_reduce(t)
    check(t.to(rt.float64).tolist() == [[n * (n + 1) / 2] * 2] * 3, f"all_reduce sum {dtype}")
    t = rt.full((4,), r + 1, dtype=dtype)
    dist.all_reduce(t, op=dist.ReduceOp.PRODUCT)
    import math
    check(t.to(rt.float64).tolist() == [float(math.factorial(n))] * 4, f"product {dtype}")
    for op, want in ((dist.ReduceOp.MIN, 1), (dist.ReduceOp.MAX, n)):
        t = rt.full((5,), r + 1, dtype=dtype)
        dist.all_reduce(t, op=op)
        check(t.to(rt.float64).tolist() == [float(want)] * 5, f"{op} {dtype}")
t = rt.full((2,), float(r), dtype=rt.float32)
dist.all_reduce(t, op=dist.ReduceOp.AVG)
check(t.tolist() == [(n - 1) / 2] * 2, "avg")
b = rt.full((2, 3), float(r), dtype=rt.float64)
dist.broadcast(b, src=n - 1)
check(b.tolist() == [[float(n - 1)] * 3] * 2, "broadcast")
t = rt.full((3,), float(r + 1))
dist.reduce(t, dst=0)
if r == 0: check(t.tolist() == [n * (n + 1) / 2] * 3, "reduce on dst")
outs = [rt.zeros(2, dtype=rt.int64) for _ in range(n)]
dist.all_gather(outs, rt.tensor([r, 10 * r], dtype=rt.int64))
check([o.tolist() for o in outs] == [[i, 10 * i] for i in range(n)], "all_gather")
big = rt.zeros(2 * n)
dist.all_gather_into_tensor(big, rt.full((2,), float(r)))
check(big.tolist() == [float(i // 2) for i in range(2 * n)], "all_gather_into_tensor")
out = rt.zeros(2)
dist.reduce_scatter_tensor(out, rt.arange(2 * n, dtype=rt.float32))
check(out.tolist() == [float(n * (2 * r)), float(n * (2 * r + 1))], "reduce_scatter_tensor")
g = [rt.zeros(1) for _ in range(n)] if r == 0 else None
dist.gather(rt.full((1,), float(r * r)), g, dst=0)
if r == 0: check([x.item() for x in g] == [float(i * i) for i in range(n)], "gather")
s = rt.zeros(2)
dist.scatter(s, [rt.full((2,), float(i + 100)) for i in range(n)] if r == 0 else None, src=0)
check(s.tolist() == [r + 100.0] * 2, "scatter")
inp = rt.arange(n, dtype=rt.float32) + 100 * r
out = rt.zeros(n)
dist.all_to_all_single(out, inp)
check(out.tolist() == [100.0 * i + r for i in range(n)], "all_to_all_single")
empty = rt.zeros(0)
dist.all_reduce(empty)
dist.broadcast(empty, src=0)
works = [dist.all_reduce(rt.full((100,), float(i)), async_op=True) for i in range(5)]
for i, w in enumerate(works):
    check(w.wait() is True and w.is_completed() and w.is_success(), f"async work {i}")
    check(w.result()[0].tolist() == [float(i * n)] * 100, f"async result {i}")
if r == 0:
    for peer in range(1, n):
        dist.send(rt.full((3,), float(peer)), dst=peer, tag=peer)
else:
    x = rt.zeros(3)
    check(dist.recv(x, src=0, tag=r) == 0, "recv returns the sender")
    check(x.tolist() == [float(r)] * 3, "send/recv")
dist.barrier()
print("RESULT " + json.dumps({"rank": r, "bad": bad, "backend": dist.get_backend()}))
dist.destroy_process_group()
"""


@pytest.mark.parametrize("world_size", [2, 3, 4])
def test_every_collective_matches_the_reference(world_size):
    results = run_ranks(COLLECTIVES, world_size)
    for r, res in enumerate(results):
        assert res["rank"] == r
        assert res["bad"] == [], f"rank {r}: {res['bad']}"
        assert res["backend"] == "gloo"


def test_groups_of_a_subset_and_non_members():
    code = """
    import json
    import rustytorch as rt
    import rustytorch.distributed as dist
    dist.init_process_group("gloo")
    r = dist.get_rank()
    odd = dist.new_group([3, 1])
    even = dist.new_group([0, 2])
    mine = odd if r % 2 else even
    other = even if r % 2 else odd
    t = rt.full((2,), float(r))
    dist.all_reduce(t, group=mine)
    b = rt.full((1,), float(r))
    dist.broadcast(b, src=3 if r % 2 else 2, group=mine)   # a global rank
    print("RESULT " + json.dumps({"sum": t.tolist(), "bcast": b.item(), "rank_in": dist.get_rank(mine),
          "size": dist.get_world_size(mine), "other_rank": dist.get_rank(other),
          "other_is_nonmember": other is dist.GroupMember.NON_GROUP_MEMBER,
          "noop": dist.all_reduce(rt.zeros(1), group=other) is None}))
    """
    results = run_ranks(code, 4)
    for r, res in enumerate(results):
        want = 4.0 if r % 2 else 2.0
        assert res["sum"] == [want, want]
        assert res["bcast"] == (3.0 if r % 2 else 2.0)
        assert res["rank_in"] == r // 2 and res["size"] == 2
        assert res["other_rank"] == -1 and res["other_is_nonmember"] and res["noop"]


@pytest.mark.parametrize("method", ["tcp", "file"])
def test_init_methods(method, tmp_path):
    init = "f'tcp://127.0.0.1:{os.environ[\"MASTER_PORT\"]}'" if method == "tcp" else repr(f"file://{tmp_path}/rdzv")
    code = f"""
    import json, os
    import rustytorch as rt
    import rustytorch.distributed as dist
    rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        v = os.environ.pop(k)
        if k == "MASTER_PORT": port = v
    os.environ["MASTER_PORT"] = port
    dist.init_process_group("gloo", init_method={init}, rank=rank, world_size=size)
    t = rt.ones(3)
    dist.all_reduce(t)
    print("RESULT " + json.dumps(t.tolist()))
    """
    assert run_ranks(code, 2) == [[2.0] * 3, [2.0] * 3]


def test_object_collectives():
    code = """
    import json
    import rustytorch.distributed as dist
    dist.init_process_group("gloo")
    r, n = dist.get_rank(), dist.get_world_size()
    gathered = [None] * n
    dist.all_gather_object(gathered, {"rank": r, "text": "x" * (r * 100)})
    objs = [{"lr": 0.1}, [1, 2, 3]] if r == 0 else [None, None]
    dist.broadcast_object_list(objs, src=0)
    out = [None]
    dist.scatter_object_list(out, [f"for {i}" for i in range(n)] if r == 1 else None, src=1)
    at0 = [None] * n if r == 0 else None
    dist.gather_object(r * 7, at0, dst=0)
    print("RESULT " + json.dumps({"g": gathered, "b": objs, "s": out[0], "at0": at0}))
    """
    results = run_ranks(code, 3)
    for r, res in enumerate(results):
        assert res["g"] == [{"rank": i, "text": "x" * (i * 100)} for i in range(3)]
        assert res["b"] == [{"lr": 0.1}, [1, 2, 3]]
        assert res["s"] == f"for {r}"
    assert results[0]["at0"] == [0, 7, 14]


def test_monitored_barrier_names_the_rank_that_did_not_arrive():
    code = """
    import json, time, os
    import datetime
    import rustytorch.distributed as dist
    dist.init_process_group("gloo")
    r = dist.get_rank()
    if r == 2:
        time.sleep(4)          # never reaches the barrier in time
        os._exit(0)
    try:
        dist.monitored_barrier(timeout=datetime.timedelta(seconds=1), wait_all_ranks=True)
        print("RESULT " + json.dumps({"error": None}))
    except dist.DistError as e:
        print("RESULT " + json.dumps({"error": str(e), "type": type(e).__name__}))
    os._exit(0)
    """
    results = run_ranks(code, 3, expect_failure=True, timeout=60)
    err = results[0]["result"]
    assert err["type"] == "DistBackendError"
    assert "rank 2 did not arrive within 1000 ms" in err["error"]
    assert "rank 1" not in err["error"].split("did not arrive")[0]


def test_errors_before_init_and_for_bad_arguments(monkeypatch, tmp_path):
    with pytest.raises(dist.DistError, match="not initialized: call init_process_group"):
        dist.get_rank()
    assert isinstance(dist.DistError("x"), RuntimeError)
    for var in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ValueError, match="needs RANK in the environment"):
        dist.init_process_group("gloo")
    with pytest.raises(ValueError, match="unknown backend 'glooo'"):
        dist.init_process_group("glooo", init_method=f"file://{tmp_path}/x", rank=0, world_size=1)
    with pytest.raises(ValueError, match="nccl does not run cpu tensors"):
        dist.init_process_group("cpu:nccl", init_method=f"file://{tmp_path}/x", rank=0, world_size=1)


def test_world_size_one_runs_every_collective_in_process(tmp_path):
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/one", rank=0, world_size=1)
    try:
        t = rt.arange(4, dtype=rt.float32)
        dist.all_reduce(t)
        assert t.tolist() == [0, 1, 2, 3]
        with pytest.raises(RuntimeError, match="not contiguous"):
            dist.all_reduce(rt.zeros(3, 3).t())
        with pytest.raises(RuntimeError, match="already initialized"):
            dist.init_process_group("gloo", init_method=f"file://{tmp_path}/two", rank=0, world_size=1)
        assert dist.get_world_size() == 1 and dist.is_initialized()
    finally:
        dist.destroy_process_group()
    assert not dist.is_initialized()
