"""The DataLoader worker process: reads tasks from its own index queue, fetches and collates each
batch, and puts the result on the result queue it shares with the other workers. The parent side
is _multiprocessing_iter.py; the messages between them are defined here.

    parent -> worker (index queue):   Task(task_id, index) | Resume(epoch) | None (exit)
    worker -> parent (result queue):  Batch(task_id, worker_id, payload) | Exhausted(task_id, worker_id)
                                      | Resumed(epoch, worker_id)

A worker answers its tasks in the order it receives them. Before the first task it limits the
engine to one CPU thread (Note [One thread per worker]), seeds Python's `random` and the engine's
default generator with config.base_seed + worker_id (numpy's global generator with a state derived
from both, so workers never share numpy draws; torch derives it differently), publishes its
get_worker_info(), then calls worker_init_fn(worker_id). An exception there is sent as the answer
to every task, so the parent raises it with its traceback. Batches are pickled here:
See Note [Worker results travel as bytes].
"""
import os
import pickle
import queue
import random
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Optional

import rustytorch as rt

from ._fetch import make_fetcher
from ._worker_exception import WorkerException
from ._worker_info import WorkerInfo, set_worker_info

# Seconds a worker waits for a task before checking that its parent still lives.
PARENT_CHECK_INTERVAL = 1.0

# Note [One thread per worker]
# A forked child of a process that has run an OpenMP parallel region (our kernels, OpenBLAS) hangs
# in its first parallel region of more than one thread: GNU libgomp's thread pool does not survive
# fork. Each worker therefore sets the engine's (and OpenMP's) thread count to 1 before running any
# user code, as torch does for its workers; N workers with all cores each would oversubscribe the
# machine anyway. A worker_init_fn that raises the count again under "fork" reintroduces the hang.

# Note [Worker results travel as bytes]
# The worker pickles each batch itself before queueing it. multiprocessing.Queue pickles in a
# background thread, where a failure is only printed and the item dropped, and the parent would
# wait for that batch forever; pickling here turns the failure into a WorkerException for that
# task. Tensors pickle by value (a copy of their data, _tensor.py's __reduce_ex__), not through
# shared memory as torch's do.


class Task(NamedTuple):
    task_id: int
    index: Any


class Resume(NamedTuple):
    """Start a new epoch with a persistent worker: reset the dataset iterator, then acknowledge."""
    epoch: int


class Batch(NamedTuple):
    task_id: int
    worker_id: int
    payload: bytes  # the pickled batch or WorkerException: See Note [Worker results travel as bytes]


class Exhausted(NamedTuple):
    """An IterableDataset worker has no batch left for task_id (nor for any later task this epoch)."""
    task_id: int
    worker_id: int


class Resumed(NamedTuple):
    epoch: int
    worker_id: int


@dataclass(frozen=True)
class WorkerConfig:
    """What every worker of one loader iterator gets (pickled to each worker under "spawn")."""
    dataset: Any
    is_iterable: bool
    auto_collation: bool
    collate_fn: Callable
    drop_last: bool
    base_seed: int
    num_workers: int
    worker_init_fn: Optional[Callable]

    def make_fetcher(self):
        return make_fetcher(self.dataset, self.is_iterable, self.auto_collation, self.collate_fn, self.drop_last)


def worker_loop(config, worker_id, index_queue, result_queue, done_event):
    """The target of each worker process."""
    try:
        _serve(config, worker_id, index_queue, result_queue, done_event)
    except KeyboardInterrupt:
        pass  # Ctrl+C reaches the whole process group; the parent raises it and shuts the workers down
    if done_event.is_set():
        # The parent has stopped reading: do not block this process's exit on flushing the queue.
        result_queue.cancel_join_thread()
        result_queue.close()


def seed_worker(base_seed, worker_id):
    seed = base_seed + worker_id
    random.seed(seed)
    rt.manual_seed(seed)
    try:
        import numpy as np
    except ImportError:
        return seed
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))
    return seed


def _serve(config, worker_id, index_queue, result_queue, done_event):
    parent_pid = os.getppid()
    rt.set_num_threads(1)  # See Note [One thread per worker]
    seed = seed_worker(config.base_seed, worker_id)
    set_worker_info(WorkerInfo(id=worker_id, num_workers=config.num_workers, seed=seed, dataset=config.dataset))
    where = f"in DataLoader worker process {worker_id}"

    fetcher, setup_error = None, None
    try:
        if config.worker_init_fn is not None:
            config.worker_init_fn(worker_id)
        fetcher = config.make_fetcher()
    except Exception:
        setup_error = _encode(WorkerException.from_current(where), where)

    exhausted = False
    while True:
        try:
            message = index_queue.get(timeout=PARENT_CHECK_INTERVAL)
        except queue.Empty:
            if done_event.is_set() or os.getppid() != parent_pid:
                return  # shut down (its exit message may have been lost) or the parent died
            continue
        if message is None or done_event.is_set():
            return
        if isinstance(message, Resume):
            exhausted = False
            if setup_error is None:
                try:
                    fetcher = config.make_fetcher()
                except Exception:
                    setup_error = _encode(WorkerException.from_current(where), where)
            result_queue.put(Resumed(message.epoch, worker_id))
            continue
        if exhausted:
            continue  # the parent skips these tasks
        if setup_error is not None:
            result_queue.put(Batch(message.task_id, worker_id, setup_error))
            continue
        try:
            data = fetcher.fetch(message.index)
        except StopIteration:
            if not config.is_iterable:
                data = WorkerException.from_current(where)
            else:
                exhausted = True
                result_queue.put(Exhausted(message.task_id, worker_id))
                continue
        except Exception:
            data = WorkerException.from_current(where)
        result_queue.put(Batch(message.task_id, worker_id, _encode(data, where)))
        del data


def _encode(data, where):
    """See Note [Worker results travel as bytes]."""
    try:
        return pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        failure = WorkerException.from_current(f"{where} while pickling its batch for the main process")
        return pickle.dumps(failure, protocol=pickle.HIGHEST_PROTOCOL)
