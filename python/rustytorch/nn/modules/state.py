"""state_dict() / load_state_dict() for Module, with PyTorch's key order, hooks and error texts."""
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

import rustytorch as rt

IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


def module_state_dict(module, destination, prefix, keep_vars):
    if destination is None:
        destination = OrderedDict()
        destination._metadata = OrderedDict()
    local_metadata = {"version": module._version}
    if hasattr(destination, "_metadata"):
        destination._metadata[prefix[:-1]] = local_metadata
    module._save_to_state_dict(destination, prefix, keep_vars)
    for name, child in module._modules.items():
        if child is not None:
            child.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
    for hook in module._state_dict_hooks.values():
        result = hook(module, destination, prefix, local_metadata)
        if result is not None:
            destination = result
    return destination


def load_from_state_dict(module, state_dict, prefix, strict, missing_keys, unexpected_keys, error_msgs):
    for hook in module._load_state_dict_pre_hooks.values():
        hook(state_dict, prefix, {}, strict, missing_keys, unexpected_keys, error_msgs)
    local_state = {k: v for k, v in module._parameters.items() if v is not None}
    local_state.update((k, v) for k, v in module._buffers.items()
                       if v is not None and k not in module._non_persistent_buffers_set)
    for name, param in local_state.items():
        key = prefix + name
        if key not in state_dict:
            if strict:
                missing_keys.append(key)
            continue
        source = state_dict[key]
        if not isinstance(source, rt.Tensor):
            error_msgs.append(f'While copying the parameter named "{key}", expected a rustytorch Tensor from '
                              f"checkpoint but received {type(source)}")
            continue
        if len(param.shape) == 0 and len(source.shape) == 1 and source.shape[0] == 1:
            source = source[0]
        if tuple(source.shape) != tuple(param.shape):
            error_msgs.append(f"size mismatch for {key}: copying a param with shape {list(source.shape)} from "
                              f"checkpoint, the shape in current model is {list(param.shape)}.")
            continue
        try:
            with rt.no_grad():
                param.copy_(source)
        except Exception as ex:  # the engine's own message says what went wrong
            error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                              f"{list(param.shape)} and whose dimensions in the checkpoint are "
                              f"{list(source.shape)}, an exception occurred : {ex.args}.")
    if strict:
        for key in state_dict.keys():
            if key.startswith(prefix):
                first = key[len(prefix):].split(".", 1)[0]
                if first not in module._modules and first not in local_state:
                    unexpected_keys.append(key)


def load_state_dict(root, state_dict, strict):
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    missing_keys, unexpected_keys, error_msgs = [], [], []
    state_dict = OrderedDict(state_dict)

    def load(module, local_state, prefix=""):
        module._load_from_state_dict(local_state, prefix, {}, True, missing_keys, unexpected_keys, error_msgs)
        for name, child in module._modules.items():
            if child is not None:
                child_prefix = prefix + name + "."
                load(child, {k: v for k, v in local_state.items() if k.startswith(child_prefix)}, child_prefix)
        for hook in module._load_state_dict_post_hooks.values():
            hook(module, IncompatibleKeys(missing_keys, unexpected_keys))

    load(root, state_dict)
    if strict:
        if unexpected_keys:
            error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in unexpected_keys)))
        if missing_keys:
            error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in missing_keys)))
    if error_msgs:
        raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
            type(root).__name__, "\n\t".join(error_msgs)))
    return missing_keys, unexpected_keys
