"""rt.save / rt.load: checkpoints in PyTorch's own formats and in safetensors.

    rt.save(model.state_dict(), "model.pt")                     # PyTorch's zip format: torch.load reads it
    rt.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3}, "ckpt.pth")
    sd = rt.load("resnet18.pth")                                # written by torch.save; torch is not needed
    sd = rt.load(buffer, map_location="cpu")                    # open files and io.BytesIO work too
    rt.save(model.state_dict(), "model.safetensors")            # safetensors, our default for our own files

Which format rt.save writes:
  * a path ending in .pt, .pth, .ckpt, .bin, .tar, .pkl or .pickle, or any file object: PyTorch's zip format
    (what torch.save writes since 1.6), storing any picklable object as torch.save does;
  * _use_new_zipfile_serialization=True / False forces PyTorch's zip / legacy (pre-1.6) format;
  * any other path (".safetensors", or no suffix): safetensors, as rt.save always did (details below).
rt.load reads the format from the file's content (zip, legacy pickle, or safetensors), from a path or a file
object. map_location works as in torch.load: None (where the tensors were saved; 'cuda' needs a GPU), a str
or rt.device, a dict renaming locations ({"cuda:0": "cpu"}), or a callable (storage as a 1-D CPU tensor,
location) returning a tensor whose device is used, or None for the default.

weights_only (default True, as torch.load since 2.6): PyTorch files are pickles, and a pickle can run any
code. By default rt.load only rebuilds tensors, Parameters, containers (dict, OrderedDict, list, tuple, set),
numbers, strings, bytes, None, torch dtypes, torch.Size and torch.device; any other global is refused, by name,
before it is imported. add_safe_globals([cls, ...]) (or the safe_globals([...]) context manager) allows more.
weights_only=False imports and calls whatever the file names, as pickle does: only for files you trust.
Quantized, sparse, complex and int8/int16 tensors (dtypes rustytorch lacks) are refused with the dtype named.
Tensors that share a storage in the file share memory after loading (bfloat16 and non-CPU ones are copies);
rt.save writes tensors that lie inside another saved contiguous tensor (tied weights, views) as views of its
storage.

safetensors: a standard safetensors file (8-byte little-endian header length, JSON header, data).
A flat dict of str -> Tensor keeps its keys as the tensor names, so any safetensors reader sees
the state_dict. Anything nested has its tensors named by their path ("optim.state.0.exp_avg")
and its structure (dicts with str/int/float/bool/None keys, lists, tuples, str, int, float, bool,
None) stored as JSON in the header's __metadata__ under "rustytorch.structure". rt.load restores
that structure (a file without it loads as a dict of its tensors in file order). A tensor that
appears several times is stored once and comes back as one shared tensor; Parameters come back
as Parameters. Other objects raise TypeError naming where they are and what is supported.
"""
import io
import json
import math
import os
import pickle
import tempfile

import rustytorch as rt
from rustytorch import _C

from . import _torch_format as _tf
from ._torch_format import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals

__all__ = ["save", "load", "add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals"]

_STRUCTURE_KEY = "rustytorch.structure"
_FORMAT_KEY = "rustytorch.format"
_FORMAT_VERSION = "1"
_SUPPORTED = ("Tensors, dicts with str/int/float/bool/None keys, lists, tuples, str, int, float, bool and None "
              "(e.g. model.state_dict(), optimizer.state_dict(), or a dict of those); save to a .pt file to store "
              "any picklable object in PyTorch's format")


def _is_path(f):
    return isinstance(f, (str, bytes, os.PathLike))


def _path(f):
    return os.fsdecode(os.fspath(f))


def _tensor_entry(t, name):
    from .nn.parameter import Parameter
    entry = {"tensor": name}
    if isinstance(t, Parameter):
        entry["parameter"] = bool(t.requires_grad)
    elif t.requires_grad:
        entry["requires_grad"] = True
    return entry


