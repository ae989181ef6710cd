"""DataLoader(num_workers>0): real worker processes, compared with num_workers=0 and with torch's
documented behaviour (ordering, seeding, get_worker_info, persistent workers, prefetching, errors,
shutdown). Every test is bounded by SIGALRM (HANG_GUARD) so that a hang fails instead of blocking
the suite; no assertion is about speed."""
import gc
import multiprocessing
import os
import random
import signal
import sys
import time

import numpy as np
import pytest

import rustytorch as rt
from rustytorch.utils.data import DataLoader, IterableDataset, TensorDataset, WorkerInfo, get_worker_info

HANG_GUARD = 90  # seconds per test; a bound against a hang, not a timing check
SAMPLES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "samples")

pytestmark = pytest.mark.filterwarnings("ignore:This DataLoader will create")


@pytest.fixture(autouse=True)
def bounded_by_alarm():
    def on_alarm(signum, frame):
        raise TimeoutError(f"test still running after {HANG_GUARD} s: a DataLoader hang?")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(HANG_GUARD)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def no_children_left():
    """True once every child process of this test has exited and been reaped."""
    gc.collect()
    return not multiprocessing.active_children()


def process_gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False  # alive, or a zombie nobody reaped


def wait_until(condition, seconds=10.0):
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


# Datasets and functions the workers run: module level, so "spawn" can pickle them by name.

class Squares:
    """Map-style: sample i is (tensor [i, i*i] float32, i)."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return rt.tensor([float(i), float(i * i)]), i


class WhoLoadsMe:
    """Each sample says which process and worker loaded it, and what its RNGs drew first."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = get_worker_info()
        return {"index": i, "pid": os.getpid(), "worker": info.id, "num_workers": info.num_workers,
                "seed": info.seed, "dataset_type": type(info.dataset).__name__, "init_id": INIT_CALLS[-1],
                "random": random.random(), "rt_rand": rt.rand(1).item(), "np_rand": float(np.random.rand())}


INIT_CALLS = [-1]  # worker_init_fn appends in the workers only


def record_init(worker_id):
    INIT_CALLS.append(worker_id)


class CountingDataset:
    """Counts every __getitem__ in a shared counter (inherited by the forked workers)."""

    def __init__(self, n, counter):
        self.n, self.counter = n, counter

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        with self.counter.get_lock():
            self.counter.value += 1
        return i


def _load_broken_sample(i):
    raise ValueError(f"sample {i} is corrupt")


class BrokenAt:
    def __init__(self, bad):
        self.bad = bad

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == self.bad:
            _load_broken_sample(i)
        return i


class MissingKey:
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return {"a": 1}["b"]


class RaisesALocalException:
    def __len__(self):
        return 2

    def __getitem__(self, i):
        class ShardError(Exception):  # cannot be pickled by name
            pass
        raise ShardError(f"shard {i} is missing")


def collate_into_a_lock(batch):
    import threading
    return threading.Lock()  # cannot be pickled


def failing_init(worker_id):
    raise OSError(f"worker {worker_id} could not open its shard")


class Slow:
    def __init__(self, seconds):
        self.seconds = seconds

    def __len__(self):
        return 100

    def __getitem__(self, i):
        time.sleep(self.seconds)
        return i


class Shards(IterableDataset):
    """range(n), each worker its share when get_worker_info() says there are workers."""

    def __init__(self, n, sharded=True):
        self.n, self.sharded = n, sharded

    def __iter__(self):
        info = get_worker_info()
        if info is None or not self.sharded:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self):
        return self.n


