"""Writing PyTorch's checkpoint formats: the zip archive (what torch.save writes) and the legacy layout.

The zip archive holds `archive/data.pkl`, `archive/data/<key>` for each storage (stored uncompressed, the data
aligned to 64 bytes as PyTorch's writer does, via padding in an "FB" extra field) and `archive/version` ("3").
"""
import io
import pickle
import struct
import zipfile

from ._pickler import CheckpointPickler, StorageLayout, TensorCollector
from ._read_legacy import MAGIC_NUMBER, PROTOCOL_VERSION

_ALIGN = 64
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def prepare(obj, protocol=2, legacy=False):
    """(pickle bytes, storage records) for obj: everything that can fail, done before a file is touched."""
    collector = TensorCollector(protocol)
    collector.dump(obj)
    layout = StorageLayout(collector.tensors)
    out = io.BytesIO()
    pickler = CheckpointPickler(out, protocol, layout, legacy)
    pickler.dump(obj)
    return out.getvalue(), pickler.records


def _entry(zf, base, name, data):
    data = memoryview(data).cast("B")
    info = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = data.nbytes
    header = 30 + len(name.encode("utf-8")) + 4
    if data.nbytes * 1.05 > zipfile.ZIP64_LIMIT:
        header += 20   # zipfile adds a zip64 extra field to the local header
    pad = -(zf.start_dir - base + header) % _ALIGN
    info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    with zf.open(info, "w") as dest:
        dest.write(data)


def write_zip(prepared, fileobj, archive="archive"):
    pickled, records = prepared
    with zipfile.ZipFile(fileobj, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        base = zf.start_dir
        _entry(zf, base, f"{archive}/data.pkl", pickled)
        _entry(zf, base, f"{archive}/byteorder", b"little")
        for record in records:
            _entry(zf, base, f"{archive}/data/{record.key}", record.raw())
        _entry(zf, base, f"{archive}/version", b"3\n")


def write_legacy(prepared, fileobj, protocol=2):
    pickled, records = prepared
    sys_info = {"protocol_version": PROTOCOL_VERSION, "little_endian": True,
                "type_sizes": {"short": 2, "int": 4, "long": 4}}
    for header in (MAGIC_NUMBER, PROTOCOL_VERSION, sys_info):
        pickle.dump(header, fileobj, protocol=protocol)
    fileobj.write(pickled)
    pickle.dump([r.key for r in records], fileobj, protocol=protocol)
    for record in records:
        raw = record.raw()
        fileobj.write(struct.pack("<q", raw.shape[0]))
        fileobj.write(memoryview(raw).cast("B"))
