"""rt.save / rt.load: objects made of tensors, containers and plain values, stored as safetensors.

    rt.save(model.state_dict(), "model.safetensors")          # names -> tensors, as-is
    model.load_state_dict(rt.load("model.safetensors"))
    rt.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3}, "ckpt.safetensors")
    ckpt = rt.load("ckpt.safetensors")                          # same structure back; ckpt["epoch"] == 3

Format: a standard safetensors file (8-byte little-endian header length, JSON header, data).
A flat dict of str -> Tensor keeps its keys as the tensor names, so any safetensors reader sees
the state_dict. Anything nested has its tensors named by their path ("optim.state.0.exp_avg")
and its structure (dicts with str/int/float/bool/None keys, lists, tuples, str, int, float, bool,
None) stored as JSON in the header's __metadata__ under "rustytorch.structure". rt.load restores
that structure (a file without it loads as a dict of its tensors in file order). A tensor that
appears several times is stored once and comes back as one shared tensor; Parameters come back
as Parameters. Other objects raise TypeError naming where they are and what is supported.
"""
import json
import math
import os

import rustytorch as rt
from rustytorch import _C

__all__ = ["save", "load"]

_STRUCTURE_KEY = "rustytorch.structure"
_FORMAT_KEY = "rustytorch.format"
_FORMAT_VERSION = "1"
_SUPPORTED = ("Tensors, dicts with str/int/float/bool/None keys, lists, tuples, str, int, float, bool and None "
              "(e.g. model.state_dict(), optimizer.state_dict(), or a dict of those)")


def _path(f, verb):
    if isinstance(f, (str, bytes, os.PathLike)):
        return os.fspath(f) if not isinstance(f, bytes) else os.fsdecode(f)
    raise TypeError(f"rt.{verb} takes a file path (str or os.PathLike), got {type(f).__name__}; file objects are "
                    "not supported")


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


def save(obj, f):
    path = _path(f, "save")
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


def load(f, map_location=None, weights_only=None):
    path = _path(f, "load")
    if map_location not in (None, "cpu"):
        raise ValueError(f"rt.load(map_location={map_location!r}): tensors load on the CPU; move them afterwards "
                         "with .to(device)")
    if not os.path.exists(path):
        raise FileNotFoundError(f"rt.load: no such file: '{path}'")
    tensors, metadata = _C._load_safetensors(path)
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
