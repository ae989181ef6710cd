"""rt.profiler: PyTorch's torch.profiler API over the engine's profiler (rt::prof).

    import rustytorch as rt
    from rustytorch.profiler import ProfilerActivity, profile, record_function

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True,
                 store="runs.sqlite") as prof:
        for x, y in loader:
            with record_function("train_step"):
                loss = loss_fn(model(x), y)
                loss.backward()
                opt.step()
            prof.add_counter("loss", loss.item())      # or rt.profiler.counter("loss", loss)
            rt.profiler.record_gradients(model)        # after backward: one gradient histogram per parameter
            prof.step()
    print(prof.key_averages(group_by_input_shape=True).table(sort_by="self_cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json.gz")          # Perfetto / chrome://tracing
    prof.export_memory_timeline("memory.html")         # .json / .json.gz: [times_us, sizes, categories]

Names follow torch.profiler: profile, record_function, ProfilerActivity, ProfilerAction, schedule,
tensorboard_trace_handler (here also chrome_trace_handler). Additions: counter(name, value) and
profile.add_counter log scalar values as counter tracks (Kineto's "C" events); profile(store=...)
keeps each recording in the SQLite session store; profile.collectives() lists the process groups'
collectives (group, sequence number, bytes, peer, call site, queue and run times);
record_gradients(model) (or profile(record_gradients=model) for every backward) records per-parameter gradient
histograms, read back with profile.gradient_histograms(); profile.session is the raw record model.
Not supported (each raises NotImplementedError when asked for): with_flops, Python call stacks
(group_by_stack_n), record_function args.
"""
from ._events import CollectiveEvent, EventList, FunctionEvent, FunctionEventAvg
from ._gradients import GradientHistogram, record_gradients
from ._profile import profile
from ._ranges import counter, record_function
from ._schedule import (ProfilerAction, ProfilerActivity, chrome_trace_handler, schedule,
                        tensorboard_trace_handler)

__all__ = ["profile", "record_function", "counter", "ProfilerActivity", "ProfilerAction", "schedule",
           "chrome_trace_handler", "tensorboard_trace_handler", "EventList", "FunctionEvent",
           "FunctionEventAvg", "CollectiveEvent", "is_profiling", "record_gradients", "GradientHistogram"]


def is_profiling():
    """Whether a profile records now in this process (any thread)."""
    from .. import _C
    return _C._profiler.profiling_active()
