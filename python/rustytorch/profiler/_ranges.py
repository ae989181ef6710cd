"""record_function (user ranges) and counter (scalar values) for the profile."""
import functools
import inspect
import threading

from .. import _C

_P = _C._profiler

__all__ = ["record_function", "counter"]

_local = threading.local()


def _open_ranges():
    stack = getattr(_local, "ranges", None)
    if stack is None:
        stack = _local.ranges = []
    return stack


class record_function:
    """Names a region of code in the profile (torch.profiler.record_function):

        with rt.profiler.record_function("forward"):
            y = model(x)              # the ops run here nest inside "forward"

        @rt.profiler.record_function("train_step")
        def train_step(batch): ...

    Outside a recording profile it records nothing and costs little. A range belongs to the thread
    that opened it and ranges close innermost first; breaking either rule raises RuntimeError.
    As a decorator each call opens its own range (recursion and threads are fine)."""

    def __init__(self, name, args=None):
        if not isinstance(name, str):
            raise TypeError(f"record_function: name must be a str, got {type(name).__name__}")
        if args is not None:
            raise NotImplementedError("record_function(name, args=...): range arguments are not recorded by "
                                      "rustytorch's profiler; pass only the name (put the values in it if needed)")
        self.name = name
        self._range = None
        self._thread = None

    def __enter__(self):
        if self._range is not None:
            raise RuntimeError(f"record_function({self.name!r}) is already open; use a new record_function "
                               "object for each nested or concurrent range")
        self._range = _P.OpenRange(self.name)
        self._thread = threading.get_ident()
        _open_ranges().append(self)
        return self

    def __exit__(self, exc_type, exc, tb):
        self._close()
        return False

    def _close(self):
        if self._range is None:
            raise RuntimeError(f"record_function({self.name!r}) is not open (exited twice, or never entered)")
        if threading.get_ident() != self._thread:
            raise RuntimeError(f"record_function({self.name!r}) must close on the thread that opened it")
        stack = _open_ranges()
        if stack[-1] is not self:
            raise RuntimeError(f"record_function({self.name!r}) closed while the inner range "
                               f"{stack[-1].name!r} is still open; ranges close innermost first")
        stack.pop()
        handle, self._range = self._range, None
        handle.close()

    def __call__(self, fn):
        if not callable(fn):
            raise TypeError(f"record_function({self.name!r}) decorates a function, got {type(fn).__name__}")
        if inspect.isgeneratorfunction(fn) or inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
            raise TypeError(f"record_function({self.name!r}) cannot decorate the generator or async function "
                            f"{fn.__qualname__}: the range would end before its body runs; open "
                            "`with record_function(...)` inside it instead")
        name = self.name

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(name):
                return fn(*args, **kwargs)

        return wrapper

    def __repr__(self):
        state = "open" if self._range is not None else "closed"
        return f"record_function({self.name!r}, {state})"


def counter(name, value):
    """Logs a scalar (loss, learning rate, samples/s) into the recording profile; it shows as a
    counter track ("C" events) in the Chrome trace and is kept in the store. `value` is a number
    or a one-element tensor. Returns True when recorded, False when no profile records
    (like record_function, it is safe to leave in code that runs unprofiled)."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"counter: name must be a non-empty str, got {name!r}")
    number = _as_float(value, "counter")
    return _P.counter(name, number)


def _as_float(value, what):
    try:
        number = float(value.item() if hasattr(value, "item") else value)
    except (TypeError, ValueError, RuntimeError) as e:
        raise TypeError(f"{what}: value must be a number or a one-element tensor, got {type(value).__name__} "
                        f"({e})") from None
    return number
