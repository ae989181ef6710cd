"""Pickling objects the way torch.save does, with rustytorch tensors standing in for torch's.

A tensor pickles as `torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad,
OrderedDict())`, a Parameter as `torch._utils._rebuild_parameter(tensor, requires_grad, OrderedDict())`, a
dtype as the global `torch.float32`, rt.Size as `torch.Size`, rt.device as `torch.device`. Storages are
persistent ids ('storage', torch.FloatStorage, key, location, numel) whose bytes the writer stores apart.
Everything else pickles as pickle does (torch.save accepts any picklable object, and so do we).

Which storage a tensor views comes from `StorageLayout`: tensors whose memory lies inside a contiguous tensor
of the same object (tied weights, a tensor and its views) are written as views of that tensor's storage, so
they share in PyTorch too; every other tensor gets a contiguous storage of its own.
"""
import bisect
import collections
import pickle

import rustytorch as rt

from ._dtypes import kind_of, tensor_to_raw


class TorchGlobal:
    _cache = {}

    def __new__(cls, module, name):
        key = (module, name)
        if key not in cls._cache:
            obj = super().__new__(cls)
            obj.module, obj.name = module, name
            cls._cache[key] = obj
        return cls._cache[key]

    def __call__(self, *args):   # pickle's save_reduce wants a callable; this one only names torch's
        raise RuntimeError(f"{self.module}.{self.name} is PyTorch's; rustytorch only writes its name")


class StorageRecord:
    def __init__(self, tensor, kind, location):
        self.tensor = tensor        # contiguous tensor whose elements are the storage
        self.kind = kind
        self.location = location
        self.key = None

    def raw(self):
        t = self.tensor.detach()
        t = t if t.device.type == "cpu" else t.cpu()
        return tensor_to_raw(t.contiguous(), self.kind)


def _location(t):
    d = t.device
    return "cpu" if d.type == "cpu" else f"{d.type}:{d.index if d.index is not None else 0}"


def _contiguous_strides(size):
    strides, step = [], 1
    for n in reversed(size):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


class StorageLayout:
    """Assigns every tensor a (storage record, offset, size, stride)."""

    def __init__(self, tensors):
        self._placed = {}
        roots = {}   # (dtype, device) -> sorted [(start, end, record)]
        cpu = [t for t in tensors if t.device.type == "cpu" and t.numel() > 0]
        owners = sorted((t for t in cpu if t.is_contiguous()),
                        key=lambda t: (str(t.dtype), t.data_ptr(), -t.numel()))
        for t in owners:
            kind = kind_of(t.dtype)
            start, end = t.data_ptr(), t.data_ptr() + t.numel() * kind.itemsize
            group = roots.setdefault(str(t.dtype), [])
            if group and group[-1][0] <= start and end <= group[-1][1]:
                continue
            group.append((start, end, StorageRecord(t, kind, "cpu")))
        for t in tensors:
            self._placed[id(t)] = self._place(t, roots)

    def _place(self, t, roots):
        kind = kind_of(t.dtype)
        size, stride = tuple(t.shape), tuple(t.stride())
        if t.device.type == "cpu" and t.numel() > 0:
            group = roots.get(str(t.dtype), [])
            start = t.data_ptr()
            end = start + (sum((n - 1) * s for n, s in zip(size, stride)) + 1) * kind.itemsize
            i = bisect.bisect_right(group, start, key=lambda r: r[0]) - 1
            if i >= 0:
                r_start, r_end, record = group[i]
                if end <= r_end and (start - r_start) % kind.itemsize == 0:
                    return record, (start - r_start) // kind.itemsize, size, stride
        record = StorageRecord(t.detach().contiguous(), kind, _location(t))
        return record, 0, size, _contiguous_strides(size)

    def place(self, t):
        return self._placed[id(t)]


class _ParameterData:
    """A Parameter's data as the tensor inside `_rebuild_parameter`: same storage, requires_grad False."""

    def __init__(self, parameter):
        self.parameter = parameter


class CheckpointPickler(pickle._Pickler):
    """Pure-Python pickler (it lets us write torch's globals without importing torch)."""
    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file, protocol, layout, legacy=False):
        super().__init__(file, protocol)
        self._layout = layout
        self._legacy = legacy   # legacy persistent ids end with view metadata (always None here)
        self.records = []        # in key order

    def persistent_id(self, obj):
        if not isinstance(obj, StorageRecord):
            return None
        if obj.key is None:
            obj.key = str(len(self.records))
            self.records.append(obj)
        pid = ("storage", TorchGlobal("torch", obj.kind.storage), obj.key, obj.location, obj.tensor.numel())
        return pid + (None,) if self._legacy else pid

    def reducer_override(self, obj):
        if isinstance(obj, rt.Tensor):
            from ..nn.parameter import Parameter
            if isinstance(obj, Parameter):
                return (TorchGlobal("torch._utils", "_rebuild_parameter"),
                        (_ParameterData(obj), obj.requires_grad, collections.OrderedDict()))
            return self._rebuild_tensor(obj, obj.requires_grad)
        if isinstance(obj, _ParameterData):
            return self._rebuild_tensor(obj.parameter, False)
        if isinstance(obj, rt.Size):
            return (TorchGlobal("torch", "Size"), (tuple(obj),))
        if isinstance(obj, rt.device):
            return (TorchGlobal("torch", "device"), (str(obj),))
        return NotImplemented

    def _rebuild_tensor(self, t, requires_grad):
        record, offset, size, stride = self._layout.place(t)
        return (TorchGlobal("torch._utils", "_rebuild_tensor_v2"),
                (record, offset, size, stride, requires_grad, collections.OrderedDict()))

    def _save_global_name(self, obj, module, name):
        self.write(pickle.GLOBAL + module.encode("utf-8") + b"\n" + name.encode("utf-8") + b"\n")
        self.memoize(obj)

    def save_torch_global(self, obj):
        self._save_global_name(obj, obj.module, obj.name)

    def save_dtype(self, obj):
        self._save_global_name(obj, "torch", kind_of(obj).name)

    dispatch[TorchGlobal] = save_torch_global
    dispatch[type(rt.float32)] = save_dtype


class TensorCollector(pickle._Pickler):
    """A first pass over the object: finds every tensor (in pickling order), writes nothing anywhere."""
    dispatch = CheckpointPickler.dispatch

    def __init__(self, protocol):
        import io
        super().__init__(io.BytesIO(), protocol)
        self.tensors = []

    def persistent_id(self, obj):
        return None

    def reducer_override(self, obj):
        if isinstance(obj, rt.Tensor):
            self.tensors.append(obj)
            return (_noop, ())
        if isinstance(obj, (rt.Size, rt.device)):
            return (_noop, ())
        return NotImplemented

    save_torch_global = CheckpointPickler.save_torch_global
    save_dtype = CheckpointPickler.save_dtype
    _save_global_name = CheckpointPickler._save_global_name


def _noop(*args):
    return None
