"""Module: the base class of every layer, with PyTorch's registration rules and traversal order.

    class Net(rt.nn.Module):
        def __init__(self):
            super().__init__()                  # must run before any attribute assignment
            self.fc = rt.nn.Linear(4, 3)        # a Module attribute registers as child "fc"
            self.scale = rt.nn.Parameter(rt.ones(3))   # a Parameter registers as "scale"
            self.register_buffer("count", rt.zeros((), dtype=rt.int64))
        def forward(self, x):
            return self.fc(x) * self.scale

    net = Net()
    net(x)                                       # pre-hooks, forward, forward hooks
    [n for n, _ in net.named_parameters()]      # ["scale", "fc.weight", "fc.bias"]
    net.load_state_dict(net.state_dict())       # strict: missing/unexpected keys raise

Contracts (those of torch.nn.Module):
- Assigning a Parameter or Module attribute registers it (replacing an entry of the same name);
  assigning a plain Tensor to a registered buffer name replaces the buffer; assigning a plain
  Tensor to a parameter name is a TypeError. Names are unique across parameters, buffers,
  children and ordinary attributes.
- Traversal is pre-order in registration order; shared tensors/modules are yielded once.
- state_dict() holds each module's parameters, then its persistent buffers, then children's,
  with dotted keys; values are detached aliases of the live tensors (keep_vars keeps them as
  they are). load_state_dict() copies values in place under no_grad.
"""
import functools
from collections import OrderedDict

import rustytorch as rt

from ..parameter import Parameter
from .conversion import TensorConversions
from ._backward_hooks import BackwardHook, register_legacy_hooks
from .hooks import RemovableHandle
from .state import IncompatibleKeys, load_from_state_dict, load_state_dict, module_state_dict
from ..._C._profiler import OpenModuleScope as _OpenModuleScope
from ..._memory import memory_category


def _name_scope(module, name):
    # The name a child runs under (rt::ModuleScope): "0", "fc1"; paths join as "encoder.0.fc1".
    # Containers that are indexed rather than called (ModuleList, ModuleDict) never open a scope
    # of their own, so their children carry the container's name: "blocks.0", as PyTorch names
    # them in named_modules() and the C++ ModuleList does.
    if module is None:
        return
    module.__dict__["_scope_name"] = name
    if getattr(module, "_scope_passthrough", False):
        for key, child in module._modules.items():
            _name_scope(child, f"{name}.{key}" if name else key)


def _child_scope(parent, name):
    """The scope name a child added to `parent` under `name` runs under."""
    if getattr(parent, "_scope_passthrough", False):
        prefix = parent.__dict__.get("_scope_name", "")
        return f"{prefix}.{name}" if prefix else name
    return name


def _addindent(text, num_spaces):
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * num_spaces + line for line in lines[1:])


def empty_tensor(shape, device=None, dtype=None):
    """An uninitialised tensor for a new parameter or buffer (device/dtype only when given)."""
    kwargs = {}
    if device is not None:
        kwargs["device"] = device
    if dtype is not None:
        kwargs["dtype"] = dtype
    return rt.empty(tuple(shape), **kwargs)


