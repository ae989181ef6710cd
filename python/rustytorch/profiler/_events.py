"""What profile.events() and profile.key_averages() return: torch.autograd.profiler_util's
FunctionEvent, FunctionEventAvg and EventList, with PyTorch's attribute names. Times are in
microseconds (float), as in PyTorch."""
import json

from .. import _C

_P = _C._profiler

__all__ = ["CollectiveEvent", "EventList", "FunctionEvent", "FunctionEventAvg"]


def parse_shapes(text):
    """'[[64, 784], [784]]' -> [[64, 784], [784]]; a truncated list ('..., ...') keeps what was recorded."""
    if not text:
        return []
    cleaned = text.replace(", ...", "").replace("...", "")
    try:
        return json.loads(cleaned)
    except ValueError:
        raise ValueError(f"profiler: unreadable input shapes text {text!r}") from None


def parse_dtypes(text):
    inner = text.strip()[1:-1].strip() if text else ""
    return [d for d in (p.strip() for p in inner.split(",")) if d and d != "..."]


class FunctionEvent:
    """One recorded op, backward node or record_function range (PyTorch's FunctionEvent)."""

    __slots__ = ("id", "name", "thread", "start_ns", "end_ns", "scope", "input_shapes", "input_dtypes",
                 "sequence_nr", "depth", "kind", "correlation_id", "cpu_parent", "cpu_children",
                 "self_cpu_time_total", "self_device_time_total", "device_time_total")

    def __init__(self, id, name, start_ns, end_ns, thread, scope="", input_shapes=(), input_dtypes=(),
                 sequence_nr=-1, depth=0, kind="op", correlation_id=0):
        self.id, self.name, self.thread = id, name, thread
        self.start_ns, self.end_ns = start_ns, end_ns
        self.scope = scope
        self.input_shapes, self.input_dtypes = list(input_shapes), list(input_dtypes)
        self.sequence_nr, self.depth, self.kind, self.correlation_id = sequence_nr, depth, kind, correlation_id
        self.cpu_parent = None
        self.cpu_children = []
        self.self_cpu_time_total = self.cpu_time_total
        self.self_device_time_total = 0.0
        self.device_time_total = 0.0

    key = property(lambda self: self.name)
    count = property(lambda self: 1)
    cpu_time_total = property(lambda self: (self.end_ns - self.start_ns) / 1e3)
    cpu_time = cpu_time_total
    time_range = property(lambda self: _Interval(self.start_ns / 1e3, self.end_ns / 1e3))
    is_user_annotation = property(lambda self: self.kind == "user_annotation")
    is_backward = property(lambda self: self.kind == "backward")
    # PyTorch's older names for device time.
    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time_total={self.cpu_time_total:.3f}us self_cpu_time_total={self.self_cpu_time_total:.3f}us "
                f"input_shapes={self.input_shapes}>")


class CollectiveEvent:
    """One collective or send/recv of a rustytorch.distributed process group that finished while the profile
    recorded: issued at enqueue_ns by `thread`, started by the backend at start_ns (gloo's worker took it up;
    the other backends start it as it is issued), finished at end_ns. time_range is start to end."""

    __slots__ = ("name", "group", "seq", "shape", "dtype", "numel", "bytes", "peer", "point_to_point",
                 "call_site", "enqueue_ns", "start_ns", "end_ns", "thread")

    def __init__(self, name, group, seq, shape, dtype, numel, bytes, peer, point_to_point, call_site,
                 enqueue_ns, start_ns, end_ns, thread):
        self.name, self.group, self.seq = name, group, seq
        self.shape = parse_shapes(shape)
        self.dtype, self.numel, self.bytes, self.peer = dtype, numel, bytes, peer
        self.point_to_point, self.call_site = point_to_point, call_site
        self.enqueue_ns, self.start_ns, self.end_ns, self.thread = enqueue_ns, start_ns, end_ns, thread

    time_range = property(lambda self: _Interval(self.start_ns / 1e3, self.end_ns / 1e3))
    queued_us = property(lambda self: (self.start_ns - self.enqueue_ns) / 1e3)
    duration_us = property(lambda self: (self.end_ns - self.start_ns) / 1e3)

    def __repr__(self):
        peer = f" peer={self.peer}" if self.peer >= 0 else ""
        site = f" at {self.call_site}" if self.call_site else ""
        return (f"<CollectiveEvent {self.name}({self.shape} {self.dtype}{peer}) group={self.group!r} seq={self.seq} "
                f"bytes={self.bytes} duration={self.duration_us:.1f}us{site}>")


def build_collectives(data):
    return [CollectiveEvent(*row) for row in data.collectives()]


class _Interval:
    __slots__ = ("start", "end")

    def __init__(self, start, end):
        self.start, self.end = start, end

    def elapsed_us(self):
        return self.end - self.start


