"""Reading PyTorch's legacy checkpoint (torch.save before 1.6, or _use_new_zipfile_serialization=False).

Layout: five pickles and raw data, back to back:
  magic number 0x1950a86a20f9469cfc6c | protocol version 1001 | sys info {little_endian, type_sizes, ...}
  | the object pickle, persistent ids ('storage', torch.FloatStorage, key, location, numel, view_metadata)
  | the list of storage keys | per key: int64 element count, then the raw elements.
The element types live only in the object pickle, so it is first scanned without running anything
(see _unpickler.scan_storages), the storages read, and then the pickle loaded once for real.
"""
import io
import pickle
import struct

from ._storage import Placement, storage_from_bytes, storage_slice
from ._unpickler import CheckpointUnpickler, run, scan_storages, storage_id

MAGIC_NUMBER = 0x1950a86a20f9469cfc6c
PROTOCOL_VERSION = 1001


def _no_persistent(pid):
    raise pickle.UnpicklingError(f"rt.load: unexpected persistent id {pid!r} in a legacy checkpoint header")


def _plain(stream, where, what, pickle_kwargs):
    unpickler = CheckpointUnpickler(stream, weights_only=True, persistent_load=_no_persistent,
                                    where=f"{where} ({what})", **pickle_kwargs)
    return run(unpickler, f"{where} ({what})")


def read_legacy(data, *, where, map_location, weights_only, pickle_kwargs):
    stream = io.BytesIO(data)
    magic = _plain(stream, where, "magic number", pickle_kwargs)
    if magic != MAGIC_NUMBER:
        raise RuntimeError(f"rt.load: {where} starts with a pickle but not PyTorch's magic number, so it is not a "
                           "torch.save checkpoint")
    version = _plain(stream, where, "protocol version", pickle_kwargs)
    if version != PROTOCOL_VERSION:
        raise RuntimeError(f"rt.load: {where} has legacy protocol version {version!r}; this reader knows "
                           f"{PROTOCOL_VERSION}")
    sys_info = _plain(stream, where, "system info", pickle_kwargs)
    big_endian = isinstance(sys_info, dict) and sys_info.get("little_endian") is False

    object_start = stream.tell()
    used = scan_storages(stream, where, **pickle_kwargs)
    keys = _plain(stream, where, "storage keys", pickle_kwargs)
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise RuntimeError(f"rt.load: {where}: the storage key list is malformed; the file is damaged")

    placement = Placement(map_location, where)
    storages = {}
    for key in keys:
        if key not in used:
            raise RuntimeError(f"rt.load: {where}: storage '{key}' is listed but no tensor uses it; the file is "
                               "damaged")
        kind, location, numel = used[key]
        header = stream.read(8)
        if len(header) != 8:
            raise RuntimeError(f"rt.load: {where}: the file ends before storage '{key}'; it is truncated")
        (count,) = struct.unpack(">q" if big_endian else "<q", header)
        if count != numel:
            raise RuntimeError(f"rt.load: {where}: storage '{key}' has {count} elements in its record but {numel} "
                               "in the pickle; the file is damaged")
        body = stream.read(count * kind.itemsize) if count >= 0 else b""
        storages[key] = storage_from_bytes(body, kind, numel, location, placement, f"{where}, storage '{key}'",
                                           big_endian)
    missing = sorted(set(used) - set(storages))
    if missing:
        raise RuntimeError(f"rt.load: {where}: the pickle uses storages {missing} that the file does not hold; "
                           "it is damaged or truncated")

    def persistent_load(pid):
        if isinstance(pid, tuple) and len(pid) == 4 and pid[0] in ("module", b"module"):
            return pid[1]   # a pre-1.0 whole-module save: the class (already checked by find_class)
        kind, key, _, _, view = storage_id(pid, where)
        storage = storages[key]
        if storage.kind is not kind:
            raise RuntimeError(f"rt.load: {where}: storage '{key}' is used as both {storage.kind!r} and {kind!r}")
        if view is None:
            return storage
        if not (isinstance(view, tuple) and len(view) == 3):
            raise RuntimeError(f"rt.load: {where}: malformed storage view {view!r}; the file is damaged")
        view_key, offset, size = view
        if view_key not in views:
            views[view_key] = storage_slice(storage, offset, size, f"{where}, storage view '{view_key}'")
        return views[view_key]

    views = {}
    stream.seek(object_start)
    unpickler = CheckpointUnpickler(stream, weights_only=weights_only, persistent_load=persistent_load,
                                    where=where, **pickle_kwargs)
    return run(unpickler, where)
