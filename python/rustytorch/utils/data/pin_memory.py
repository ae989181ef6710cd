"""pin_memory(batch): the batch with every tensor in pinned (page-locked) host memory, the
DataLoader's pin_memory=True step (torch.utils.data._utils.pin_memory.pin_memory).

    xb, yb = pin_memory((x, y))            # tuples, lists, dicts and namedtuples keep their type
    xb = xb.cuda(non_blocking=True)        # queued on the current stream, no wait

Tensors already pinned are returned as they are; strings, numbers and other objects pass through;
an object with a pin_memory() method (a custom batch class) is asked to pin itself."""
import collections.abc

import rustytorch as rt


def pin_memory(data):
    if isinstance(data, rt.Tensor):
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        pinned = {k: pin_memory(v) for k, v in data.items()}
        try:
            return type(data)(pinned)
        except TypeError:  # a mapping type that cannot be built from a dict
            return pinned
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return type(data)(*(pin_memory(x) for x in data))
    if isinstance(data, tuple):
        return tuple(pin_memory(x) for x in data)
    if isinstance(data, collections.abc.Sequence):
        pinned = [pin_memory(x) for x in data]
        try:
            return type(data)(pinned)
        except TypeError:
            return pinned
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    return data
