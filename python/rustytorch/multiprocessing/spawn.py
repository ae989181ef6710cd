"""spawn / start_processes: run fn(i, *args) in nprocs processes and join them (torch.multiprocessing.spawn).

    def train(rank, world_size):
        ...
    rt.multiprocessing.spawn(train, args=(4,), nprocs=4)          # returns when all four have ended

    ctx = rt.multiprocessing.spawn(train, args=(4,), nprocs=4, join=False)
    while not ctx.join(timeout=1.0):
        print("still running:", ctx.pids())

When one process fails, the others are terminated (SIGTERM) and join() raises: ProcessRaisedException
(an exception escaped fn; its message carries the child's traceback) or ProcessExitedException (the
process exited non-zero or was killed by a signal; exit_code and signal_name say which).
"""
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import warnings

__all__ = ["ProcessContext", "ProcessException", "ProcessExitedException", "ProcessRaisedException", "SpawnContext",
           "spawn", "start_processes"]


class ProcessException(Exception):
    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """An exception escaped fn in process error_index; the message ends with its traceback."""


class ProcessExitedException(ProcessException):
    """Process error_index exited with a non-zero code or was killed by a signal."""
    __slots__ = ["exit_code"]

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


def _wrap(fn, i, args, error_file):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent is stopping everyone (SIGINT)
    except Exception:
        import traceback
        with open(error_file, "wb") as f:
            pickle.dump(traceback.format_exc(), f)
        sys.exit(1)


class ProcessContext:
    def __init__(self, processes, error_files):
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {process.sentinel: index for index, process in enumerate(processes)}

    def pids(self):
        return [int(process.pid) for process in self.processes]

    def join(self, timeout=None):
        """Waits up to `timeout` seconds (None: until something happens) for the processes. True when all have
        ended successfully, False while some still run; raises when one failed, after terminating the others."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        error_index = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            return not self.sentinels

        for process in self.processes:
            if process.is_alive():
                process.terminate()
            process.join()
        self.sentinels.clear()

        failed = self.processes[error_index]
        error_file = self.error_files[error_index]
        if not os.path.exists(error_file) or os.path.getsize(error_file) == 0:
            exitcode = failed.exitcode
            if exitcode < 0:
                name = signal.Signals(-exitcode).name
                raise ProcessExitedException(f"process {error_index} terminated with signal {name}",
                                             error_index=error_index, error_pid=failed.pid, exit_code=exitcode,
                                             signal_name=name)
            raise ProcessExitedException(f"process {error_index} terminated with exit code {exitcode}",
                                         error_index=error_index, error_pid=failed.pid, exit_code=exitcode)
        with open(error_file, "rb") as f:
            trace = pickle.load(f)
        msg = f"\n\n-- Process {error_index} terminated with the following error:\n{trace}"
        raise ProcessRaisedException(msg, error_index, failed.pid)

    def _remove_error_files(self):
        for path in self.error_files:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass


class SpawnContext(ProcessContext):
    """The ProcessContext of start_method="spawn" (torch's name, kept for code that checks it)."""


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Starts nprocs processes by `start_method` ("spawn", "fork" or "forkserver"), each calling fn(i, *args).
    join=True waits for all of them (raising on the first failure); join=False returns the ProcessContext."""
    mp = multiprocessing.get_context(start_method)
    error_files, processes = [], []
    for i in range(nprocs):
        fd, error_file = tempfile.mkstemp(prefix="rustytorch-mp-", suffix=".err")
        os.close(fd)
        os.unlink(error_file)  # only its name is needed: the child creates it when fn raises
        process = mp.Process(target=_wrap, args=(fn, i, args, error_file), daemon=daemon)
        process.start()
        error_files.append(error_file)
        processes.append(process)
    context = SpawnContext(processes, error_files) if start_method == "spawn" else ProcessContext(processes,
                                                                                                   error_files)
    if not join:
        return context
    try:
        while not context.join():
            pass
    finally:
        context._remove_error_files()
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """torch.multiprocessing.spawn: start_processes with the "spawn" start method (others warn, as torch does)."""
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      "To use a different start_method use:\n\t\t rustytorch.multiprocessing.start_processes(...)",
                      FutureWarning)
    return start_processes(fn, args=args, nprocs=nprocs, join=join, daemon=daemon, start_method=start_method)
