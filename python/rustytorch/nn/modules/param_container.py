"""ParameterList and ParameterDict (torch.nn): parameters held in a list or dict, registered with the
owning module so that parameters(), state_dict() and optimizers see them ("scales.0", "heads.cls").

    self.scales = rt.nn.ParameterList([rt.nn.Parameter(rt.ones(4)) for _ in range(3)])
    self.scales.append(rt.zeros(4))           # a plain Tensor is wrapped as a Parameter
    self.heads = rt.nn.ParameterDict({"cls": rt.nn.Parameter(rt.randn(8, 2))})
    self.heads["reg"] = rt.nn.Parameter(rt.randn(8, 1))

As in torch: entries may also be other objects (kept as plain attributes, not parameters); update()
from a plain dict adds its items in sorted key order, from an OrderedDict, a ParameterDict or a
sequence of (key, value) pairs in their own order. Neither container may be called.
"""
import operator
from collections import OrderedDict
from collections.abc import Iterable, Mapping

import rustytorch as rt

from ..parameter import Parameter
from .module import Module


def _as_parameter(value):
    if isinstance(value, rt.Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _entry_repr(key, value, type_name):
    """torch's line for one entry: the list shows the dtype, the dict the tensor type name."""
    if isinstance(value, rt.Tensor):
        kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
        size = "x".join(str(s) for s in value.shape)
        device = f" ({value.device})" if value.device.type != "cpu" else ""
        return f"  ({key}): {kind} containing: [{type_name(value)} of size {size}{device}]"
    return f"  ({key}): Object of type: {type(value).__name__}"


class ParameterList(Module):
    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def _key(self, idx):
        idx = operator.index(idx)
        if not -len(self) <= idx < len(self):
            raise IndexError(f"index {idx} is out of range for a ParameterList of length {len(self)}")
        return str(idx + len(self) if idx < 0 else idx)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)([self[i] for i in range(*idx.indices(len(self)))])
        return getattr(self, self._key(idx))

    def __setitem__(self, idx, value):
        setattr(self, self._key(idx), _as_parameter(value))

    def __len__(self):
        return self._size

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __iadd__(self, values):
        return self.extend(values)

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value):
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values):
        if not isinstance(values, Iterable) or isinstance(values, rt.Tensor):
            raise TypeError(f"ParameterList.extend should be called with an iterable, but got "
                            f"{type(values).__name__}")
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        return "\n".join(_entry_repr(i, value, lambda t: t.dtype) for i, value in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called: index it (self.params[0]) or iterate over it")


class ParameterDict(Module):
    def __init__(self, parameters=None):
        super().__init__()
        self._keys = OrderedDict()
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _check_key(key):
        if not isinstance(key, str):
            raise TypeError(f"Index given to ParameterDict cannot be used as a key as it is not a string (type is "
                            f"'{type(key).__name__}'); use string keys")
        return key

    def __getitem__(self, key):
        return getattr(self, self._check_key(key))

    def __setitem__(self, key, value):
        self._check_key(key)
        self._keys[key] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(list(self._keys))

    def __contains__(self, key):
        return key in self._keys

    def copy(self):
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        for key in list(self._keys):
            del self[key]

    def pop(self, key):
        value = self[key]
        del self[key]
        return value

    def popitem(self):
        if not self._keys:
            raise KeyError("popitem(): ParameterDict is empty")
        key = next(reversed(self._keys))
        return key, self.pop(key)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def fromkeys(self, keys, default=None):
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def update(self, parameters):
        if not isinstance(parameters, Iterable):
            raise TypeError(f"ParameterDict.update should be called with an iterable of key/value pairs, but got "
                            f"{type(parameters).__name__}")
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            pairs = list(parameters.items())
        elif isinstance(parameters, Mapping):
            pairs = sorted(parameters.items())
        else:
            pairs = []
            for j, pair in enumerate(parameters):
                if not isinstance(pair, Iterable) or isinstance(pair, (str, rt.Tensor)):
                    raise TypeError(f"ParameterDict update sequence element #{j} should be Iterable; is "
                                    f"{type(pair).__name__}")
                pair = tuple(pair)
                if len(pair) != 2:
                    raise ValueError(f"ParameterDict update sequence element #{j} has length {len(pair)}; 2 is "
                                     "required")
                pairs.append(pair)
        for key, value in pairs:
            self[key] = value

    def __or__(self, other):
        out = self.copy()
        out.update(other)
        return out

    def __ror__(self, other):
        out = other.copy()
        out.update(self)
        return out

    def __ior__(self, other):
        self.update(other)
        return self

    def extra_repr(self):
        return "\n".join(_entry_repr(k, value, lambda t: t.type()) for k, value in self.items())

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterDict should not be called: look a parameter up by key (self.params['w'])")
