"""What PyTorch's rebuild functions mean, done with rustytorch tensors (torch is never imported).

A checkpoint's pickle calls `torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad,
backward_hooks)` for each tensor and `torch._utils._rebuild_parameter(tensor, requires_grad, backward_hooks)`
for each Parameter; `torch._tensor._rebuild_from_type_v2(func, type, args, state)` wraps them for tensors
with Python attributes. These are the functions the unpickler hands out under those names.
"""
import rustytorch as rt

from ._storage import LoadedStorage


class StorageType:
    """Stands for `torch.FloatStorage` & co. inside a file's persistent ids."""

    def __init__(self, kind):
        self.kind = kind

    def __repr__(self):
        return f"torch.{self.kind.storage}"


class TensorType:
    """Stands for `torch.Tensor` / `torch.nn.Parameter` as `_rebuild_from_type_v2` names them."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


TENSOR = TensorType("torch.Tensor")
PARAMETER = TensorType("torch.nn.parameter.Parameter")


def _storage(storage, fn):
    if not isinstance(storage, LoadedStorage):
        raise TypeError(f"rt.load: {fn} got {type(storage).__name__} instead of a storage; the file is damaged")
    return storage


def _apply_hooks(t, backward_hooks):
    if backward_hooks:
        for hook in dict(backward_hooks).values():
            t.register_hook(hook)


def rebuild_tensor(storage, storage_offset, size, stride):
    return _storage(storage, "_rebuild_tensor").view(storage_offset, size, stride)


def rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    if metadata:
        raise NotImplementedError(f"rt.load: tensor metadata {sorted(metadata)} (torch._utils.set_tensor_metadata)"
                                  " is not supported")
    t = _storage(storage, "_rebuild_tensor_v2").view(storage_offset, size, stride)
    if requires_grad:
        t.requires_grad_(True)
    _apply_hooks(t, backward_hooks)
    return t


def rebuild_parameter(data, requires_grad, backward_hooks):
    from ..nn.parameter import Parameter
    if not isinstance(data, rt.Tensor):
        raise TypeError(f"rt.load: _rebuild_parameter got {type(data).__name__} instead of a tensor; the file is "
                        "damaged")
    p = Parameter(data, requires_grad=bool(requires_grad))
    _apply_hooks(p, backward_hooks)
    return p


def _set_state(obj, state):
    if state is None:
        return obj
    if isinstance(state, tuple) and len(state) == 2:   # (dict state, slots state)
        dict_state, slot_state = state
        for part in (dict_state, slot_state):
            for k, v in (part or {}).items():
                setattr(obj, k, v)
        return obj
    for k, v in dict(state).items():
        setattr(obj, k, v)
    return obj


def rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_state(rebuild_parameter(data, requires_grad, backward_hooks), state)


def rebuild_from_type_v2(func, new_type, args, state):
    from ..nn.parameter import Parameter
    ret = func(*args)
    if new_type is PARAMETER and not isinstance(ret, Parameter):
        ret = Parameter(ret, requires_grad=ret.requires_grad)
    elif new_type is not TENSOR and new_type is not PARAMETER:
        raise NotImplementedError(f"rt.load: tensor subclass {new_type!r} cannot be rebuilt; rustytorch rebuilds "
                                  "torch.Tensor and torch.nn.Parameter")
    return _set_state(ret, state)
