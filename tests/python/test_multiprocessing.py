"""rt.multiprocessing.spawn / start_processes: torch.multiprocessing.spawn's results, errors and cleanup."""
import os
import signal
import time

import pytest

import rustytorch.multiprocessing as mp

HANG_GUARD = 120  # seconds; a bound against a hang, not a timing check


# Functions the children run: module level, so the "spawn" start method can import them.

def write_square(rank, out_dir, offset):
    import rustytorch as rt
    value = (rt.tensor([float(rank)]) * rank).tolist()[0] + offset
    with open(os.path.join(out_dir, f"rank{rank}"), "w") as f:
        f.write(repr(value))


def put_rank(rank, queue):
    queue.put((rank, os.getpid()))


def raise_on_rank_1(rank, out_dir):
    if rank == 1:
        def inner_helper():
            raise ValueError("bad shard on rank 1")
        inner_helper()
    time.sleep(HANG_GUARD)  # the others wait to be terminated


def exit_on_rank_1(rank, code):
    if rank == 1:
        os._exit(code)
    time.sleep(HANG_GUARD)


def write_pid_and_sleep(rank, out_dir):
    path = os.path.join(out_dir, f"pid{rank}")
    with open(path + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(path + ".tmp", path)
    time.sleep(HANG_GUARD)


@pytest.mark.parametrize("start_method", ["spawn", "fork"])
def test_each_process_runs_fn_with_its_index(tmp_path, start_method):
    mp.start_processes(write_square, args=(str(tmp_path), 0.5), nprocs=3, start_method=start_method)
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == {"rank0": "0.5", "rank1": "1.5", "rank2": "4.5"}


def test_results_through_a_queue_and_pids():
    queue = mp.get_context("spawn").SimpleQueue()
    ctx = mp.spawn(put_rank, args=(queue,), nprocs=2, join=False)
    assert isinstance(ctx, mp.ProcessContext)
    pids = ctx.pids()
    deadline = time.monotonic() + HANG_GUARD
    while not ctx.join(timeout=1.0):
        assert time.monotonic() < deadline
    got = sorted(queue.get() for _ in range(2))
    assert got == [(0, pids[0]), (1, pids[1])]
    assert ctx.join() is True  # joining again after the end


def test_exception_names_the_rank_and_carries_its_traceback(tmp_path):
    ctx = mp.spawn(raise_on_rank_1, args=(str(tmp_path),), nprocs=3, join=False)
    with pytest.raises(mp.ProcessRaisedException) as info:
        ctx.join(timeout=HANG_GUARD)
    e = info.value
    assert e.error_index == 1 and e.pid == ctx.pids()[1]
    assert "-- Process 1 terminated with the following error:" in str(e)
    assert "Traceback (most recent call last):" in str(e)
    assert "in inner_helper" in str(e) and "ValueError: bad shard on rank 1" in str(e)
    assert not any(p.is_alive() for p in ctx.processes)  # the others were terminated


def test_join_true_raises_too():
    with pytest.raises(mp.ProcessExitedException) as info:
        mp.spawn(exit_on_rank_1, args=(7,), nprocs=2)
    e = info.value
    assert (e.error_index, e.exit_code, e.signal_name) == (1, 7, None)
    assert str(e) == "process 1 terminated with exit code 7"


def test_child_killed_by_a_signal(tmp_path):
    ctx = mp.spawn(write_pid_and_sleep, args=(str(tmp_path),), nprocs=2, join=False)
    pid_file = tmp_path / "pid1"
    deadline = time.monotonic() + HANG_GUARD
    while not pid_file.exists():
        assert time.monotonic() < deadline, "rank 1 never started"
        assert ctx.join(timeout=0.05) is False
    victim = int(pid_file.read_text())
    assert victim == ctx.pids()[1]
    os.kill(victim, signal.SIGKILL)
    with pytest.raises(mp.ProcessExitedException) as info:
        while not ctx.join(timeout=HANG_GUARD):
            pass
    e = info.value
    assert (e.error_index, e.exit_code, e.signal_name, e.pid) == (1, -signal.SIGKILL, "SIGKILL", victim)
    assert str(e) == "process 1 terminated with signal SIGKILL"
    assert not ctx.processes[0].is_alive()  # terminated and reaped by join()


def test_exceptions_pickle():
    import pickle
    e = pickle.loads(pickle.dumps(mp.ProcessExitedException("m", error_index=2, error_pid=9, exit_code=-9,
                                                              signal_name="SIGKILL")))
    assert (str(e), e.error_index, e.pid, e.exit_code, e.signal_name) == ("m", 2, 9, -9, "SIGKILL")


def test_spawn_warns_for_other_start_methods(tmp_path):
    with pytest.warns(FutureWarning, match="start_method=spawn"):
        mp.spawn(write_square, args=(str(tmp_path), 0.0), nprocs=1, start_method="fork")
    assert (tmp_path / "rank0").read_text() == "0.0"


def test_standard_multiprocessing_names_are_there():
    assert mp.get_context is __import__("multiprocessing").get_context
    assert mp.Process is __import__("multiprocessing").Process
