"""default_collate: turns a list of samples into a batch (torch.utils.data.default_collate).

    default_collate([(x0, 3), (x1, 5)])          # [stack([x0, x1]), tensor([3, 5])]
    default_collate([{"a": 1.0}, {"a": 2.0}])    # {"a": tensor([1., 2.], dtype=float64)}

Tensors are stacked along a new dim 0; numpy arrays become tensors first (numpy scalars a tensor of
their dtype); Python floats become
float64, ints int64, bools bool; strings stay a list; dicts, namedtuples, tuples and lists are
collated field by field (tuples come back as lists, as in PyTorch). Anything else is a TypeError.
"""
import collections.abc
import numbers

import rustytorch as rt

_ERROR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _is_numpy_array(obj):
    return type(obj).__module__ == "numpy" and type(obj).__name__ in ("ndarray", "memmap")


def default_collate(batch):
    if not batch:
        raise ValueError("default_collate: got an empty batch")
    elem = batch[0]
    if isinstance(elem, rt.Tensor):
        return rt.stack(list(batch), 0)
    if _is_numpy_array(elem):
        if elem.dtype.kind in "OSUV":
            raise TypeError(_ERROR.format(elem.dtype))
        return rt.stack([rt.from_numpy(b) for b in batch], 0)
    if type(elem).__module__ == "numpy" and hasattr(elem, "dtype") and elem.dtype.kind not in "OSUV":
        import numpy as np  # a numpy scalar: its dtype is kept (np.int32 -> int32), as torch.as_tensor does
        return rt.from_numpy(np.asarray(batch))
    if isinstance(elem, bool):
        return rt.tensor(list(batch), dtype=rt.bool)
    if isinstance(elem, numbers.Integral):
        return rt.tensor(list(batch), dtype=rt.int64)
    if isinstance(elem, numbers.Real):
        return rt.tensor(list(batch), dtype=rt.float64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(collated)
        except TypeError:
            return collated
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(sample) != len(elem) for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = [default_collate(samples) for samples in zip(*batch)]  # strings stay tuples, as in torch
        if isinstance(elem, tuple):
            return transposed
        try:
            return type(elem)(transposed)
        except TypeError:
            return transposed
    raise TypeError(_ERROR.format(type(elem)))


def default_convert(data):
    """What a DataLoader with batch_size=None applies to each sample: numpy arrays become tensors."""
    if _is_numpy_array(data) and data.dtype.kind not in "OSUV":
        return rt.from_numpy(data)
    if isinstance(data, collections.abc.Mapping):
        return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return [default_convert(d) for d in data]
    return data
