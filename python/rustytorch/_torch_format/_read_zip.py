"""Reading PyTorch's zip checkpoint (torch.save since 1.6).

Layout: one top folder (its name varies: "archive", or the file's stem) holding `data.pkl` (the object pickle,
whose persistent ids ('storage', torch.FloatStorage, key, location, numel) name storages), `data/<key>` (each
storage's raw elements), `version`, and, in newer files, `byteorder` ("little"/"big") and `.data/*`.
"""
import io
import zipfile

from ._storage import Placement, storage_from_bytes
from ._unpickler import CheckpointUnpickler, run, storage_id


def _top_folder(names, where):
    if any(n.endswith("/constants.pkl") or "/code/" in n for n in names):
        raise RuntimeError(f"rt.load: {where} is a TorchScript archive (torch.jit.save), which rustytorch cannot run;"
                           " save the model's state_dict with torch.save instead")
    pickles = [n for n in names if n.count("/") == 1 and n.endswith("/data.pkl")]
    if len(pickles) == 1:
        return pickles[0][:-len("data.pkl")]
    if not pickles:
        raise RuntimeError(f"rt.load: {where} is a zip file without a '<folder>/data.pkl' record, so it is not a "
                           "torch.save checkpoint")
    raise RuntimeError(f"rt.load: {where} holds several data.pkl records ({pickles}); the file is damaged")


def read_zip(fileobj, *, where, map_location, weights_only, pickle_kwargs):
    try:
        archive = zipfile.ZipFile(fileobj)
        names = archive.namelist()
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise RuntimeError(f"rt.load: {where} is not a complete zip archive (truncated or damaged): {e}") from None
    with archive:
        top = _top_folder(names, where)
        present = set(names)

        def record(name):
            try:
                return archive.read(top + name)
            except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:   # bad CRC, truncated entry
                raise RuntimeError(f"rt.load: {where}: record '{top}{name}' is damaged: {e}") from None

        if top + "version" not in present and top + ".data/version" not in present:
            raise RuntimeError(f"rt.load: {where} has no '{top}version' record; the file is damaged")
        big_endian = False
        if top + "byteorder" in present:
            order = record("byteorder").decode("ascii", "replace").strip()
            if order not in ("little", "big"):
                raise RuntimeError(f"rt.load: {where}: byteorder record says {order!r} (expected little or big)")
            big_endian = order == "big"

        placement = Placement(map_location, where)
        storages = {}

        def persistent_load(pid):
            kind, key, location, numel, _ = storage_id(pid, where)
            if key not in storages:
                name = f"data/{key}"
                if top + name not in present:
                    raise RuntimeError(f"rt.load: {where}: the pickle refers to storage '{key}' but the archive has "
                                       f"no '{top}{name}' record; the file is damaged")
                storages[key] = storage_from_bytes(record(name), kind, numel, location, placement,
                                                   f"{where}, storage '{key}'", big_endian)
            storage = storages[key]
            if storage.kind is not kind:
                raise RuntimeError(f"rt.load: {where}: storage '{key}' is used as both {storage.kind!r} and {kind!r}; "
                                   "the file is damaged")
            return storage

        unpickler = CheckpointUnpickler(io.BytesIO(record("data.pkl")), weights_only=weights_only,
                                        persistent_load=persistent_load, where=where, **pickle_kwargs)
        return run(unpickler, where)