class _Encoder:
    def __init__(self):
        self.tensors = {}
        self._names_by_id = {}

    def _tensor_name(self, t, path):
        known = self._names_by_id.get(id(t))
        if known is not None:
            return known
        base = ".".join(str(p) for p in path) or "tensor"
        name, n = base, 1
        while name in self.tensors or name == "__metadata__":
            name, n = f"{base}#{n}", n + 1
        self.tensors[name] = t.detach()
        self._names_by_id[id(t)] = name
        return name

    def encode(self, obj, path):
        if isinstance(obj, rt.Tensor):
            return _tensor_entry(obj, self._tensor_name(obj, path))
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return int(obj)
        if isinstance(obj, float):
            return obj if math.isfinite(obj) else {"float": repr(obj)}
        if isinstance(obj, dict):
            items = []
            for key, value in obj.items():
                if not (key is None or isinstance(key, (str, int, float, bool))):
                    where = ".".join(map(str, path)) or "<root>"
                    raise TypeError(f"rt.save: dict key {key!r} of type {type(key).__name__} at '{where}' cannot "
                                    f"be stored; supported: {_SUPPORTED}")
                items.append([self.encode(key, path), self.encode(value, path + [key])])
            return {"dict": items}
        if isinstance(obj, (list, tuple)):
            kind = "tuple" if isinstance(obj, tuple) else "list"
            return {kind: [self.encode(v, path + [i]) for i, v in enumerate(obj)]}
        where = ".".join(map(str, path)) or "<root>"
        raise TypeError(f"rt.save cannot store an object of type {type(obj).__name__} (at '{where}'); "
                        f"supported: {_SUPPORTED}")


def _is_flat_state_dict(obj):
    return isinstance(obj, dict) and all(isinstance(k, str) and isinstance(v, rt.Tensor) for k, v in obj.items())


def _save_safetensors(obj, path):
    if _is_flat_state_dict(obj):
        if "__metadata__" in obj:
            raise ValueError("rt.save: '__metadata__' is reserved by the safetensors format and cannot name a tensor")
        tensors = {k: v.detach() for k, v in obj.items()}
        structure = {"dict": [[k, _tensor_entry(v, k)] for k, v in obj.items()]}
    else:
        encoder = _Encoder()
        structure = encoder.encode(obj, [])
        tensors = encoder.tensors
    metadata = {_FORMAT_KEY: _FORMAT_VERSION, _STRUCTURE_KEY: json.dumps(structure, separators=(",", ":"))}
    _C._save_safetensors(path, tensors, metadata)


def _check_pickle_module(pickle_module, verb):
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError(f"rt.{verb}(pickle_module={getattr(pickle_module, '__name__', pickle_module)}): "
                                  "only the standard pickle module is supported")


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=None):
    """Save obj to f (a path or a binary file object); see the module docstring for which format is written."""
    _check_pickle_module(pickle_module, "save")
    fmt = _tf.save_format(f, _use_new_zipfile_serialization)
    if fmt == _tf.SAFETENSORS:
        if pickle_protocol is not None:
            raise ValueError(f"rt.save: pickle_protocol applies to PyTorch's format, but '{_path(f)}' is written as "
                             "safetensors (by its suffix); name it .pt/.pth to write PyTorch's format")
        _save_safetensors(obj, _path(f))
        return
    protocol = 2 if pickle_protocol is None else pickle_protocol
    if not isinstance(protocol, int) or not 2 <= protocol <= pickle.HIGHEST_PROTOCOL:
        raise ValueError(f"rt.save: pickle_protocol must be an int from 2 to {pickle.HIGHEST_PROTOCOL}, "
                         f"got {pickle_protocol!r}")
    if not _is_path(f) and not callable(getattr(f, "write", None)):
        raise TypeError(f"rt.save takes a file path or a binary file object with write(), got {type(f).__name__}")
    prepared = _tf.prepare(obj, protocol, legacy=fmt == _tf.LEGACY)   # an unpicklable obj fails here, no file touched
    if fmt == _tf.LEGACY:
        def write(out):
            _tf.write_legacy(prepared, out, protocol)
    else:
        def write(out):
            _tf.write_zip(prepared, out)
    if _is_path(f):
        with open(_path(f), "wb") as out:
            write(out)
    elif fmt == _tf.LEGACY or (getattr(f, "seekable", None) and f.seekable()):
        write(f)
    else:   # zipfile seeks back to finish each record's header
        buffer = io.BytesIO()
        write(buffer)
        f.write(buffer.getvalue())


