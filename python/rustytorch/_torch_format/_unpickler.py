"""Unpicklers for PyTorch checkpoints: the weights_only one (the default), the trusting one, and a scanner.

`CheckpointUnpickler` resolves every global through `find_class`, which is the only way a pickle reaches code:
PyTorch's names map to rustytorch's stand-ins (see _globals); with weights_only it accepts, besides them, only
DEFAULT_SAFE and what the user allowed, and refuses anything else by name before it exists. With
weights_only=False other globals are imported as pickle does (unsafe for untrusted files, as in PyTorch).
Storages come from `persistent_load`, which the reader supplies.

`scan_storages` reads a legacy checkpoint's object pickle without running anything (every global becomes an
inert placeholder) to learn each storage's dtype and size, which the legacy layout stores only in the pickle.
"""
import _compat_pickle
import pickle
import struct

from . import _globals
from ._rebuild import StorageType

REFUSED_HINT = ("pass weights_only=False only for files you trust, or allow it with "
                "rt.serialization.add_safe_globals([...])")


def _py3_name(module, name):
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


class CheckpointUnpickler(pickle.Unpickler):
    def __init__(self, file, *, weights_only, persistent_load, where, **kwargs):
        super().__init__(file, **kwargs)
        self._weights_only = weights_only
        self._persistent_load = persistent_load
        self._where = where

    def find_class(self, module, name):
        module, name = _py3_name(module, name)
        obj = _globals.torch_global(module, name)
        if obj is not None:
            return obj
        obj = _globals.user_safe(module, name)
        if obj is not None:
            return obj
        if not self._weights_only:
            return super().find_class(module, name)
        obj = _globals.DEFAULT_SAFE.get(f"{module}.{name}")
        if obj is not None:
            return obj
        raise pickle.UnpicklingError(
            f"rt.load: refused global '{module}.{name}' in {self._where}: weights_only loading accepts only tensors, "
            f"parameters, containers, numbers, strings and bytes; {REFUSED_HINT}")

    def persistent_load(self, pid):
        return self._persistent_load(pid)


def storage_id(pid, where):
    """(kind, key, location, numel, view) of a persistent id ('storage', type, key, location, numel[, view])."""
    if not isinstance(pid, tuple) or len(pid) not in (5, 6):
        raise pickle.UnpicklingError(f"rt.load: {where}: unknown persistent id {pid!r}; the file is damaged")
    tag = pid[0].decode("ascii") if isinstance(pid[0], bytes) else pid[0]
    if tag != "storage":
        raise pickle.UnpicklingError(f"rt.load: {where}: unknown persistent id type {tag!r} (this reader knows "
                                     "'storage'); the file is damaged or not a torch.save checkpoint")
    storage_type, key, location, numel = pid[1:5]
    view = pid[5] if len(pid) == 6 else None
    if not isinstance(storage_type, StorageType):
        raise pickle.UnpicklingError(f"rt.load: {where}: storage type {storage_type!r} is not a torch storage "
                                     "class; the file is damaged")
    key = key.decode("ascii") if isinstance(key, bytes) else key
    location = location.decode("ascii") if isinstance(location, bytes) else location
    if not isinstance(key, str) or not isinstance(location, str) or not isinstance(numel, int) or numel < 0:
        raise pickle.UnpicklingError(f"rt.load: {where}: malformed storage id {pid!r}; the file is damaged")
    return storage_type.kind, key, location, numel, view


def run(unpickler, where):
    """unpickler.load(), with a damaged pickle reported as such (our own refusals pass through unchanged)."""
    try:
        return unpickler.load()
    except pickle.UnpicklingError as e:
        if str(e).startswith("rt.load:"):
            raise
        raise pickle.UnpicklingError(f"rt.load: {where}: the pickle is damaged ({e})") from None
    except (EOFError, struct.error, UnicodeDecodeError, MemoryError) as e:
        raise pickle.UnpicklingError(f"rt.load: {where}: the pickle is damaged or truncated "
                                     f"({type(e).__name__}: {e})") from None


# [Section] the scanner for legacy files

class _Inert:
    """Whatever a global would have been; absorbs calls, state and items, runs nothing."""

    def __init__(self, *args, **kwargs):
        pass

    def __setstate__(self, state):
        pass

    def __setitem__(self, key, value):
        pass

    def append(self, item):
        pass

    def extend(self, items):
        pass


class _ScanningUnpickler(pickle.Unpickler):
    def __init__(self, file, where, **kwargs):
        super().__init__(file, **kwargs)
        self.storages = {}
        self._where = where

    def find_class(self, module, name):
        module, name = _py3_name(module, name)
        if module in ("torch", "torch.cuda") and name.endswith("Storage"):
            return _globals.torch_global(module, name)   # a StorageType, or an error naming the dtype
        return type(name, (_Inert,), {})

    def persistent_load(self, pid):
        if isinstance(pid, tuple) and len(pid) == 6 and pid[0] in ("storage", b"storage"):
            kind, key, location, numel, view = storage_id(pid, self._where)
            self.storages.setdefault(key, (kind, location, numel))
        return _Inert()


def scan_storages(file, where, **kwargs):
    """{key: (kind, location, numel)} for the storages the pickle at file's position refers to."""
    scanner = _ScanningUnpickler(file, where, **kwargs)
    run(scanner, where)
    return scanner.storages