class FunctionEventAvg:
    """One row of key_averages(): every event with the same name (and input shapes when grouped)."""

    def __init__(self, stats):
        self._stats = stats  # _C._profiler.OpStats

    key = property(lambda self: self._stats.name)
    count = property(lambda self: self._stats.calls)
    cpu_time_total = property(lambda self: self._stats.total_ns / 1e3)
    self_cpu_time_total = property(lambda self: self._stats.self_ns / 1e3)
    cpu_time = property(lambda self: self._stats.total_ns / 1e3 / max(self._stats.calls, 1))
    device_time_total = property(lambda self: self._stats.device_total_ns / 1e3)
    self_device_time_total = property(lambda self: self._stats.self_device_ns / 1e3)
    device_time = property(lambda self: self._stats.device_total_ns / 1e3 / max(self._stats.calls, 1))
    cuda_time_total, self_cuda_time_total, cuda_time = device_time_total, self_device_time_total, device_time
    # Bytes allocated minus freed while the op ran (profile_memory=True), as PyTorch reports them.
    cpu_memory_usage = property(lambda self: self._stats.cpu_memory_bytes)
    self_cpu_memory_usage = property(lambda self: self._stats.self_cpu_memory_bytes)
    device_memory_usage = property(lambda self: self._stats.device_memory_bytes)
    self_device_memory_usage = property(lambda self: self._stats.self_device_memory_bytes)
    cuda_memory_usage, self_cuda_memory_usage = device_memory_usage, self_device_memory_usage
    input_shapes = property(lambda self: parse_shapes(self._stats.input_shapes))

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} count={self.count} cpu_time_total={self.cpu_time_total:.3f}us "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us input_shapes={self.input_shapes}>")


class EventList(list):
    """A list of FunctionEvent or FunctionEventAvg with PyTorch's table()/key_averages()/total_average()."""

    def key_averages(self, group_by_input_shape=False):
        if all(isinstance(e, FunctionEventAvg) for e in self):
            if group_by_input_shape:
                raise ValueError("key_averages(group_by_input_shape=True): these rows are already averaged; "
                                 "call profile.key_averages(group_by_input_shape=True) instead")
            return EventList(self)
        return EventList(FunctionEventAvg(s) for s in _average(self, group_by_input_shape))

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        """PyTorch's profiler table. sort_by: cpu_time_total (default), self_cpu_time_total, cpu_time,
        count, cuda_time_total, self_cuda_time_total, cuda_time, cpu_memory_usage, self_cpu_memory_usage,
        cuda_memory_usage, self_cuda_memory_usage (device_* names are accepted too). With
        profile(profile_memory=True) the table has PyTorch's "CPU Mem" / "Self CPU Mem" columns."""
        if top_level_events_only:
            raise NotImplementedError("table(top_level_events_only=True) is not supported by rustytorch's profiler; "
                                      "filter events() by depth == 0 instead")
        rows = self.key_averages()
        key = _SORT_ALIASES.get(sort_by, sort_by) if sort_by is not None else "cpu_time_total"
        text = _P.format_table([r._stats for r in rows], key, -1 if row_limit is None else int(row_limit))
        return f"{header}\n{text}" if header else text

    def total_average(self):
        rows = self.key_averages()
        fields = ("calls", "self_ns", "total_ns", "self_device_ns", "device_total_ns", "self_cpu_memory_bytes",
                  "cpu_memory_bytes", "self_device_memory_bytes", "device_memory_bytes")
        total = _P.OpStats(name="Total", **{f: sum(getattr(r._stats, f) for r in rows) for f in fields})
        return FunctionEventAvg(total)

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def __str__(self):
        return self.table()


_SORT_ALIASES = {"device_time_total": "cuda_time_total", "self_device_time_total": "self_cuda_time_total",
                 "device_time": "cuda_time", "device_memory_usage": "cuda_memory_usage",
                 "self_device_memory_usage": "self_cuda_memory_usage"}


def _average(events, group_by_input_shape):
    groups = {}
    for e in events:
        key = (e.name, json.dumps(e.input_shapes) if group_by_input_shape else "")
        g = groups.setdefault(key, [0, 0.0, 0.0, 0.0, 0.0])
        g[0] += 1
        g[1] += e.self_cpu_time_total
        g[2] += e.cpu_time_total
        g[3] += e.self_device_time_total
        g[4] += e.device_time_total
    rows = [_P.OpStats(name=name, input_shapes=shapes, calls=g[0], self_ns=round(g[1] * 1e3),
                       total_ns=round(g[2] * 1e3), self_device_ns=round(g[3] * 1e3),
                       device_total_ns=round(g[4] * 1e3))
            for (name, shapes), g in groups.items()]
    rows.sort(key=lambda s: (-s.total_ns, s.name))
    return rows


def build_events(data):
    """FunctionEvents for every op of a finished session, linked to their parents and children
    (strict nesting per thread, rebuilt from the intervals)."""
    device_ns = data.device_ns_by_correlation()
    events = []
    open_by_thread = {}
    for i, (name, start, end, thread, scope, shapes, dtypes, seq, depth, kind, corr) in enumerate(data.ops()):
        e = FunctionEvent(i, name, start, end, thread, scope, parse_shapes(shapes), parse_dtypes(dtypes),
                          seq, depth, kind, corr)
        e.self_device_time_total = device_ns.get(corr, 0) / 1e3 if corr else 0.0
        stack = open_by_thread.setdefault(thread, [])
        while stack and end > stack[-1].end_ns:
            stack.pop()
        if stack:
            parent = stack[-1]
            e.cpu_parent = parent
            parent.cpu_children.append(e)
            parent.self_cpu_time_total -= (end - start) / 1e3
        stack.append(e)
        events.append(e)
    for e in reversed(events):  # children come after their parents: add device time bottom-up
        e.device_time_total += e.self_device_time_total
        if e.cpu_parent is not None:
            e.cpu_parent.device_time_total += e.device_time_total
    return EventList(events)
