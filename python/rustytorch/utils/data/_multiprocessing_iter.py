"""MultiProcessLoaderIter: iter(DataLoader) with num_workers > 0, the parent side of the worker
processes (their loop is _worker.py; starting, watching and stopping them is _worker_processes.py).

    it = iter(DataLoader(ds, batch_size=64, num_workers=2))   # starts 2 worker processes
    batch = next(it)                                           # batches in the sampler's order
    del it                                                     # workers exit (also at the epoch's end)

Each worker has its own index queue; all share one result queue. Tasks (one index-sampler item
each) go to the workers in turn, and at most prefetch_factor * num_workers are in flight (sent but
not yet returned by next()). Results arrive in any order; those that come early wait in a reorder
buffer until their turn, so batches come out in the sampler's order.

An IterableDataset worker that has run out answers Exhausted: it gets no more tasks, the tasks it
was sent are skipped, and the epoch ends when every worker has run out. Without persistent workers
it is told to exit then; the others exit when the epoch ends or the iterator is collected. With
persistent_workers=True the loader keeps this iterator and each new epoch sends Resume to every
worker and waits for all of them to acknowledge (results still queued from an abandoned epoch are
dropped on the way).

While it waits for a result, the parent checks every RESULT_POLL_INTERVAL that no worker has died
(a signal, os._exit, a crash in native code): a dead worker is a RuntimeError naming its pid and
how it ended, not a hang. An exception raised in a worker is raised here, with its traceback text,
and the iterator stays usable, as torch's does.
"""
import itertools
import multiprocessing
import pickle
import queue
import time
import weakref

from ._loader_iter import LoaderIterator
from ._worker import Batch, Exhausted, Resume, Resumed, Task, WorkerConfig
from ._worker_exception import WorkerException
from ._worker_processes import WorkerProcesses

RESULT_POLL_INTERVAL = 0.1  # seconds between checks for dead workers while waiting for a batch


class MultiProcessLoaderIter(LoaderIterator):
    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._persistent = loader.persistent_workers
        config = WorkerConfig(dataset=self._dataset, is_iterable=self._is_iterable,
                              auto_collation=self._auto_collation, collate_fn=self._collate_fn,
                              drop_last=self._drop_last, base_seed=self._base_seed,
                              num_workers=self._num_workers, worker_init_fn=loader.worker_init_fn)
        context = loader.multiprocessing_context or multiprocessing.get_context()
        self._workers = WorkerProcesses(context, config, self._num_workers)
        # See Note [Shutting workers down from a finalizer] in _worker_processes.py.
        self._finalizer = weakref.finalize(self, self._workers.shutdown)
        self._epoch = 0
        self._start_epoch()

    @property
    def worker_pids(self):
        return self._workers.pids

    @property
    def _shut_down(self):
        return self._workers.closed

    def _shutdown_workers(self):
        self._finalizer()

    # [SECTION] epochs and task dispatch

    def _start_epoch(self):
        self._next_task_id = 0
        self._next_to_yield = 0
        self._task_worker = {}     # task id -> worker id, for tasks sent and not yet yielded or skipped
        self._early_results = {}   # task id -> Batch that arrived before its turn (the reorder buffer)
        self._worker_active = [True] * self._num_workers
        self._worker_turn = itertools.cycle(range(self._num_workers))
        self._dispatch_tasks()

    def _reset(self, loader):
        super()._reset(loader)
        self._epoch += 1
        for worker_id in range(self._num_workers):
            self._workers.send(worker_id, Resume(self._epoch))
        waiting = self._num_workers
        while waiting:
            message = self._receive()
            if isinstance(message, Resumed) and message.epoch == self._epoch:
                waiting -= 1
        self._start_epoch()

    def _next_active_worker(self):
        for _ in range(self._num_workers):
            worker_id = next(self._worker_turn)
            if self._worker_active[worker_id]:
                return worker_id
        return None

    def _dispatch_tasks(self):
        """Sends index-sampler items until prefetch_factor * num_workers tasks are in flight."""
        limit = self._prefetch_factor * self._num_workers
        while self._next_task_id - self._next_to_yield < limit:
            worker_id = self._next_active_worker()
            if worker_id is None:
                return
            try:
                index = next(self._sampler_iter)
            except StopIteration:
                return
            self._workers.send(worker_id, Task(self._next_task_id, index))
            self._task_worker[self._next_task_id] = worker_id
            self._next_task_id += 1

    # [SECTION] receiving, in order

    def _next_data(self):
        while True:
            self._skip_tasks_of_exhausted_workers()
            if self._next_to_yield == self._next_task_id:  # nothing in flight and nothing left to send
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            task_id = self._next_to_yield
            if task_id in self._early_results:
                return self._yield(self._early_results.pop(task_id))
            message = self._receive()
            if isinstance(message, Exhausted):
                self._mark_exhausted(message.worker_id)
            elif isinstance(message, Batch):
                if message.task_id == task_id:
                    return self._yield(message)
                self._early_results[message.task_id] = message
            # a Resumed outside _reset belongs to no current epoch: dropped

    def _skip_tasks_of_exhausted_workers(self):
        skipped = False
        while self._next_to_yield < self._next_task_id:
            task_id = self._next_to_yield
            if task_id in self._early_results or self._worker_active[self._task_worker[task_id]]:
                break
            del self._task_worker[task_id]
            self._next_to_yield += 1
            skipped = True
        if skipped:
            self._dispatch_tasks()

    def _mark_exhausted(self, worker_id):
        self._worker_active[worker_id] = False
        if not self._persistent:
            self._workers.stop(worker_id)

    def _yield(self, batch):
        del self._task_worker[batch.task_id]
        self._next_to_yield += 1
        self._dispatch_tasks()
        data = self._decode(batch)
        if isinstance(data, WorkerException):
            data.reraise()
        return data

    def _decode(self, batch):
        try:
            return pickle.loads(batch.payload)
        except Exception as e:
            raise RuntimeError(f"DataLoader: the batch of worker {batch.worker_id} (pid "
                               f"{self._workers.pids[batch.worker_id]}) could not be unpickled in the main process: "
                               f"{type(e).__name__}: {e}") from e

    def _receive(self):
        if self._shut_down:
            raise RuntimeError("DataLoader: this iterator's worker processes have been shut down (a worker died or "
                               "the epoch ended); iterate over the DataLoader again for a new iterator")
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = RESULT_POLL_INTERVAL
            if deadline is not None:
                wait = max(0.0, min(wait, deadline - time.monotonic()))
            try:
                return self._workers.receive(timeout=wait)
            except queue.Empty:
                pass
            self._workers.raise_if_one_died()
            if deadline is not None and time.monotonic() >= deadline:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
