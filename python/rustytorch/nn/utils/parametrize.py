"""rt.nn.utils.parametrize: a module's tensor computed from other tensors on each access (torch.nn.utils.parametrize).

    class Symmetric(rt.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    P.register_parametrization(layer, "weight", Symmetric())
    layer.weight                                  # Symmetric()(layer.parametrizations.weight.original)
    layer.parametrizations.weight.original        # the Parameter the optimizer sees (same object as before)
    with P.cached():                              # each parametrized tensor computed once inside the block
        y = layer(x) + layer(x2)
    P.remove_parametrizations(layer, "weight")    # back to a plain Parameter holding the parametrized value

torch's mechanism, kept: the module's class is replaced by a subclass "Parametrized<Class>" that carries a
property per parametrized name; the parametrizations live in a ModuleDict child named "parametrizations", so
state_dict keys are "parametrizations.weight.original" (or original0, original1, ... when right_inverse returns
several tensors) plus each parametrization's own buffers ("parametrizations.weight.0._u"). Assigning
`module.weight = value` calls right_inverse down the list and stores the result in the originals in place.
Parametrized modules pickle only through state_dict (as torch); deepcopy works.
"""
import collections.abc
from contextlib import contextmanager
from copy import deepcopy

import rustytorch as rt

from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized", "remove_parametrizations",
           "type_before_parametrizations"]

_cache_enabled = 0
_cache = {}


@contextmanager
def cached():
    """Within the block, each parametrized tensor is computed on its first access and reused after."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _register_parameter_or_buffer(module, name, value):
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _store(original, value):
    """original takes value's contents and shape in place (torch's set_): the optimizer keeps the same object."""
    with rt.no_grad():
        if original.shape == value.shape:
            original.copy_(value)
        else:
            original.data = value.detach()


def _check_same(kind, got, shape, dtype):
    if got.dtype != dtype:
        raise ValueError(f"{kind} may not change the dtype of the tensor, unless the `unsafe` flag is enabled: "
                         f"{dtype} became {got.dtype}")
    if got.shape != shape:
        raise ValueError(f"{kind} may not change the shape of the tensor, unless the `unsafe` flag is enabled: "
                         f"{tuple(shape)} became {tuple(got.shape)}")


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order to the original(s); module.parametrizations[name]."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with rt.no_grad():
            new = original
            for module in reversed(list(self)):
                new = _right_inverse(module, new)
        if not isinstance(new, rt.Tensor) and not isinstance(new, collections.abc.Sequence):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                             f"Got {type(new).__name__}")
        self.is_tensor = isinstance(new, rt.Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}")
            _store(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, rt.Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                                     f"Got element {i} of the sequence with type {type(part).__name__}.")
                if isinstance(original, Parameter):
                    part = Parameter(part.detach(), original.requires_grad)
                else:
                    part = part.detach().requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", part)
        if not self.unsafe:
            value = self()
            if not isinstance(value, rt.Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(value).__name__}.")
            _check_same("Registering a parametrization", value, original_shape, original_dtype)

    def right_inverse(self, value):
        """module.weight = value: the originals become right_inverse(value) through the list, in place."""
        with rt.no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement right_inverse: "
                                       "define right_inverse(value) on it to allow assigning the tensor")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, rt.Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} while "
                                     f"`original` has dtype {self.original.dtype}")
                _store(self.original, value)
            else:
                if not isinstance(value, collections.abc.Sequence) or len(value) != self.ntensors:
                    raise ValueError(f"'right_inverse' must return a sequence of tensors of length {self.ntensors}. "
                                     f"Got {type(value).__name__}")
                for i, part in enumerate(value):
                    original_i = getattr(self, f"original{i}")
                    if not isinstance(part, rt.Tensor):
                        raise ValueError(f"`right_inverse` must return a sequence of tensors. Got element {i} of type "
                                         f"{type(part).__name__}")
                    if original_i.dtype != part.dtype:
                        raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype {part.dtype} while "
                                         f"`original{i}` has dtype {original_i.dtype}")
                    _store(original_i, part)

    def forward(self):
        modules = list(self)
        if self.is_tensor:
            x = modules[0](self.original)
        else:
            x = modules[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in modules[1:]:
            x = module(x)
        return x


def _right_inverse(module, value):
    """module.right_inverse(value), or value where the parametrization has none (or it raises
    NotImplementedError): right_inverse is then taken to be the identity, as torch does."""
    inverse = getattr(module, "right_inverse", None)
    if inverse is None:
        return value
    try:
        return inverse(value)
    except NotImplementedError:
        return value


def _refuse_pickle(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through state_dict(). See:\n"
                       "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
                       "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")


def _plain_deepcopy(self, memo):
    if id(self) in memo:
        return memo[id(self)]
    replica = self.__new__(type(self))
    memo[id(self)] = replica
    replica.__dict__ = deepcopy(self.__dict__, memo)
    return replica


def _inject_new_class(module):
    cls = type(module)
    members = {"__getstate__": _refuse_pickle}
    if not hasattr(cls, "__deepcopy__"):
        members["__deepcopy__"] = _plain_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), members)


def _inject_property(module, tensor_name):
    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), tensor_name)
        value = _cache.get(key)
        if value is None:
            value = _cache[key] = parametrization()
        return value

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(type(module), tensor_name, property(get_parametrized, set_original))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """module.<tensor_name> becomes parametrization(original); a second registration on the same name
    composes (applied after the first). unsafe=True skips the shape/dtype consistency checks."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            current = getattr(module, tensor_name)
            value = parametrization(current)
            if not isinstance(value, rt.Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(value).__name__}.")
            _check_same("Registering a parametrization", value, current.shape, current.dtype)
            if hasattr(parametrization, "right_inverse"):
                try:
                    inverse = parametrization.right_inverse(value)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(inverse, rt.Tensor):
                        raise ValueError(f"parametrization.right_inverse must return a tensor. Got: "
                                         f"{type(inverse).__name__}")
                    _check_same("parametrization.right_inverse", inverse, current.shape, current.dtype)
        parametrizations = module.parametrizations[tensor_name]
        parametrizations.append(parametrization)
        parametrizations.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        module.parametrizations[tensor_name] = parametrizations
        _inject_property(module, tensor_name)
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    return module


def is_parametrized(module, tensor_name=None):
    """Whether module has any parametrization (tensor_name None) or one on tensor_name."""
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo register_parametrization on tensor_name. leave_parametrized=True: the tensor keeps its current
    (parametrized) value, written into the original Parameter object; False: it gets the original back."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with rt.no_grad():
                value = getattr(module, tensor_name)
            _store(original, value)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized "
                             "in terms of a sequence of tensors.")
        value = getattr(module, tensor_name)  # with grad: whether it requires grad decides Parameter or buffer
        original = Parameter(value.detach(), True) if value.requires_grad else value.detach()
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module


def type_before_parametrizations(module):
    """The module's class before register_parametrization replaced it."""
    return type(module).__bases__[0] if is_parametrized(module) else type(module)
