"""Storages read from a PyTorch checkpoint, the views tensors take of them, and where they are placed.

A `LoadedStorage` holds one storage record's raw elements as a writable numpy array. `view` checks that the
(offset, size, stride) a tensor asks for stays inside the record (a damaged or hostile file cannot make us read
past it), then returns a tensor that shares the record's memory on the CPU, so two tensors of one storage (tied
weights, views) share memory as in PyTorch. bfloat16 tensors and tensors moved to another device are copies.

`Placement` applies torch.load's map_location to a storage's saved location ("cpu", "cuda:0"): None keeps it,
a str/device sends everything there, a dict renames locations, and a callable gets (storage as a 1-D CPU tensor,
location) and returns a tensor whose device is used, or None for the default.
"""
import math

import numpy as np

import rustytorch as rt

from ._dtypes import raw_to_tensor


class LoadedStorage:
    def __init__(self, kind, raw, location, device, where):
        self.kind = kind
        self.raw = raw            # 1-D numpy array of raw elements, native byte order
        self.location = location  # as saved in the file
        self.device = device      # where its tensors go (after map_location)
        self.where = where        # what to name in errors

    def __len__(self):
        return self.raw.shape[0]

    def view(self, offset, size, stride):
        size, stride = _ints(size, "size", self.where), _ints(stride, "stride", self.where)
        if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
            raise ValueError(f"rt.load: {self.where}: tensor storage offset {offset!r} is not a non-negative int; "
                             "the file is damaged")
        if len(size) != len(stride):
            raise ValueError(f"rt.load: {self.where}: tensor size {tuple(size)} and stride {tuple(stride)} differ "
                             "in length; the file is damaged")
        if any(s < 0 for s in size) or any(s < 0 for s in stride):
            raise ValueError(f"rt.load: {self.where}: negative size or stride in {tuple(size)}/{tuple(stride)}; "
                             "the file is damaged")
        numel = math.prod(size)
        end = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1 if numel else offset
        if end > len(self):
            raise ValueError(f"rt.load: {self.where}: a tensor of size {tuple(size)}, stride {tuple(stride)} at "
                             f"offset {offset} needs {end} elements but its storage holds {len(self)}; the file is "
                             "damaged (reading it would go out of bounds)")
        item = self.raw.itemsize
        if any(s * item >= 1 << 62 for s in stride) or numel >= 1 << 62:
            raise ValueError(f"rt.load: {self.where}: tensor size {tuple(size)} / stride {tuple(stride)} is too "
                             "large to address; the file is damaged")
        base = self.raw[offset:] if numel else self.raw[:0]
        view = np.lib.stride_tricks.as_strided(base, shape=tuple(size), strides=tuple(s * item for s in stride),
                                               writeable=True)
        t = raw_to_tensor(view, self.kind)
        if self.device.type != "cpu":
            t = t.to(self.device)
        return t


def _ints(values, what, where):
    values = tuple(values) if isinstance(values, (tuple, list, rt.Size)) else None
    if values is None or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise ValueError(f"rt.load: {where}: tensor {what} is not a tuple of ints; the file is damaged")
    return values


def _device(value, where):
    try:
        device = value if isinstance(value, rt.device) else rt.device(str(value))
    except Exception as e:
        raise ValueError(f"rt.load: map_location {value!r} is not a device: {e}") from None
    if device.type == "cuda" and not rt.cuda.is_available():
        raise RuntimeError(f"rt.load: {where} holds tensors for '{device}', but CUDA is not available here "
                           f"({rt.cuda.unavailable_reason()}); pass map_location='cpu' to load them on the CPU")
    if device.type not in ("cpu", "cuda"):
        raise ValueError(f"rt.load: device '{device}' is not supported (rustytorch has cpu and cuda); pass "
                         "map_location='cpu'")
    return device


class Placement:
    def __init__(self, map_location, where):
        self.where = where
        self.map_location = map_location
        if isinstance(map_location, dict):
            self._map = {str(k): v for k, v in map_location.items()}
        elif map_location is None or callable(map_location) and not isinstance(map_location, rt.device):
            self._map = None
        else:
            _device(map_location, where)   # fail early on a bad device
            self._map = None

    def device(self, location, storage_tensor):
        """Where a storage saved at `location` goes; storage_tensor() makes it as a 1-D CPU tensor if needed."""
        m = self.map_location
        if m is None:
            return _device(location, self.where)
        if isinstance(m, dict):
            return _device(self._map.get(location, location), self.where)
        if callable(m) and not isinstance(m, rt.device):
            result = m(storage_tensor(), location)
            if result is None:
                return _device(location, self.where)
            if not isinstance(result, rt.Tensor):
                raise TypeError(f"rt.load: map_location callable returned {type(result).__name__}; return the "
                                "storage it was given (a 1-D tensor), moved where it should go, or None")
            return result.device
        return _device(m, self.where)


def storage_from_bytes(data, kind, numel, location, placement, where, big_endian=False):
    """A LoadedStorage over a record's bytes, after checking the record holds exactly numel elements."""
    expected = numel * kind.itemsize
    if len(data) != expected:
        raise ValueError(f"rt.load: {where}: the storage record has {len(data)} bytes, but the file says it holds "
                         f"{numel} {kind!r} elements ({expected} bytes); the file is damaged or truncated")
    raw = np.frombuffer(bytearray(data), dtype=kind.raw.newbyteorder(">" if big_endian else "<"))
    if big_endian and kind.itemsize > 1:
        raw = raw.astype(kind.raw.newbyteorder("="))
    elif raw.dtype.byteorder not in ("=", "|"):
        raw = raw.astype(kind.raw.newbyteorder("="))
    device = placement.device(location, lambda: raw_to_tensor(raw, kind))
    return LoadedStorage(kind, raw, location, device, where)


def storage_slice(storage, offset, size, where):
    """A legacy storage view: elements [offset, offset + size) of storage, sharing its memory."""
    if not (isinstance(offset, int) and isinstance(size, int) and 0 <= offset and 0 <= size
            and offset + size <= len(storage)):
        raise ValueError(f"rt.load: {where}: storage view [{offset!r}, +{size!r}) lies outside its storage of "
                         f"{len(storage)} elements; the file is damaged")
    return LoadedStorage(storage.kind, storage.raw[offset:offset + size], storage.location, storage.device, where)