class ParallelOps:
    """Runs ops big enough for OpenMP to split them, in the worker."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        x = rt.ones(256, 256)
        return (x @ x).sum().item() + rt.ones(1 << 20).sum().item() + i, rt.get_num_threads()


def pairs_as_dict(batch):
    return {"x": rt.stack([x for x, _ in batch]), "i": [i for _, i in batch]}


def batches_of(loader):
    return [(x.tolist(), i.tolist()) for x, i in loader]


# [SECTION] order and content

def test_same_batches_in_the_same_order_for_0_to_3_workers_with_fork():
    expected = None
    for num_workers in (0, 1, 2, 3):
        rt.manual_seed(7)  # shuffle draws from the default generator, after the loader's base seed
        loader = DataLoader(Squares(23), batch_size=4, shuffle=True, num_workers=num_workers,
                            multiprocessing_context="fork" if num_workers else None)
        got = batches_of(loader)
        if expected is None:
            expected = got
            assert sorted(i for _, idx in got for i in idx) == list(range(23))
            assert [len(idx) for _, idx in got] == [4, 4, 4, 4, 4, 3]
        assert got == expected, f"num_workers={num_workers}"
    assert no_children_left()


def test_same_batches_with_spawn_and_a_generator():
    plain = DataLoader(Squares(10), batch_size=3, shuffle=True, generator=rt.Generator().manual_seed(1))
    spawned = DataLoader(Squares(10), batch_size=3, shuffle=True, generator=rt.Generator().manual_seed(1),
                         num_workers=2, multiprocessing_context="spawn", collate_fn=pairs_as_dict)
    got = [(b["x"].tolist(), b["i"]) for b in spawned]
    assert got == [(x, i) for x, i in batches_of(plain)]
    assert no_children_left()


def test_collate_fn_drop_last_and_batch_size_none_in_workers():
    loader = DataLoader(Squares(10), batch_size=4, drop_last=True, num_workers=2, collate_fn=pairs_as_dict)
    assert [b["i"] for b in loader] == [[0, 1, 2, 3], [4, 5, 6, 7]] and len(loader) == 2
    singles = list(DataLoader(Squares(5), batch_size=None, num_workers=2))
    assert [i for _, i in singles] == [0, 1, 2, 3, 4] and singles[3][0].tolist() == [3.0, 9.0]
    ds = TensorDataset(rt.arange(12).float().reshape(6, 2), rt.arange(6))
    assert [y.tolist() for _, y in DataLoader(ds, batch_size=4, num_workers=2)] == [[0, 1, 2, 3], [4, 5]]


def test_forked_workers_run_parallel_ops_after_the_parent_used_openmp():
    rt.set_num_threads(2)  # See Note [One thread per worker] in _worker.py: without it the workers would hang
    x = rt.ones(512, 512)
    (x @ x).sum()
    rt.ones(1 << 22).sum()
    samples = list(DataLoader(ParallelOps(), batch_size=None, num_workers=2, multiprocessing_context="fork",
                              timeout=60))
    assert samples == [[256.0 * 256 * 256 + (1 << 20) + i, 1] for i in range(4)]  # tuples come back as lists


@pytest.mark.skipif(not rt.cuda.is_available(), reason="pinned memory needs a GPU (or RT_CUDA_EMULATED_DEVICES=1)")
def test_pin_memory_with_workers_pins_each_batch():
    loader = DataLoader(Squares(6), batch_size=2, num_workers=2, pin_memory=True)
    batches = list(loader)
    assert [i.tolist() for _, i in batches] == [[0, 1], [2, 3], [4, 5]]
    assert all(x.is_pinned() and i.is_pinned() for x, i in batches)


@pytest.mark.skipif(rt.cuda.is_available(), reason="checks the behaviour without a usable GPU")
def test_pin_memory_with_workers_without_a_gpu_warns_and_yields_plain_batches():
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no accelerator is found"):
        loader = DataLoader(Squares(4), batch_size=2, num_workers=2, pin_memory=True)
    assert [i.tolist() for _, i in loader] == [[0, 1], [2, 3]]


# [SECTION] seeding, worker_init_fn, get_worker_info

def test_worker_init_fn_and_get_worker_info_seen_in_workers():
    assert get_worker_info() is None
    loader = DataLoader(WhoLoadsMe(), batch_size=None, num_workers=2, worker_init_fn=record_init,
                        generator=rt.Generator().manual_seed(3))
    samples = list(loader)
    assert [s["index"] for s in samples] == list(range(8))
    assert {s["worker"] for s in samples} == {0, 1} and {s["num_workers"] for s in samples} == {2}
    assert all(s["init_id"] == s["worker"] for s in samples)  # worker_init_fn(worker_id) ran in that worker
    assert all(s["dataset_type"] == "WhoLoadsMe" for s in samples) and os.getpid() not in {s["pid"] for s in samples}
    seeds = {s["worker"]: s["seed"] for s in samples}
    assert seeds[1] == seeds[0] + 1  # base_seed + worker_id
    first = {s["worker"]: s for s in samples if s["index"] in (0, 1)}
    for worker_id, s in first.items():  # each worker's first draws come from generators seeded with its seed
        assert s["random"] == random.Random(seeds[worker_id]).random()
        rt.manual_seed(seeds[worker_id])
        assert s["rt_rand"] == rt.rand(1).item()
    assert first[0]["np_rand"] != first[1]["np_rand"]
    again = list(DataLoader(WhoLoadsMe(), batch_size=None, num_workers=2, generator=rt.Generator().manual_seed(3)))
    assert [s["seed"] for s in again] == [s["seed"] for s in samples]  # the loader's generator fixes the seeds
    assert INIT_CALLS == [-1]  # the parent never ran worker_init_fn


def test_worker_info_is_read_only():
    info = WorkerInfo(id=0, num_workers=1, seed=5, dataset=None)
    with pytest.raises(RuntimeError, match="Cannot assign attributes"):
        info.id = 3
    assert "seed=5" in repr(info)


# [SECTION] persistent workers and prefetching

def test_persistent_workers_reuse_the_same_processes_across_epochs():
    loader = DataLoader(WhoLoadsMe(), batch_size=2, num_workers=2, persistent_workers=True)
    epochs = [list(loader) for _ in range(3)]
    pids = [set().union(*(set(b["pid"].tolist()) for b in epoch)) for epoch in epochs]
    assert len(pids[0]) == 2 and pids[0] == pids[1] == pids[2]
    assert all([b["index"].tolist() for b in epoch] == [[0, 1], [2, 3], [4, 5], [6, 7]] for epoch in epochs)
    fresh = DataLoader(WhoLoadsMe(), batch_size=2, num_workers=2)
    first, second = ({p for b in fresh for p in b["pid"].tolist()} for _ in range(2))
    assert not first & second  # without persistent_workers each epoch starts new processes
    half = iter(loader)
    next(half)  # an abandoned epoch: the next one still starts from the beginning
    assert [b["index"].tolist() for b in loader] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    worker_pids = loader._iterator.worker_pids
    del loader, half
    assert wait_until(lambda: no_children_left() and all(process_gone(p) for p in worker_pids))


def test_persistent_workers_restart_an_iterable_dataset_each_epoch():
    loader = DataLoader(Shards(7), batch_size=2, num_workers=2, persistent_workers=True)
    for _ in range(2):
        assert sorted(v for b in loader for v in b.tolist()) == list(range(7))


@pytest.mark.parametrize("prefetch_factor", [1, 3])
def test_prefetch_factor_bounds_the_batches_in_flight(prefetch_factor):
    counter = multiprocessing.get_context("fork").Value("i", 0)
    loader = DataLoader(CountingDataset(40, counter), batch_size=1, num_workers=2, prefetch_factor=prefetch_factor,
                        multiprocessing_context="fork")
    limit = 2 * prefetch_factor
    it = iter(loader)
    for consumed in range(3):
        assert wait_until(lambda: counter.value == consumed + limit)
        time.sleep(0.3)  # nothing beyond the limit is requested while we do not consume
        assert counter.value == consumed + limit
        assert next(it) == consumed
    del it


# [SECTION] errors and shutdown

def test_a_raising_worker_gives_its_traceback_in_the_parent():
    it = iter(DataLoader(BrokenAt(5), batch_size=2, num_workers=2))
    assert [next(it).tolist() for _ in range(2)] == [[0, 1], [2, 3]]
    with pytest.raises(ValueError) as caught:
        next(it)
    text = str(caught.value)
    assert "Caught ValueError in DataLoader worker process 0." in text
    assert "Original Traceback (most recent call last):" in text
    assert "_load_broken_sample" in text and "sample 5 is corrupt" in text
    assert next(it).tolist() == [6, 7]  # the iterator goes on, as torch's does
    missing = iter(DataLoader(MissingKey(), num_workers=1))
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process") as caught:
        next(missing)
    assert "\\n" not in str(caught.value)  # the traceback is readable, not a repr
    del it, missing, caught  # the tracebacks refer to the iterators, which keep their workers
    assert wait_until(no_children_left)


def test_what_cannot_be_pickled_still_reaches_the_parent_as_an_error():
    it = iter(DataLoader(Squares(4), batch_size=2, num_workers=1, collate_fn=collate_into_a_lock))
    with pytest.raises(TypeError, match="(?s)Caught TypeError in DataLoader worker process 0 while pickling its "
                                        "batch for the main process.*cannot pickle"):
        next(it)
    local = iter(DataLoader(RaisesALocalException(), num_workers=1))
    with pytest.raises(RuntimeError, match="(?s)Caught ShardError in DataLoader worker process 0.*shard 0 is missing"):
        next(local)
    del it, local


def test_an_exception_in_worker_init_fn_is_raised_in_the_parent():
    it = iter(DataLoader(Squares(4), num_workers=2, worker_init_fn=failing_init))
    with pytest.raises(OSError, match=r"(?s)in DataLoader worker process \d.*could not open its shard") as caught:
        next(it)
    del it, caught
    assert wait_until(no_children_left)


def test_a_worker_killed_by_sigkill_is_reported_not_waited_for():
    it = iter(DataLoader(Slow(0.05), batch_size=2, num_workers=2))
    next(it)
    victim = it.worker_pids[0]
    os.kill(victim, signal.SIGKILL)
    with pytest.raises(RuntimeError, match=rf"DataLoader worker \(pid {victim}\) exited unexpectedly: it was killed "
                                           r"by signal 9 \(SIGKILL\)"):
        for _ in it:
            pass
    assert wait_until(lambda: no_children_left() and all(process_gone(p) for p in it.worker_pids))


def test_deleting_the_iterator_leaves_no_live_child_processes():
    it = iter(DataLoader(Slow(0.01), batch_size=2, num_workers=3))
    next(it)
    pids = it.worker_pids
    assert all(not process_gone(p) for p in pids)
    del it
    assert wait_until(lambda: no_children_left() and all(process_gone(p) for p in pids))
    loader = DataLoader(Squares(6), batch_size=2, num_workers=2)
    finished = iter(loader)
    assert len(list(finished)) == 3  # an exhausted iterator has already stopped its workers
    assert all(process_gone(p) for p in finished.worker_pids) and no_children_left()


def test_timeout_raises_when_a_batch_takes_too_long():
    it = iter(DataLoader(Slow(2), num_workers=1, timeout=0.5))
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0\.5 seconds"):
        next(it)
    del it
    assert wait_until(no_children_left)


def test_worker_option_errors():
    with pytest.raises(ValueError, match="num_workers option should be a non-negative integer"):
        DataLoader(Squares(4), num_workers=-1)
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified in multiprocessing"):
        DataLoader(Squares(4), prefetch_factor=4)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        DataLoader(Squares(4), persistent_workers=True)
    with pytest.raises(ValueError, match="multiprocessing_context can only be used with multi-process loading"):
        DataLoader(Squares(4), multiprocessing_context="spawn")
    with pytest.raises(ValueError, match="valid start method"):
        DataLoader(Squares(4), num_workers=1, multiprocessing_context="teleport")
    with pytest.raises(TypeError, match="valid context object"):
        DataLoader(Squares(4), num_workers=1, multiprocessing_context=3)
    loader = DataLoader(Squares(4), num_workers=1, multiprocessing_context=multiprocessing.get_context("spawn"))
    assert loader.multiprocessing_context.get_start_method() == "spawn" and loader.prefetch_factor == 2
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader is initialized"):
        loader.batch_size = 3


# [SECTION] IterableDataset

def test_iterable_dataset_sharded_over_2_workers():
    loader = DataLoader(Shards(10), batch_size=3, num_workers=2)
    # worker 0 holds 0, 2, 4, 6, 8 and worker 1 holds 1, 3, 5, 7, 9; tasks alternate between them
    assert [b.tolist() for b in loader] == [[0, 2, 4], [1, 3, 5], [6, 8], [7, 9]]
    assert [b.tolist() for b in DataLoader(Shards(10), batch_size=3, drop_last=True, num_workers=2)] == \
        [[0, 2, 4], [1, 3, 5]]
    assert list(DataLoader(Shards(5), batch_size=None, num_workers=2)) == [0, 1, 2, 3, 4]
    assert wait_until(no_children_left)


def test_iterable_dataset_without_sharding_is_copied_per_worker_and_warns_past_its_length():
    loader = DataLoader(Shards(4, sharded=False), batch_size=2, num_workers=2)
    assert len(loader) == 2
    with pytest.warns(UserWarning, match="was reported to be 2 batches"):
        batches = [b.tolist() for b in loader]
    assert batches == [[0, 1], [0, 1], [2, 3], [2, 3]]  # each worker yields the whole stream, as in torch


# [SECTION] a real training loop

def test_two_workers_feed_a_training_loop_with_the_same_losses():
    sys.path.insert(0, os.path.abspath(SAMPLES_DIR))
    try:
        from digits_data import load_digits
    finally:
        sys.path.pop(0)
    train, _ = load_digits()

    def train_losses(num_workers):
        rt.manual_seed(0)
        model = rt.nn.Sequential(rt.nn.Linear(64, 32), rt.nn.ReLU(), rt.nn.Linear(32, 10))
        opt = rt.optim.SGD(model.parameters(), lr=0.1)
        loader = DataLoader(train, batch_size=128, shuffle=True, num_workers=num_workers)
        losses = []
        for _ in range(2):
            for x, y in loader:
                loss = rt.nn.functional.cross_entropy(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.item())
        return losses

    single, workers = train_losses(0), train_losses(2)
    assert len(single) == 2 * 12 and single == workers
    assert single[-1] < single[0]
