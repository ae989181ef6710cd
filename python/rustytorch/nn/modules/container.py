"""Sequential, ModuleList and ModuleDict (torch.nn).

    mlp = rt.nn.Sequential(rt.nn.Linear(64, 128), rt.nn.ReLU(), rt.nn.Linear(128, 10))   # "0", "1", "2"
    named = rt.nn.Sequential(OrderedDict([("fc", rt.nn.Linear(4, 4)), ("act", rt.nn.ReLU())]))
    layers = rt.nn.ModuleList([rt.nn.Linear(8, 8) for _ in range(3)])    # no forward of its own
    heads = rt.nn.ModuleDict({"cls": rt.nn.Linear(8, 2), "reg": rt.nn.Linear(8, 1)})
"""
import operator
from collections import OrderedDict
from collections.abc import Mapping

from ... import _C
from .activation import GELU, ReLU, Sigmoid, SiLU, Tanh
from .linear import Linear
from .module import Module

# Note [Linear + activation in Sequential]
# A Linear followed by one of these activations runs as one _C._linear_pointwise (rt/ops/linear_pointwise.h:
# the bias and the activation in one pass over the output; the autograd graph node for node, and each op
# in its module's scope, as unfused), while rt.backends.cpu.fuse_linear_activation is True. Only the
# classes themselves count (a subclass may override forward), and only modules without hooks (a hook
# must see the Linear's own output, or may replace it). An input the Linear would reject goes through
# it, for its error message.
_FUSABLE = {ReLU: "relu", SiLU: "silu", Sigmoid: "sigmoid", Tanh: "tanh", GELU: "gelu"}


def _hookless(module):
    d = module.__dict__
    return not (d.get("_forward_pre_hooks") or d.get("_forward_hooks") or d.get("_backward_hooks")
                or d.get("_backward_pre_hooks"))


def _fusable_activation(linear, activation, input):
    """(name, approximate) of the activation when the pair can run fused, else None."""
    name = _FUSABLE.get(type(activation))
    if name is None or not _hookless(linear) or not _hookless(activation):
        return None
    if not isinstance(input, _C.Tensor) or input.dim() == 0 or input.shape[-1] != linear.in_features:
        return None
    return (name, activation.approximate if name == "gelu" else "none")


def _linear_then(linear, activation, kind, input):
    return _C._linear_pointwise(input, linear.weight, linear.bias, kind[0], kind[1],
                                linear.__dict__.get("_scope_name", ""), activation.__dict__.get("_scope_name", ""))


def _index(length, idx, kind):
    idx = operator.index(idx)
    if not -length <= idx < length:
        raise IndexError(f"index {idx} is out of range for a {kind} of length {length}")
    return idx + length if idx < 0 else idx


class Sequential(Module):
    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(len(self), idx, "Sequential")]

    def __setitem__(self, idx, module):
        key = list(self._modules.keys())[_index(len(self), idx, "Sequential")]
        setattr(self, key, module)

    def __delitem__(self, idx):
        keys = list(self._modules.keys())
        for key in keys[idx] if isinstance(idx, slice) else [keys[_index(len(self), idx, "Sequential")]]:
            delattr(self, key)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for module in modules:
            self.append(module)
        return self

    def insert(self, index, module):
        if not isinstance(module, Module):
            raise TypeError(f"module should be of type Module, got {type(module).__name__}")
        n = len(self)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        index = index + n if index < 0 else index
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m
        return self

    def forward(self, input):
        modules = list(self._modules.values())
        fuse = _C._backends.fuse_linear_activation()
        i = 0
        while i < len(modules):
            module = modules[i]
            if fuse and i + 1 < len(modules) and type(module) is Linear:
                kind = _fusable_activation(module, modules[i + 1], input)
                if kind is not None:
                    input = _linear_then(module, modules[i + 1], kind, input)
                    i += 2
                    continue
            input = module(input)
            i += 1
        return input


class ModuleList(Module):
    _scope_passthrough = True  # indexed, never called: see _name_scope

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(len(self), idx, "ModuleList"))]

    def __setitem__(self, idx, module):
        self.add_module(str(_index(len(self), idx, "ModuleList")), module)

    def __delitem__(self, idx):
        items = list(self._modules.values())
        if isinstance(idx, slice):
            del items[idx]
        else:
            del items[_index(len(self), idx, "ModuleList")]
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return type(self)(list(self) + list(other))

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        if isinstance(modules, (Module, Mapping)) or not hasattr(modules, "__iter__"):
            raise TypeError("ModuleList.extend should be called with an iterable of modules, "
                            f"but got {type(modules).__name__}")
        for module in modules:
            self.append(module)
        return self

    def insert(self, index, module):
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self.add_module(str(i), m)

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleList has no forward(): iterate over it and call each module, "
                                  "e.g. `for layer in self.layers: x = layer(x)`")


class ModuleDict(Module):
    _scope_passthrough = True

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        self._modules.clear()

    def pop(self, key):
        module = self[key]
        del self[key]
        return module

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        if isinstance(modules, Mapping):
            for key, module in modules.items():
                self[key] = module
            return
        for j, pair in enumerate(modules):
            if not hasattr(pair, "__len__") or len(pair) != 2:
                raise ValueError(f"ModuleDict update sequence element #{j} should be a (name, module) pair")
            self[pair[0]] = pair[1]

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleDict has no forward(): look a module up by name and call it")
