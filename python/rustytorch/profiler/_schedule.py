"""torch.profiler's activities, schedule and trace handlers."""
import enum
import os
import socket
import time

__all__ = ["ProfilerActivity", "ProfilerAction", "schedule", "chrome_trace_handler", "tensorboard_trace_handler"]


class ProfilerActivity(enum.Enum):
    CPU = "CPU"    # engine ops, autograd nodes, record_function ranges, memory, counters
    CUDA = "CUDA"  # GPU kernels, memcpys and memsets through CUPTI (when built and a GPU is usable)


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


RECORDING_ACTIONS = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    """torch.profiler.schedule: after `skip_first` steps, cycles of `wait` idle steps, `warmup`
    steps and `active` recorded steps; the last active step of a cycle is RECORD_AND_SAVE (the
    window is stopped and handed to on_trace_ready). `repeat` cycles, or forever when 0.

    Warmup steps record nothing here: rustytorch's recorder needs no warm-up (PyTorch warms up
    CUPTI); the steps still count, so the same arguments select the same steps as in PyTorch."""
    for name, value in (("wait", wait), ("warmup", warmup), ("active", active), ("repeat", repeat),
                        ("skip_first", skip_first)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"schedule: {name} must be an int >= 0, got {value!r}")
    if active < 1:
        raise ValueError("schedule: active must be at least 1 (no step would ever be recorded)")
    cycle = wait + warmup + active

    def action(step):
        if step < 0:
            raise ValueError(f"schedule: step must be >= 0, got {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if repeat > 0 and step >= repeat * cycle:
            return ProfilerAction.NONE
        phase = step % cycle
        if phase < wait:
            return ProfilerAction.NONE
        if phase < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if phase < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


def chrome_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """on_trace_ready handler: writes each finished window as a Chrome trace
    `<dir_name>/<worker_name>.<time in ms>.pt.trace.json[.gz]` (PyTorch's file names; worker_name
    defaults to "<host>_<pid>"). Open the files in Perfetto or chrome://tracing."""
    dir_name = os.fspath(dir_name)
    worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"

    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        stamp = time.time_ns() // 1_000_000
        path = os.path.join(dir_name, f"{worker}.{stamp}.pt.trace.json" + (".gz" if use_gzip else ""))
        suffix = 1
        while os.path.exists(path):  # two windows in the same millisecond
            path = os.path.join(dir_name, f"{worker}.{stamp}_{suffix}.pt.trace.json" + (".gz" if use_gzip else ""))
            suffix += 1
        prof.export_chrome_trace(path)

    return handler


# PyTorch's name for the same files (TensorBoard's profile plugin reads Chrome traces in a directory).
tensorboard_trace_handler = chrome_trace_handler