class Module(TensorConversions):
    dump_patches = False
    _version = 1
    training: bool

    def __init_subclass__(cls, **kwargs):
        # What a module allocates while it is constructed (its parameters and buffers) is
        # recorded as "parameter" memory by the profiler; see rustytorch/_memory.py.
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is None:
            return

        @functools.wraps(init)
        def __init__(self, *args, **kw):
            with memory_category("parameter"):
                init(self, *args, **kw)
        cls.__init__ = __init__

    def __init__(self):
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_is_full_backward_hook"] = None  # True: full hooks registered; False: legacy ones (they cannot mix)
        d["_state_dict_hooks"] = OrderedDict()
        d["_load_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_post_hooks"] = OrderedDict()

    # ---- running ----------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function; '
            "define forward(self, ...) in your subclass")

    def __call__(self, *args, **kwargs):
        d = self.__dict__
        for hook in list(self._forward_pre_hooks.values()):
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        backward_hook = None
        if d.get("_backward_hooks") or d.get("_backward_pre_hooks"):
            full = list(self._backward_hooks.values()) if self._is_full_backward_hook else []
            if full or self._backward_pre_hooks:
                backward_hook = BackwardHook(self, full, list(self._backward_pre_hooks.values()))
                args = backward_hook.setup_input_hook(args)
        scope = _OpenModuleScope(d.get("_scope_name", ""))  # module path in errors and the profiler
        try:
            output = self.forward(*args, **kwargs)
        finally:
            scope.close()
        for hook in list(self._forward_hooks.values()):
            result = hook(self, args, output)
            if result is not None:
                output = result
        if backward_hook is not None:
            output = backward_hook.setup_output_hook(output)
        if d.get("_backward_hooks") and self._is_full_backward_hook is False:
            register_legacy_hooks(self, args, output, list(self._backward_hooks.values()))
        return output

    def register_forward_pre_hook(self, hook):
        """hook(module, args) -> None or new args; runs before forward()."""
        handle = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle.id] = hook
        return handle

    def register_forward_hook(self, hook):
        """hook(module, args, output) -> None or a replacement output; runs after forward()."""
        handle = RemovableHandle(self._forward_hooks)
        self._forward_hooks[handle.id] = hook
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) -> None or a replacement grad_input; runs when the gradients with
        respect to the module's inputs are computed. grad_input/grad_output: one entry per positional input /
        output, None for non-tensors (see _backward_hooks.py). forward receives views of the tensor inputs, and
        the caller views of the outputs; do not modify them in place."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self._is_full_backward_hook = True
        return self._add_hook(self._backward_hooks, hook, prepend)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) -> None or a replacement grad_output; runs when the gradients with respect
        to the module's outputs are computed, before the full backward hooks (torch 2.0's API)."""
        return self._add_hook(self._backward_pre_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        """Deprecated in torch for register_full_backward_hook: hook(module, grad_input, grad_output) on the
        autograd node that made the module's first output, so grad_input are that node's input gradients
        (which differ from the module's inputs when forward runs several ops; a warning says so)."""
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self._is_full_backward_hook = False
        return self._add_hook(self._backward_hooks, hook, False)

    @staticmethod
    def _add_hook(hooks, hook, prepend):
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def _register_state_dict_hook(self, hook):
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def _register_load_state_dict_pre_hook(self, hook):
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_load_state_dict_post_hook(self, hook):
        """hook(module, incompatible_keys) after load_state_dict; may edit the key lists in place."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    # ---- registration -----------------------------------------------------------------------
    def _check_ready(self, what):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {what} before Module.__init__() call "
                                 f"(call super().__init__() first in {type(self).__name__}.__init__)")

    def _check_name(self, name, kind):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain ".", got: {name}')

    def register_parameter(self, name, param):
        self._check_ready("parameters")
        self._check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            "(rt.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                             "created explicitly; to express '{name}' as a function of another Tensor, "
                             "compute the value in the forward() method.")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, rt.Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(rt Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module
        _name_scope(module, _child_scope(self, name))

    register_module = add_module

    def get_submodule(self, target):
        mod = self
        for item in target.split(".") if target else []:
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def get_parameter(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._parameters:
            raise AttributeError(f"{mod._get_name()} has no parameter `{name}`")
        return mod._parameters[name]

    def __setattr__(self, name, value):
        def remove_from(*stores):
            for store in stores:
                if isinstance(store, set):
                    store.discard(name)
                elif name in store:
                    del store[name]

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            self._check_ready("parameters")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(rt.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            self._check_ready("module")
            remove_from(self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
            self._modules[name] = value
            _name_scope(value, _child_scope(self, name))
        elif self.__dict__.get("_modules") is not None and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                "(rt.nn.Module or None expected)")
            self._modules[name] = value
            _name_scope(value, _child_scope(self, name))
        elif self.__dict__.get("_buffers") is not None and name in self._buffers:
            if value is not None and not isinstance(value, rt.Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(rt Tensor or None expected)")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            store = d.get(key)
            if store is not None and name in store:
                return store[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(object.__dir__(self)) + list(self._parameters) + list(self._buffers) + list(self._modules)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    # ---- traversal --------------------------------------------------------------------------
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                seen.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def children(self):
        for _, m in self.named_children():
            yield m

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if remove_duplicate and id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub_prefix = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub_prefix, remove_duplicate)

    # ---- modes, gradients, conversion -------------------------------------------------------
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                p.grad.zero_()

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ---- state ------------------------------------------------------------------------------
    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if args:
            raise TypeError("state_dict() takes keyword arguments only (destination=, prefix=, keep_vars=)")
        return module_state_dict(self, destination, prefix, keep_vars)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        load_from_state_dict(self, state_dict, prefix, strict, missing_keys, unexpected_keys, error_msgs)

    def load_state_dict(self, state_dict, strict=True):
        missing, unexpected = load_state_dict(self, state_dict, strict)
        return IncompatibleKeys(missing, unexpected)

    # ---- printing ---------------------------------------------------------------------------
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            child_lines.append("(" + key + "): " + _addindent(repr(module), 2))
        lines = lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra.split("\n")) == 1 and not child_lines:
                main += extra
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"
