"""Tags engine allocations with a memory category for the profiler (rt::MemoryCategoryGuard).

    with memory_category("optimizer_state"):
        state["exp_avg"] = rt.zeros_like(param)    # recorded as optimizer state, not a temporary

Categories: "parameter", "gradient", "activation", "optimizer_state", "temporary", "other".
"""
from contextlib import contextmanager

from . import _C


@contextmanager
def memory_category(name):
    guard = _C._profiler.OpenMemoryCategory(name)
    try:
        yield
    finally:
        guard.close()
