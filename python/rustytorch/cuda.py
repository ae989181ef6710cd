"""rt.cuda: CUDA devices, memory and events, with torch.cuda's names.

    if rt.cuda.is_available():
        x = rt.randn(4096, 4096, device="cuda")           # or rt.randn(...).cuda()
        start, end = rt.cuda.Event(enable_timing=True), rt.cuda.Event(enable_timing=True)
        start.record(); y = x @ x; end.record()
        end.synchronize()
        print(start.elapsed_time(end), "ms;", rt.cuda.memory_allocated(), "bytes in tensors")
    else:
        print(rt.cuda.unavailable_reason())                # not built, or no usable device, and the fix

Contracts: is_built, is_available, device_count, unavailable_reason and the memory counters never
raise (the counters read 0 without a device, as torch's do). Everything that needs a device raises
RuntimeError naming why CUDA is unusable. A `device` argument is None (the current device), an int,
"cuda", "cuda:N" or an rt.device of type cuda.

Streams, as in torch: ops run on the thread's current stream (the legacy default stream unless
`with rt.cuda.stream(s):` or set_stream chose another). Streams from rt.cuda.Stream() come from a
per-device pool and are non-blocking, so order work across streams with wait_stream/wait_event,
and call tensor.record_stream(s) for a tensor another stream uses, or its memory may be reused
while that stream still reads it:

    side = rt.cuda.Stream()
    side.wait_stream(rt.cuda.current_stream())     # x is ready before side reads it
    with rt.cuda.stream(side):
        y = x.relu()
    x.record_stream(side)
    rt.cuda.current_stream().wait_stream(side)     # y is ready for what follows

loss.backward() runs each node on the stream its forward op ran on (torch's rule), and the calling
stream waits for it at the end.
"""
import sys

from . import _C
from . import _cuda_amp as amp  # rt.cuda.amp (deprecated in torch too); importable as rustytorch.cuda.amp
from ._random import manual_seed as _manual_seed

sys.modules[__name__ + ".amp"] = amp

_cuda = _C._cuda
Event = _cuda.Event
Stream = _cuda.Stream

__all__ = ["is_available", "is_built", "device_count", "unavailable_reason", "current_device", "set_device",
           "get_device_name", "get_device_capability", "get_device_properties", "synchronize",
           "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats",
           "memory_stats", "memory_summary", "mem_get_info", "empty_cache", "manual_seed", "manual_seed_all",
           "set_allow_tf32", "Event", "Stream", "StreamContext", "stream", "set_stream", "current_stream",
           "default_stream", "device"]

Event.__module__ = __name__
Stream.__module__ = __name__
Stream.__doc__ = """A CUDA stream (torch.cuda.Stream): Stream(device=None, priority=0) hands out a
stream of the device's pool (32 per priority, non-blocking); priority < 0 asks for the highest.
synchronize() waits for the work queued on it, query() says whether it has finished,
wait_event(e) and wait_stream(s) make later work on it wait, record_event(e=None) records an
event on it and returns it. device, device_index, priority and cuda_stream (the cudaStream_t as an
int; 0 is the legacy default stream) describe it. Streams compare equal when they are the same."""
Event.__doc__ = """A CUDA event (torch.cuda.Event(enable_timing=False, blocking=False)):

    start = rt.cuda.Event(enable_timing=True); end = rt.cuda.Event(enable_timing=True)
    start.record(); ...; end.record(); end.synchronize(); ms = start.elapsed_time(end)

record(stream=None) marks the work queued on the stream (the current one by default), wait(stream=None)
makes later work on a stream wait for that mark, query() says whether the GPU got there,
synchronize() waits for it (sleeping instead of spinning with blocking=True), elapsed_time(end) is
milliseconds between two events recorded with enable_timing=True. Before its first record an event
counts as complete. Creating one without a usable device raises RuntimeError."""


def is_built():
    """True when this rustytorch was compiled with the CUDA backend (torch.backends.cuda.is_built)."""
    return _cuda.is_built()


def is_available():
    """True when CUDA is built and at least one device is usable; unavailable_reason() says why not."""
    return _cuda.is_available()


def device_count():
    """Number of usable CUDA devices: 0 without a build, driver or device."""
    return _cuda.device_count()


def unavailable_reason():
    """Why is_available() is False, naming what is missing and the fix ("" when it is True)."""
    return _cuda.unavailable_reason()


def _device_index(device, optional=True):
    """None -> -1 (the engine's "current device"), int / "cuda:N" / rt.device -> N."""
    if device is None:
        if optional:
            return -1
        raise ValueError("Expected a cuda device with a specified index or an integer, but got: None")
    if isinstance(device, bool):
        raise TypeError(f"device must be an int, a string like 'cuda:0' or an rt.device, not {device!r}")
    if isinstance(device, int):
        return device
    d = device if isinstance(device, _C.device) else _C.device(device)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return d.index


def current_device():
    """Index of the current CUDA device (raises RuntimeError when none is usable)."""
    return _cuda.current_device()


def set_device(device):
    """Makes `device` the current CUDA device; a negative index is ignored, as in torch."""
    index = _device_index(device, optional=False)
    if index >= 0:
        _cuda.set_device(index)


def get_device_properties(device=None):
    """name, major, minor (compute capability), total_memory (bytes), multi_processor_count."""
    return _cuda.device_properties(_device_index(device))


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    """(major, minor): (9, 0) for an H100/H200."""
    p = get_device_properties(device)
    return p.major, p.minor


def synchronize(device=None):
    """Waits until all work queued on `device` has finished."""
    _cuda.synchronize(_device_index(device))


