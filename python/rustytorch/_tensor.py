"""Python-side Tensor methods: the flexible-signature ones (to, register_hook, new_*),
Python protocols (iteration, pickling, copying, numpy) and repr."""
import copy as _copy
import weakref

import numpy as _np

from . import _C, _counting_ops, _functions, _index_ops, _product_ops, _rounding_ops, _shape_ops
from ._tensor_str import tensor_repr

Tensor = _C.Tensor


class RemovableHandle:
    """Returned by register_hook; `handle.remove()` unregisters the hook."""

    def __init__(self, tensor, handle):
        self._tensor = weakref.ref(tensor)
        self._handle = handle
        self.id = handle

    def remove(self):
        t = self._tensor()
        if t is not None and self._handle is not None:
            t._remove_hook(self._handle)
        self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _register_hook(self, hook):
    """Calls hook(grad) when this tensor's gradient is computed; it may return a replacement."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    return RemovableHandle(self, self._register_hook(hook))


def _parse_to(args, kwargs):
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    non_blocking = kwargs.pop("non_blocking", False)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    flags = []  # to(device, dtype, non_blocking, copy) positionally
    for a in args:
        if isinstance(a, (str, _C.device)):
            device = a
        elif isinstance(a, _C.dtype) or a in (float, int, bool):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, bool):
            flags.append(a)
        elif isinstance(a, int):
            device = _C.device("cuda", a)
        else:
            raise TypeError(f"to() received an invalid argument of type {type(a).__name__}")
    if flags:
        non_blocking = flags[0]
    if len(flags) > 1:
        copy = flags[1]
    return dtype, device, copy, bool(non_blocking)


def _to(self, *args, **kwargs):
    """to(dtype), to(device), to(other), to(device, dtype), copy=...: returns self when nothing changes.

    A device move is a differentiable copy (gradients flow back to the source device). Copies to a
    GPU are ordered on its current stream before any later op there. non_blocking=True: a copy from
    pinned memory (pin_memory()) to a GPU is only queued, so to() returns at once (don't write the
    source until the stream has done it); every other copy, those to the host included, is complete
    when to() returns."""
    dtype, device, copy, non_blocking = _parse_to(args, dict(kwargs))
    target = None if device is None else _C.device(device)
    if target is None or target == self.device:
        if dtype is None:
            return self.clone() if copy else self
        return self._to_dtype(dtype, copy)
    if dtype is None:
        return self._to_device(target, non_blocking=non_blocking)
    # Convert on the CPU side of the move: the CPU has every dtype conversion. A pinned source
    # moving with non_blocking=True keeps its asynchronous copy and converts on the GPU.
    if target.type == "cpu":
        return self._to_device(target)._to_dtype(dtype)
    if non_blocking and self.is_pinned():
        return self._to_device(target, non_blocking=True)._to_dtype(dtype)
    return self._to_dtype(dtype)._to_device(target)


def _cpu(self, memory_format=None):
    """A copy in CPU memory, or self when already there."""
    return self._to_device("cpu")


def _cuda(self, device=None, non_blocking=False, memory_format=None):
    """A copy on CUDA device `device` (None: the current device), or self when already there.
    non_blocking=True queues a copy from pinned memory without waiting (see to())."""
    if device is None:
        device = _C._cuda.current_device() if _C._cuda.is_available() else 0
    target = _C.device("cuda", device) if isinstance(device, int) else _C.device(device)
    if target.type != "cuda":
        raise ValueError(f"cuda(): expected a CUDA device, got {target}")
    return self._to_device(target, non_blocking=bool(non_blocking))


def _type(self, dtype=None, non_blocking=False):
    if dtype is None:
        return "rustytorch." + {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                                "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
                                "uint8": "ByteTensor", "bool": "BoolTensor"}[str(self.dtype).split(".")[1]]
    return self.to(dtype)


def _new(factory):
    def method(self, *size, dtype=None, device=None, requires_grad=False):
        if len(size) == 1 and not isinstance(size[0], int):
            size = tuple(size[0])
        return factory(size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)
    return method


def _new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
    return _C._full(size, fill_value, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


def _new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    return _C.tensor(data, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


def _iter(self):
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(self.unbind(0))


def _array(self, dtype=None):
    a = self.numpy()
    return a if dtype is None else a.astype(dtype, copy=False)


def _array_wrap(self, array, context=None, return_scalar=False):
    return _C.from_numpy(_np.ascontiguousarray(array))


def _rebuild(array, dtype, requires_grad, cls):
    t = _C.from_numpy(array).clone()
    if t.dtype != dtype:
        t = t.to(dtype)
    if cls is not Tensor:
        return Tensor._make_subclass(cls, t, requires_grad)
    return t.requires_grad_(requires_grad) if requires_grad else t


def _reduce_ex(self, protocol):
    t = self.detach()
    if t.dtype == _C.bfloat16:
        t = t.float()
    return (_rebuild, (t.numpy().copy(), self.dtype, self.requires_grad, type(self)), self.__dict__ or None)


def _setstate(self, state):
    if state:
        self.__dict__.update(state)


def _deepcopy(self, memo):
    if not self.is_leaf:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol "
                           "at the moment. If you were attempting to deepcopy a module, this may be because of a "
                           "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001")
    if id(self) in memo:
        return memo[id(self)]
    data = self.detach().clone()
    if type(self) is not Tensor:
        new = Tensor._make_subclass(type(self), data, self.requires_grad)
    else:
        new = data.requires_grad_(self.requires_grad)
    if self.grad is not None:
        new.grad = _copy.deepcopy(self.grad, memo)
    memo[id(self)] = new
    for k, v in self.__dict__.items():
        setattr(new, k, _copy.deepcopy(v, memo))
    return new


def _format(self, spec):
    if self.dim() == 0 and spec:
        return self.item().__format__(spec)
    return object.__format__(repr(self), spec)


def _contains(self, element):
    if isinstance(element, (Tensor, int, float, bool)):
        return bool((self == element).any().item())
    raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}.")


def _allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _functions.allclose(self, other, rtol, atol, equal_nan)


def _isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _functions.isclose(self, other, rtol, atol, equal_nan)


# Python-composed ops that torch also offers as Tensor methods (meshgrid, cartesian_prod, tensordot, einsum, cdist
# are not), and the modules that define them.
_COMPOSED_METHODS = ("flip", "fliplr", "flipud", "roll", "rot90", "diff", "diagonal", "diag", "diag_embed", "trace",
                     "tile", "repeat_interleave", "outer", "ger", "kron", "cross", "logaddexp", "hypot", "histc",
                     "bincount", "round", "trunc", "fix", "floor", "ceil", "frac", "round_", "trunc_", "fix_",
                     "floor_", "ceil_", "frac_", "narrow_copy", "index_fill", "index_copy", "masked_scatter",
                     "index_fill_", "index_copy_", "masked_scatter_", "unfold")
_COMPOSED_MODULES = (_shape_ops, _product_ops, _counting_ops, _rounding_ops, _index_ops)


def _install():
    methods = {
        "__repr__": tensor_repr,
        "__str__": tensor_repr,
        "__iter__": _iter,
        "__array__": _array,
        "__array_wrap__": _array_wrap,
        "__array_priority__": 1000,
        "__reduce_ex__": _reduce_ex,
        "__setstate__": _setstate,
        "__deepcopy__": _deepcopy,
        "__format__": _format,
        "__contains__": _contains,
        "register_hook": _register_hook,
        "to": _to,
        "cpu": _cpu,
        "cuda": _cuda,
        "type": _type,
        "new_full": _new_full,
        "new_tensor": _new_tensor,
        "allclose": _allclose,
        "is_shared": lambda self: False,
    }
    for name in _COMPOSED_METHODS:
        methods[name] = next(getattr(m, name) for m in _COMPOSED_MODULES if hasattr(m, name))
    methods["isclose"] = _isclose
    for name, fn in methods.items():
        setattr(Tensor, name, fn)
    Tensor.new_zeros = _new(lambda s, **kw: _C._zeros(s, **kw))
    Tensor.new_ones = _new(lambda s, **kw: _C._ones(s, **kw))
    Tensor.new_empty = _new(lambda s, **kw: _C._empty(s, **kw))
    Tensor.__module__ = "rustytorch"


_install()