def _decode(node, tensors, restored):
    if isinstance(node, list):
        raise ValueError("rt.load: malformed rustytorch.structure (a bare JSON list)")
    if not isinstance(node, dict):
        return node
    if "tensor" in node:
        name = node["tensor"]
        if name not in tensors:
            raise ValueError(f"rt.load: the file's structure refers to tensor '{name}', which the file does not "
                             "contain; the file is damaged or was edited")
        if name in restored:
            return restored[name]
        t = tensors[name]
        if "parameter" in node:
            from .nn.parameter import Parameter
            t = Parameter(t, requires_grad=bool(node["parameter"]))
        elif node.get("requires_grad"):
            t.requires_grad_(True)
        restored[name] = t
        return t
    if "float" in node:
        return float(node["float"])
    if "dict" in node:
        out = {}
        for key, value in node["dict"]:
            key = _decode(key, tensors, restored) if isinstance(key, dict) else key
            out[key] = _decode(value, tensors, restored)
        return out
    if "list" in node:
        return [_decode(v, tensors, restored) for v in node["list"]]
    if "tuple" in node:
        return tuple(_decode(v, tensors, restored) for v in node["tuple"])
    raise ValueError(f"rt.load: malformed rustytorch.structure entry {node!r}")


def _load_safetensors(path, placement):
    tensors, metadata = _C._load_safetensors(path)
    for name, t in tensors.items():
        device = placement.device("cpu", lambda: t)
        if device.type != "cpu":
            tensors[name] = t.to(device)
    structure = (metadata or {}).get(_STRUCTURE_KEY)
    if structure is None:
        return dict(tensors)
    version = metadata.get(_FORMAT_KEY)
    if version != _FORMAT_VERSION:
        raise ValueError(f"rt.load: '{path}' was written by a newer rustytorch (format {version}; this one reads "
                         f"format {_FORMAT_VERSION}); upgrade rustytorch to read it")
    try:
        node = json.loads(structure)
    except json.JSONDecodeError as e:
        raise ValueError(f"rt.load: '{path}' has a malformed rustytorch.structure entry in its metadata: {e}") from None
    return _decode(node, tensors, {})


def _load_safetensors_bytes(data, placement):
    with tempfile.TemporaryDirectory(prefix="rt-load-") as tmp:
        path = os.path.join(tmp, "checkpoint.safetensors")
        with open(path, "wb") as out:
            out.write(data)
        return _load_safetensors(path, placement)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Load a checkpoint written by torch.save (zip or legacy format) or rt.save (either, or safetensors).

    f: a path or a binary file object (open file, io.BytesIO). map_location: as torch.load (module docstring).
    weights_only: True by default; only tensors, containers and plain values are rebuilt, other globals are
    refused by name (allow them with add_safe_globals). weights_only=False runs whatever the file names:
    use it only for files you trust. pickle_load_args (e.g. encoding='latin1' for Python 2 files) go to the
    unpickler.
    """
    _check_pickle_module(pickle_module, "load")
    if mmap:
        raise NotImplementedError("rt.load(mmap=True): files are read into memory; pass mmap=False (or omit it)")
    weights_only = True if weights_only is None else bool(weights_only)
    pickle_kwargs = {"encoding": "utf-8", **pickle_load_args}
    if _is_path(f):
        path = _path(f)
        where = f"'{path}'"
        if not os.path.exists(path):
            raise FileNotFoundError(f"rt.load: no such file: '{path}'")
        placement = _tf.Placement(map_location, where)
        with open(path, "rb") as src:
            fmt = _tf.detect(src.read(512), where)
            if fmt == _tf.ZIP:
                src.seek(0)
                return _tf.read_zip(src, where=where, map_location=map_location, weights_only=weights_only,
                                    pickle_kwargs=pickle_kwargs)
            if fmt == _tf.LEGACY:
                src.seek(0)
                return _tf.read_legacy(src.read(), where=where, map_location=map_location,
                                       weights_only=weights_only, pickle_kwargs=pickle_kwargs)
        return _load_safetensors(path, placement)
    if not callable(getattr(f, "read", None)):
        raise TypeError(f"rt.load takes a file path or a binary file object with read(), got {type(f).__name__}")
    where = f"'{f.name}'" if isinstance(getattr(f, "name", None), str) else "the file object"
    if isinstance(f, io.TextIOBase):
        raise TypeError(f"rt.load: {where} is open in text mode; open it in binary mode ('rb')")
    data = f.read()
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"rt.load: {where} returned {type(data).__name__} from read(); open it in binary mode ('rb')")
    placement = _tf.Placement(map_location, where)
    fmt = _tf.detect(bytes(data[:512]), where)
    if fmt == _tf.ZIP:
        return _tf.read_zip(io.BytesIO(data), where=where, map_location=map_location, weights_only=weights_only,
                            pickle_kwargs=pickle_kwargs)
    if fmt == _tf.LEGACY:
        return _tf.read_legacy(bytes(data), where=where, map_location=map_location, weights_only=weights_only,
                               pickle_kwargs=pickle_kwargs)
    return _load_safetensors_bytes(data, placement)
