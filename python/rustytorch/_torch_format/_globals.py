"""The globals a checkpoint's pickle may name, and the allowlist behind `weights_only`.

`torch_global(module, name)` gives rustytorch's stand-in for a PyTorch name (rebuild functions, storage classes,
dtypes, torch.Size, torch.device), or raises for PyTorch objects rustytorch cannot rebuild. `DEFAULT_SAFE` are
the non-torch globals a weights_only load accepts (OrderedDict, set, frozenset, bytearray, complex, and
`_codecs.encode` restricted to what protocol 2 uses to store bytes). `add_safe_globals` lets the user allow more.
"""
import collections
import contextlib
import pickle

import rustytorch as rt

from . import _dtypes, _rebuild

_TORCH_FUNCTIONS = {
    "torch._utils._rebuild_tensor": _rebuild.rebuild_tensor,
    "torch._utils._rebuild_tensor_v2": _rebuild.rebuild_tensor_v2,
    "torch._utils._rebuild_parameter": _rebuild.rebuild_parameter,
    "torch._utils._rebuild_parameter_with_state": _rebuild.rebuild_parameter_with_state,
    "torch._tensor._rebuild_from_type_v2": _rebuild.rebuild_from_type_v2,
    "torch.Tensor": _rebuild.TENSOR,
    "torch._tensor.Tensor": _rebuild.TENSOR,
    "torch.nn.parameter.Parameter": _rebuild.PARAMETER,
    "torch.Size": rt.Size,
    "torch.device": rt.device,
}

_UNSUPPORTED_TORCH = {
    "torch._utils._rebuild_qtensor": "quantized tensors",
    "torch._utils._rebuild_sparse_tensor": "sparse tensors",
    "torch._utils._rebuild_sparse_csr_tensor": "sparse CSR tensors",
    "torch._utils._rebuild_meta_tensor_no_storage": "meta tensors",
    "torch._utils._rebuild_nested_tensor": "nested tensors",
    "torch._utils._rebuild_wrapper_subclass": "tensor wrapper subclasses",
    "torch._utils._rebuild_device_tensor_from_numpy": "XLA/device tensors",
    "torch._utils._rebuild_xla_tensor": "XLA tensors",
    "torch._utils._rebuild_mps_tensor": "MPS tensors",
}


def _latin1_encode(obj, encoding="latin1"):
    """`_codecs.encode` as pickle protocol 2 uses it for bytes: str -> bytes via latin-1, nothing else."""
    if not isinstance(obj, str) or encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError(f"rt.load: refused _codecs.encode({type(obj).__name__}, {encoding!r}); only "
                                     "the latin1 form pickle uses for bytes is allowed")
    return obj.encode("latin1")


DEFAULT_SAFE = {
    "collections.OrderedDict": collections.OrderedDict,
    "builtins.set": set,
    "builtins.frozenset": frozenset,
    "builtins.bytearray": bytearray,
    "builtins.complex": complex,
    "_codecs.encode": _latin1_encode,
}


def torch_global(module, name):
    """rustytorch's object for the PyTorch global module.name; None if module is not torch."""
    if module != "torch" and not module.startswith("torch."):
        return None
    full = f"{module}.{name}"
    if full in _TORCH_FUNCTIONS:
        return _TORCH_FUNCTIONS[full]
    if module in ("torch", "torch.cuda"):
        if name in _dtypes.BY_STORAGE:
            kind = _dtypes.BY_STORAGE[name]
            if kind.rt_dtype is None:
                raise pickle.UnpicklingError(
                    f"rt.load: the file holds {full} (dtype torch.{kind.name}), which rustytorch does not support "
                    f"(supported: {_dtypes.SUPPORTED_NAMES})")
            return _rebuild.StorageType(kind)
        if name in _dtypes.UNSUPPORTED_STORAGES:
            raise pickle.UnpicklingError(
                f"rt.load: the file holds {full} ({_dtypes.UNSUPPORTED_STORAGES[name]}), which rustytorch does not "
                f"support (supported dtypes: {_dtypes.SUPPORTED_NAMES})")
    if module == "torch":
        dtype_name = _dtypes.DTYPE_ALIASES.get(name, name)
        if dtype_name in _dtypes.BY_NAME:
            dtype = _dtypes.BY_NAME[dtype_name].rt_dtype
            if dtype is None:
                raise pickle.UnpicklingError(f"rt.load: the file names dtype torch.{name}, which rustytorch does not "
                                             f"support (supported: {_dtypes.SUPPORTED_NAMES})")
            return dtype
        if name in _dtypes.UNSUPPORTED_DTYPES:
            raise pickle.UnpicklingError(f"rt.load: the file names dtype torch.{name}, which rustytorch does not "
                                         f"support (supported: {_dtypes.SUPPORTED_NAMES})")
    if full in _UNSUPPORTED_TORCH:
        raise pickle.UnpicklingError(f"rt.load: the file holds {_UNSUPPORTED_TORCH[full]} ({full}), which rustytorch "
                                     "does not support")
    raise pickle.UnpicklingError(
        f"rt.load: the file stores the PyTorch object '{full}', which rustytorch cannot rebuild without PyTorch; "
        "save tensors, state_dicts and plain containers instead (e.g. torch.save(model.state_dict(), f) rather "
        "than torch.save(model, f))")


# [Section] user allowlist, as torch.serialization.add_safe_globals
_user_safe = {}


def _global_name(entry):
    if isinstance(entry, tuple):
        if len(entry) != 2 or not isinstance(entry[1], str):
            raise TypeError(f"add_safe_globals: a tuple entry is (object, 'module.name'), got {entry!r}")
        return entry[1], entry[0]
    module = getattr(entry, "__module__", None)
    name = getattr(entry, "__qualname__", None) or getattr(entry, "__name__", None)
    if not module or not name:
        raise TypeError(f"add_safe_globals: {entry!r} has no __module__/__qualname__; pass (object, 'module.name')")
    return f"{module}.{name}", entry


def add_safe_globals(safe_globals):
    """Allow these classes/functions in weights_only loads (objects, or (object, 'module.name') tuples)."""
    if not isinstance(safe_globals, (list, tuple, set)):
        raise TypeError(f"add_safe_globals takes a list of globals, got {type(safe_globals).__name__}")
    for entry in safe_globals:
        name, obj = _global_name(entry)
        _user_safe[name] = obj


def get_safe_globals():
    """The globals added with add_safe_globals (not the built-in allowlist)."""
    return list(_user_safe.values())


def clear_safe_globals():
    _user_safe.clear()


@contextlib.contextmanager
def safe_globals(globals_list):
    """Allow these globals for weights_only loads inside the with block only."""
    saved = dict(_user_safe)
    add_safe_globals(globals_list)
    try:
        yield
    finally:
        _user_safe.clear()
        _user_safe.update(saved)


def user_safe(module, name):
    return _user_safe.get(f"{module}.{name}")
