"""WorkerProcesses: the worker processes of one DataLoader iterator and the queues to them; starts
them, notices when one has died, and shuts them all down (_multiprocessing_iter.py decides what
they do).

    workers = WorkerProcesses(multiprocessing.get_context("fork"), config, num_workers=2)
    workers.send(0, Task(0, [0, 1, 2]))
    message = workers.receive(timeout=0.1)        # queue.Empty when nothing came
    workers.raise_if_one_died()                   # RuntimeError naming the pid and how it ended
    workers.shutdown()                            # every process exited and reaped; idempotent
"""
import os
import signal
import time
import warnings

from ._worker import worker_loop

WORKER_JOIN_TIMEOUT = 5.0  # seconds the workers get to exit on their own at shutdown before they are terminated


def warn_if_more_workers_than_cpus(num_workers):
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count()
    if cpus and num_workers > cpus:
        warnings.warn(f"This DataLoader will create {num_workers} worker processes, more than the {cpus} CPUs this "
                      f"process may use; so many workers can make loading slower or exhaust memory. Consider "
                      f"num_workers <= {cpus}.")


def describe_exit(exitcode):
    if exitcode is None:
        return "is still running"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = "an unknown signal"
        text = f"was killed by signal {-exitcode} ({name})"
        if exitcode == -signal.SIGKILL:
            text += "; the system may have run out of memory (the OOM killer sends SIGKILL)"
        return text
    return f"exited with code {exitcode} (its traceback, if any, was printed to stderr)"


# Note [Shutting workers down from a finalizer]
# The iterator shuts its workers down through a weakref.finalize that holds its WorkerProcesses, not
# from __del__. When the iterator dies in a reference cycle, the garbage collector first runs the
# weakref callbacks of everything in the cycle: the queues' own callbacks would close them (stopping
# their feeder threads) before a __del__ could send the workers their exit message, and every worker
# would then be waited for and terminated. Held by the finalizer, the queues are not garbage and still
# work. weakref.finalize also runs at interpreter exit, before multiprocessing terminates daemonic
# processes. Workers also exit on their own once the shutdown event is set.

class WorkerProcesses:
    def __init__(self, context, config, num_workers):
        self.result_queue = context.Queue()
        self.done_event = context.Event()
        self.index_queues, self.processes = [], []
        self.stopped = set()  # workers told to exit before the shutdown: their exit is expected
        self.closed = False
        try:
            for worker_id in range(num_workers):
                index_queue = context.Queue()
                index_queue.cancel_join_thread()  # never block this process's exit on a worker that is gone
                process = context.Process(target=worker_loop, name=f"DataLoader worker {worker_id}", daemon=True,
                                          args=(config, worker_id, index_queue, self.result_queue, self.done_event))
                process.start()
                self.index_queues.append(index_queue)
                self.processes.append(process)
        except BaseException:
            self.shutdown()
            raise

    @property
    def pids(self):
        return [p.pid for p in self.processes]

    def send(self, worker_id, message):
        self.index_queues[worker_id].put(message)

    def stop(self, worker_id):
        """Tells one worker to exit now (its IterableDataset has run out)."""
        self.stopped.add(worker_id)
        self.index_queues[worker_id].put(None)

    def receive(self, timeout):
        return self.result_queue.get(timeout=timeout)

    def raise_if_one_died(self):
        dead = [p for worker_id, p in enumerate(self.processes) if worker_id not in self.stopped and not p.is_alive()]
        if not dead:
            return
        self.shutdown()
        if len(dead) == 1:
            raise RuntimeError(f"DataLoader worker (pid {dead[0].pid}) exited unexpectedly: it "
                               f"{describe_exit(dead[0].exitcode)}")
        pids = ", ".join(str(p.pid) for p in dead)
        details = "; ".join(f"pid {p.pid} {describe_exit(p.exitcode)}" for p in dead)
        raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly: {details}")

    def shutdown(self):
        """Stops every worker and reaps it (no zombies); safe to call more than once."""
        if self.closed:
            return
        self.closed = True
        try:
            self.done_event.set()
            for index_queue in self.index_queues:
                index_queue.put(None)
            deadline = time.monotonic() + WORKER_JOIN_TIMEOUT
            for process in self.processes:
                process.join(timeout=max(0.0, deadline - time.monotonic()))
        finally:
            for process in self.processes:
                if process.is_alive():
                    process.terminate()
                    process.join(timeout=WORKER_JOIN_TIMEOUT)
                if process.is_alive():
                    process.kill()
                    process.join()
            for index_queue in self.index_queues:
                index_queue.close()
            self.result_queue.cancel_join_thread()
            self.result_queue.close()
