"""The variables panel's view of __main__ (module `_rtstudio_inspector`, compiled into rt_kernel).

Runs on the kernel's inspector thread with the GIL, also while a cell runs, so it only reads metadata:
shapes, dtypes, devices and sizes are attributes of the engine's tensors; no user __repr__ is called except
for scalars and str, and nothing is imported. Rows are plain tuples that variable_inspector.cpp converts:
    (name, kind, type_name, shape, dtype, device, bytes, requires_grad, parameter_count, value)
"""
import sys
import types

_MAX_VALUE = 100
_SCALARS = (bool, int, float, complex)
_TEXT = (str, bytes)
_COLLECTIONS = (list, tuple, dict, set, frozenset)
_HIDDEN = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType, type)


def _short(text):
    return text if len(text) <= _MAX_VALUE else text[:_MAX_VALUE - 3] + "..."


def _tensor_type():
    rt = sys.modules.get("rustytorch")
    return getattr(rt, "Tensor", None) if rt is not None else None


def _module_type():
    nn = sys.modules.get("rustytorch.nn")
    return getattr(nn, "Module", None) if nn is not None else None


def _ndarray_type():
    np = sys.modules.get("numpy")
    return getattr(np, "ndarray", None) if np is not None else None


def _dtype_name(dtype):
    text = str(dtype)
    for prefix in ("rustytorch.", "torch."):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


def _describe(name, value, tensor_t, module_t, ndarray_t):
    type_name = type(value).__name__
    if tensor_t is not None and isinstance(value, tensor_t):
        shape = [int(s) for s in value.shape]
        return (name, "tensor", type_name, shape, _dtype_name(value.dtype), str(value.device),
                int(value.numel()) * int(value.element_size()), bool(value.requires_grad), -1, "")
    if module_t is not None and isinstance(value, module_t):
        count = 0
        try:
            for p in value.parameters():
                count += int(p.numel())
        except Exception:
            count = -1
        return (name, "module", type_name, [], "", "", -1, False, count, "")
    if ndarray_t is not None and isinstance(value, ndarray_t):
        return (name, "array", type_name, [int(s) for s in value.shape], str(value.dtype), "cpu",
                int(value.nbytes), False, -1, "")
    if isinstance(value, _SCALARS):
        return (name, "scalar", type_name, [], "", "", -1, False, -1, _short(repr(value)))
    if isinstance(value, _TEXT):
        return (name, "text", type_name, [len(value)], "", "", len(value), False, -1, _short(repr(value)))
    if isinstance(value, _COLLECTIONS):
        return (name, "collection", type_name, [len(value)], "", "", -1, False, -1, "")
    if value is None:
        return (name, "other", "NoneType", [], "", "", -1, False, -1, "None")
    return (name, "other", type_name, [], "", "", -1, False, -1, "")


def snapshot():
    """Rows for every public, non-module/function/class name in __main__, sorted by name."""
    namespace = sys.modules["__main__"].__dict__
    items = list(namespace.items())  # a copy: the running cell may assign meanwhile
    tensor_t, module_t, ndarray_t = _tensor_type(), _module_type(), _ndarray_type()
    rows = []
    for name, value in items:
        if not isinstance(name, str) or name.startswith("_") or isinstance(value, _HIDDEN):
            continue
        try:
            rows.append(_describe(name, value, tensor_t, module_t, ndarray_t))
        except Exception as error:  # a broken object must not lose the whole snapshot
            rows.append((name, "other", type(value).__name__, [], "", "", -1, False, -1,
                         _short(f"<cannot inspect: {type(error).__name__}: {error}>")))
    rows.sort(key=lambda row: row[0])
    return rows


def tensor_stats(name):
    """(numel, min, max, mean, nan_count, inf_count) over a detached CPU copy; raises LookupError or
    TypeError with the message the panel shows."""
    namespace = sys.modules["__main__"].__dict__
    if name not in namespace:
        raise LookupError(f"no variable named '{name}' in the notebook's namespace")
    value = namespace[name]
    np = sys.modules.get("numpy")
    if np is None:
        import numpy as np  # noqa: F811 (rustytorch imports numpy, so this is rare)
    tensor_t = _tensor_type()
    if tensor_t is not None and isinstance(value, tensor_t):
        try:
            array = value.numpy(force=True)
        except TypeError:  # bfloat16: numpy has no such dtype
            array = value.detach().float().numpy(force=True)
    elif isinstance(value, np.ndarray):
        array = value
    else:
        raise TypeError(f"'{name}' is a {type(value).__name__}, not a tensor or array")
    numel = int(array.size)
    if numel == 0 or array.dtype.kind not in "biuf":
        if numel != 0:
            raise TypeError(f"'{name}' has dtype {array.dtype}: statistics need numbers")
        return (0, 0.0, 0.0, 0.0, 0, 0)
    if array.dtype.kind == "f":
        nan_count = int(np.count_nonzero(np.isnan(array)))
        inf_count = int(np.count_nonzero(np.isinf(array)))
        finite = array[np.isfinite(array)] if nan_count or inf_count else array
    else:
        nan_count = inf_count = 0
        finite = array
    if finite.size == 0:
        return (numel, 0.0, 0.0, 0.0, nan_count, inf_count)
    return (numel, float(finite.min()), float(finite.max()), float(finite.mean(dtype=np.float64)),
            nan_count, inf_count)