def memory_allocated(device=None):
    """Bytes held by tensors on `device` (0 without a device, or on a device never used)."""
    return _cuda.memory_allocated(_device_index(device))


def max_memory_allocated(device=None):
    """Peak of memory_allocated(device) since the process started or reset_peak_memory_stats()."""
    return _cuda.max_memory_allocated(_device_index(device))


def memory_reserved(device=None):
    """Bytes the caching allocator holds on `device`, cached free blocks included."""
    return _cuda.memory_reserved(_device_index(device))


def max_memory_reserved(device=None):
    """Peak of memory_reserved(device) since the process started or reset_peak_memory_stats()."""
    return _cuda.max_memory_reserved(_device_index(device))


def reset_peak_memory_stats(device=None):
    _cuda.reset_peak_memory_stats(_device_index(device))


def memory_stats(device=None):
    """The caching allocator's counters under torch.cuda.memory_stats()' key names:
    allocated_bytes.all.{current,peak}, reserved_bytes.all.{current,peak}, segment.all.current,
    allocation.all.current, num_alloc_retries, num_ooms; and ours, pending_events: events on other
    streams that freed blocks wait for before reuse (record_stream). All 0 without a device."""
    return dict(_cuda.memory_stats(_device_index(device)))


def mem_get_info(device=None):
    """(free, total) bytes of `device` as the driver sees them; memory this process's allocator
    holds counts as used. Raises RuntimeError without a usable device."""
    return tuple(_cuda.mem_get_info(_device_index(device)))


def memory_summary(device=None, abbreviated=False):
    """A readable table of memory_stats(device) (torch.cuda.memory_summary's role)."""
    index = _device_index(device)
    stats = memory_stats(index)
    name = f"cuda:{index}" if index >= 0 else "the current CUDA device"

    def size(n):
        for unit in ("B", "KiB", "MiB", "GiB"):
            if n < 1024 or unit == "GiB":
                return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
            n /= 1024

    rows = [("Allocated memory", size(stats["allocated_bytes.all.current"])),
            ("Peak allocated memory", size(stats["allocated_bytes.all.peak"])),
            ("Reserved memory (cached included)", size(stats["reserved_bytes.all.current"])),
            ("Peak reserved memory", size(stats["reserved_bytes.all.peak"])),
            ("Live allocations", str(stats["allocation.all.current"])),
            ("Segments", str(stats["segment.all.current"])),
            ("Cache flushes before a retry", str(stats["num_alloc_retries"])),
            ("Out-of-memory errors", str(stats["num_ooms"])),
            ("Freed blocks awaiting other streams (events)", str(stats["pending_events"]))]
    width = max(len(k) for k, _ in rows)
    lines = [f"rustytorch CUDA memory summary, {name}"]
    lines += [f"  {k.ljust(width)}  {v}" for k, v in rows]
    return "\n".join(lines)


def current_stream(device=None):
    """The stream ops on `device` run on from this thread: the legacy default stream unless
    set_stream or `with stream(s):` chose another."""
    return _cuda.current_stream(_device_index(device))


def default_stream(device=None):
    """The legacy default stream of `device` (cuda_stream 0)."""
    return _cuda.default_stream(_device_index(device))


def set_stream(stream):
    """Makes `stream` this thread's current stream of its device (torch.cuda.set_stream); None
    changes nothing. Prefer `with rt.cuda.stream(s):`, which restores the previous one."""
    if stream is not None:
        _cuda.set_stream(stream)


class StreamContext:
    """Context manager behind rt.cuda.stream(s): makes `s` the current stream of its device, and
    that device the current one, for the block; restores both after. None changes nothing."""

    def __init__(self, stream):
        self.stream = stream
        self._saved = None

    def __enter__(self):
        s = self.stream
        if s is None:
            return None
        prev_device = _cuda.current_device()
        if prev_device != s.device_index:
            _cuda.set_device(s.device_index)
        self._saved = (prev_device, _cuda.current_stream(s.device_index))
        _cuda.set_stream(s)
        return s

    def __exit__(self, *exc):
        if self._saved is not None:
            prev_device, prev_stream = self._saved
            _cuda.set_stream(prev_stream)
            if prev_device != self.stream.device_index:
                _cuda.set_device(prev_device)
            self._saved = None
        return False


def stream(stream):
    """`with rt.cuda.stream(s):` runs the block's ops on stream `s` (torch.cuda.stream)."""
    return StreamContext(stream)


class device:
    """Context manager that makes `device` the current CUDA device and restores the previous one
    (torch.cuda.device). A negative index or None changes nothing."""

    def __init__(self, device):
        self.idx = _device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = current_device()
            if self.prev_idx != self.idx:
                _cuda.set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev_idx != self.idx:
            _cuda.set_device(self.prev_idx)
        return False


def empty_cache():
    """Returns cached free memory of every device to the driver; live tensors are untouched."""
    _cuda.empty_cache()


def manual_seed(seed):
    """Seeds the random numbers of CUDA tensors. The engine draws on every device from one Philox
    generator, so this is rt.manual_seed(seed): it seeds CPU draws too (unlike torch, where the
    CUDA generators are separate), and the same seed gives the same stream on any device."""
    _manual_seed(seed)


def manual_seed_all(seed):
    """Like manual_seed: the one Philox generator serves every device, so this is rt.manual_seed(seed)."""
    manual_seed(seed)


def set_allow_tf32(allow):
    """TF32 for float32 matrix products on CUDA (about 3e-4 relative error, several times faster);
    off by default. Same switch as rt.backends.cuda.matmul.allow_tf32."""
    _cuda.set_allow_tf32(bool(allow))
