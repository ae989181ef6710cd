"""rt.profiler.profile: torch.profiler.profile over the engine's rt::prof::Session."""
import os
import sys
import warnings

from .. import _C
from ._events import EventList, FunctionEventAvg, build_collectives, build_events
from ._gradients import GradientHooks, build_gradient_histograms, hooked_parameters, record_gradients
from ._memory_timeline import write_memory_timeline
from ._ranges import _as_float
from ._schedule import RECORDING_ACTIONS, ProfilerAction, ProfilerActivity

_P = _C._profiler

__all__ = ["profile"]


class profile:
    """Records what the engine does, like torch.profiler.profile:

        with rt.profiler.profile(record_shapes=True, profile_memory=True) as prof:
            for batch in loader:
                train_step(batch)
                prof.step()
        print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
        prof.export_chrome_trace("step.json")          # .json.gz compresses
        prof.export_memory_timeline("memory.html")     # or .json / .json.gz

    Arguments (keyword only)
    - activities: ProfilerActivity.CPU and/or .CUDA. Default: CPU, plus CUDA when the CUPTI collector
      can run. CPU ops are always recorded; asking for CUDA where CUPTI cannot run warns with the reason.
    - schedule, on_trace_ready: torch.profiler.schedule(...) and a callback(prof) run when a recording
      window ends (see chrome_trace_handler). Without a schedule, everything from start to stop is one
      window, and on_trace_ready (if given) runs at stop.
    - record_shapes: inputs' shapes and dtypes (key_averages(group_by_input_shape=True)).
    - profile_memory: allocator events by category (export_memory_timeline).
    - with_stack / with_modules: the module scope of each op (FunctionEvent.scope, "net.encoder.0"):
      the dotted path of the engine's module scopes (rt::ModuleScope, which C++ nn modules push and
      Python code opens with _C._profiler.OpenModuleScope). Python call stacks are not recorded.
    - store: path of a SQLite session store (True: the default store, ~/.local/share/rustytorch/
      runs.sqlite). Each recording window streams into it while it records (a killed process leaves
      what was flushed, marked incomplete) and is finished at its end; session_id is its id there.
      The store numbers steps from 0 in each window and keeps the metadata known at its start
      (add_metadata after that reaches exports and prof.session only). Default None: memory only.
    - name: the session's name in the store and trace (default: the script's file name).
    - record_gradients: an nn.Module (or model.named_parameters(), or a dict) whose parameters' gradient
      histograms are recorded after every backward, like wandb.watch(model, log="gradients"): a hook on each
      parameter's gradient accumulator records norm, range, NaN/Inf counts and gradient_bins bins (default 32)
      while a window records, at the current step (gradient_histograms(); the store's GradientHistograms table;
      attached studios see them live). Costs one pass over each gradient per backward while recording; without
      it nothing is hooked. Hooks are placed at start() and disarmed at stop(). For a histogram per
      optimizer step with gradient accumulation, call prof.record_gradients(model) after the last backward
      instead.

    Results (key_averages, events, exports) describe the last finished window and are available after
    stop() / the `with` block, or inside on_trace_ready. Only one profile records at a time.
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False, store=None,
                 name=None, record_gradients=None, gradient_bins=32):
        if with_flops:
            raise NotImplementedError("profile(with_flops=True): FLOP counting is not implemented in "
                                      "rustytorch's profiler; drop with_flops")
        if schedule is not None and not callable(schedule):
            raise TypeError("profile: schedule must be a callable step -> ProfilerAction (torch.profiler.schedule)")
        if on_trace_ready is not None and not callable(on_trace_ready):
            raise TypeError("profile: on_trace_ready must be a callable taking the profile")
        self.activities = self._check_activities(activities)
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.record_shapes = bool(record_shapes)
        self.profile_memory = bool(profile_memory)
        self.with_stack = bool(with_stack or with_modules)
        self.store_path = self._store_path(store)
        self.name = name if name is not None else _default_name()
        self.session_id = None  # store id of the last saved window
        self.step_num = 0
        self._metadata = {}
        self._state = "created"  # created -> started -> stopped
        self._action = ProfilerAction.NONE
        self._session = None     # _C._profiler.Session of the open window
        self._window_first_step = 0
        self._data = None        # SessionData of the last finished window
        self._gradient_parameters = (None if record_gradients is None else
                                     hooked_parameters(record_gradients, gradient_bins))
        self._gradient_bins = gradient_bins
        self._gradient_hooks = None  # GradientHooks while started with record_gradients

    # -- lifecycle ---------------------------------------------------------------------------------

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        self.stop()
        return False

    def start(self):
        if self._state != "created":
            raise RuntimeError("profile.start: this profile was already started; create a new profile to "
                               "record again")
        if _P.profiling_active() and not _C._profiler.recording_session_gives_way():
            raise RuntimeError("profile.start: another profile is recording in this process (profiles do not "
                               "nest: one records at a time); stop it first, or use record_function for "
                               "nested regions")
        first = self._scheduled(0)
        self._state = "started"
        self.step_num = 0
        self._action = first
        if self._gradient_parameters is not None:
            self._gradient_hooks = GradientHooks(self._gradient_parameters, self._gradient_bins)
        if self._action in RECORDING_ACTIONS:
            try:
                self._begin_window()
            except BaseException:
                self._state = "stopped"
                self._remove_gradient_hooks()
                raise

    def stop(self):
        if self._state != "started":
            raise RuntimeError("profile.stop: the profile is not running"
                               + (" (it was already stopped)" if self._state == "stopped" else
                                  "; call start() first"))
        self._state = "stopped"
        self._remove_gradient_hooks()
        if self._session is not None:
            self._finish_window()

    def step(self):
        """Marks the end of a training step (ProfilerStep#N in the trace); drives the schedule."""
        if self._state != "started":
            raise RuntimeError("profile.step: the profile is not running; call step() inside the `with` block "
                               "or between start() and stop()")
        previous = self._action
        self.step_num += 1
        self._action = self._scheduled(self.step_num)
        if self._session is not None:
            if previous == ProfilerAction.RECORD_AND_SAVE or self._action not in RECORDING_ACTIONS:
                self._finish_window()
            else:
                self._session.step()
        if self._session is None and self._action in RECORDING_ACTIONS:
            self._begin_window()

    @property
    def recording(self):
        return self._session is not None

    # -- values logged by the program ------------------------------------------------------------

    def add_counter(self, name, value):
        """Logs a scalar (loss, lr, samples/s) at this time: a counter track in the trace and the store.
        Raises RuntimeError when this profile is not recording (use rt.profiler.counter to log
        unconditionally)."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"add_counter: name must be a non-empty str, got {name!r}")
        number = _as_float(value, "add_counter")
        if self._session is None:
            raise RuntimeError(f"add_counter({name!r}): this profile is not recording "
                               f"({self._why_not_recording()})")
        self._session.counter(name, number)

    def record_gradients(self, model, bins=32):
        """Records each parameter's gradient histogram at this step (TensorBoard's add_histogram for every
        parameter at once); call after backward. Returns how many were recorded. Raises RuntimeError when this
        profile is not recording (rt.profiler.record_gradients records only when a profile does)."""
        if self._session is None:
            raise RuntimeError(f"record_gradients: this profile is not recording ({self._why_not_recording()})")
        return record_gradients(model, bins)

    def add_metadata(self, key, value):
        """Adds a key/value string to the session (trace "rtSession" metadata and the store)."""
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError("add_metadata: key and value must be str (use add_metadata_json for other values)")
        self._metadata[key] = value
        if self._data is not None:
            self._data.set_metadata(key, value)

    def add_metadata_json(self, key, value):
        import json
        self.add_metadata(key, value if isinstance(value, str) else json.dumps(value))

    # -- results ---------------------------------------------------------------------------------

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """One row per op name (and input shapes when group_by_input_shape; needs record_shapes=True),
        sorted by total CPU time. .table(sort_by=..., row_limit=...) prints PyTorch's table."""
        if group_by_stack_n:
            raise NotImplementedError("key_averages(group_by_stack_n=...): Python call stacks are not recorded "
                                      "by rustytorch's profiler; group by name or input shape")
        data = self._finished("key_averages")
        if group_by_input_shape and not self.record_shapes:
            raise ValueError("key_averages(group_by_input_shape=True) needs profile(record_shapes=True)")
        return EventList(FunctionEventAvg(s) for s in data.key_averages(bool(group_by_input_shape)))

    def events(self):
        """Every recorded op, backward node and record_function range as FunctionEvents (start order)."""
        return build_events(self._finished("events"))

    def collectives(self):
        """Every collective and send/recv of a rustytorch.distributed process group that finished while the
        profile recorded, as CollectiveEvents in start order: name, group, seq, shape, dtype, bytes, peer,
        call_site, and enqueue/start/end times (the exported trace shows them on "collectives" tracks)."""
        return build_collectives(self._finished("collectives"))

    def gradient_histograms(self):
        """The gradient histograms recorded in the window (record_gradients), in time order: GradientHistogram
        objects with step, name, numel, norm, lo, hi, nan_count, inf_count, counts and bin_edges()."""
        return build_gradient_histograms(self._finished("gradient_histograms"))

    def total_average(self):
        return self.key_averages().total_average()

    def export_chrome_trace(self, path):
        """Writes the Chrome/Perfetto trace (.json, or gzip for .json.gz) and returns `path`."""
        data = self._finished("export_chrome_trace")
        _export_chrome(data, path)
        return path

    def export_memory_timeline(self, path, device=None):
        """Live memory per category over time: .json/.json.gz ([times_us, sizes, categories]) or .html
        (an SVG chart). device: None (all devices), "cpu", "cuda:N". Needs profile_memory=True."""
        data = self._finished("export_memory_timeline")
        if not self.profile_memory:
            raise RuntimeError("export_memory_timeline: the profile recorded no memory events; create it with "
                               "profile(profile_memory=True)")
        write_memory_timeline(data, path, device)

    @property
    def session(self):
        """The last finished window's record model (_C._profiler.SessionData; rt::prof::SessionData)."""
        return self._finished("session")

    # -- internals -------------------------------------------------------------------------------

    def _scheduled(self, step):
        if self.schedule is None:
            return ProfilerAction.RECORD
        action = self.schedule(step)
        if not isinstance(action, ProfilerAction):
            raise TypeError(f"profile: schedule({step}) returned {action!r}, not a ProfilerAction")
        return action

    def _begin_window(self):
        cupti = "auto" if ProfilerActivity.CUDA in self.activities else "off"
        session = _P.Session(record_shapes=self.record_shapes, profile_memory=self.profile_memory,
                             with_stack=self.with_stack, cupti=cupti, name=self.name, store=self.store_path)
        try:
            session.start()
        except RuntimeError as e:
            raise RuntimeError(f"profile: cannot start recording: {e}") from None
        self._session = session
        self._window_first_step = self.step_num
        if self.store_path is not None:
            self.session_id = session.store_session_id

    def _remove_gradient_hooks(self):
        hooks, self._gradient_hooks = self._gradient_hooks, None
        if hooks is not None:
            hooks.remove()

    def _finish_window(self):
        session, self._session = self._session, None
        data, store_error = session.stop()
        data.renumber_steps(self._window_first_step)
        for key, value in self._metadata.items():
            data.set_metadata(key, value)
        self._data = data
        self._warn_if_gpu_missing(data)
        if store_error is not None:
            raise RuntimeError(f"profile: the store {self.store_path} did not take the whole session "
                               f"({store_error}); the recording is complete in memory: key_averages() and the "
                               "exports still work")
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _finished(self, what):
        if self._session is not None:
            raise RuntimeError(f"profile.{what}: the profiler is still recording; call it after the `with` "
                               "block (or prof.stop()), or inside on_trace_ready")
        if self._data is None:
            reason = ("the profile was never started" if self._state == "created" else
                      "no step was recorded yet (the schedule has not reached an active step)")
            raise RuntimeError(f"profile.{what}: no trace to read: {reason}")
        return self._data

    def _why_not_recording(self):
        if self._state == "created":
            return "it was not started"
        if self._state == "stopped":
            return "it was stopped"
        return f"the schedule is in {self._action.name} at step {self.step_num}"

    def _warn_if_gpu_missing(self, data):
        note = data.metadata.get("cupti", "")
        if self._cuda_requested and note.startswith("off"):
            warnings.warn(f"profile: ProfilerActivity.CUDA was requested but GPU activity was not recorded: "
                          f"{note[4:].strip() or note}", RuntimeWarning, stacklevel=3)

    def _check_activities(self, activities):
        self._cuda_requested = activities is not None
        if activities is None:
            return {ProfilerActivity.CPU, ProfilerActivity.CUDA}
        result = set()
        for a in activities:
            if not isinstance(a, ProfilerActivity):
                raise TypeError(f"profile: activities must be ProfilerActivity values, got {a!r}")
            result.add(a)
        if not result:
            raise ValueError("profile: activities is empty; pass [ProfilerActivity.CPU] and/or "
                             "[ProfilerActivity.CUDA]")
        self._cuda_requested = ProfilerActivity.CUDA in result
        if ProfilerActivity.CPU not in result:
            warnings.warn("profile: CPU ops are always recorded by rustytorch's profiler "
                          "(activities without ProfilerActivity.CPU still record them)", RuntimeWarning, stacklevel=3)
        return result

    @staticmethod
    def _store_path(store):
        if store is None or store is False:
            return None
        if store is True:
            return _P.default_store_path()
        if isinstance(store, (str, os.PathLike)):
            return os.fspath(store)
        raise TypeError(f"profile: store must be a path, True (the default store) or None, got {type(store).__name__}")


def _export_chrome(data, path):
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"export_chrome_trace: path must be a str or os.PathLike, got {type(path).__name__}")
    data.export_chrome_trace(os.fspath(path))


def _default_name():
    script = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return script if script and script != "-c" else "python"
