"""PyTorch's checkpoint formats (torch.save/torch.load files) read and written without PyTorch.

    read_zip(fileobj, ...)    the zip archive torch.save writes since 1.6            (_read_zip)
    read_legacy(bytes, ...)   the older layout (_use_new_zipfile_serialization=False) (_read_legacy)
    prepare + write_zip/_legacy  the same formats, from rustytorch objects             (_write)
    detect(head)              which format a file is in, from its first bytes          (_detect)

Tensors are rebuilt by rustytorch's versions of torch's rebuild functions (_rebuild) over storages checked
against their records (_storage); the pickle runs through an unpickler that refuses every global outside an
allowlist unless weights_only=False (_unpickler, _globals). rustytorch.serialization is the public face.
"""
from ._detect import LEGACY, SAFETENSORS, TORCH_SUFFIXES, ZIP, detect, save_format
from ._globals import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals
from ._read_legacy import read_legacy
from ._read_zip import read_zip
from ._storage import Placement
from ._write import prepare, write_legacy, write_zip

__all__ = ["LEGACY", "SAFETENSORS", "TORCH_SUFFIXES", "ZIP", "detect", "save_format", "add_safe_globals",
           "clear_safe_globals", "get_safe_globals", "safe_globals", "read_legacy", "read_zip", "Placement",
           "prepare", "write_legacy", "write_zip"]
