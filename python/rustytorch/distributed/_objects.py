"""Collectives of picklable Python objects (torch.distributed's *_object functions): each object is pickled
into a uint8 tensor, the sizes travel first, then the bytes, over the group's CPU backend. Unpickling runs
whatever the sender pickled: use these only between the ranks of your own job, as with torch."""
import pickle

import numpy as np


def _rt():
    import rustytorch
    return rustytorch


def _pickled(obj):
    data = np.frombuffer(pickle.dumps(obj), dtype=np.uint8).copy()
    return _rt().tensor(data), len(data)


def _unpickled(t, size):
    return pickle.loads(t[:size].numpy().tobytes())


def _padded(t, size, length):
    rt = _rt()
    out = rt.zeros(length, dtype=rt.uint8)
    if size:
        out[:size] = t
    return out


def _all_sizes(size, group):
    from . import all_gather, get_world_size
    rt = _rt()
    out = [rt.zeros(1, dtype=rt.int64) for _ in range(get_world_size(group))]
    all_gather(out, rt.tensor([size], dtype=rt.int64), group=group)
    return [int(o.item()) for o in out]


def _my_group_rank(group):
    from . import get_rank
    return get_rank(group)


def all_gather_object(object_list, obj, group=None):
    from . import all_gather
    rt = _rt()
    data, size = _pickled(obj)
    sizes = _all_sizes(size, group)
    if len(object_list) != len(sizes):
        raise ValueError(f"all_gather_object: object_list has {len(object_list)} slots; one per rank "
                         f"({len(sizes)}) is needed")
    longest = max(sizes)
    out = [rt.zeros(longest, dtype=rt.uint8) for _ in sizes]
    all_gather(out, _padded(data, size, longest), group=group)
    for i, (t, s) in enumerate(zip(out, sizes)):
        object_list[i] = _unpickled(t, s)


def gather_object(obj, object_gather_list=None, dst=0, group=None):
    from . import gather, get_rank
    rt = _rt()
    data, size = _pickled(obj)
    sizes = _all_sizes(size, group)
    longest = max(sizes)
    is_dst = get_rank() == dst
    if is_dst and (object_gather_list is None or len(object_gather_list) != len(sizes)):
        raise ValueError(f"gather_object: on dst, object_gather_list needs one slot per rank ({len(sizes)})")
    out = [rt.zeros(longest, dtype=rt.uint8) for _ in sizes] if is_dst else None
    gather(_padded(data, size, longest), out, dst=dst, group=group)
    if is_dst:
        for i, (t, s) in enumerate(zip(out, sizes)):
            object_gather_list[i] = _unpickled(t, s)


def broadcast_object_list(object_list, src=0, group=None, device=None):
    from . import broadcast, get_rank
    rt = _rt()
    is_src = get_rank() == src
    pieces = [_pickled(o) for o in object_list] if is_src else []
    sizes = rt.tensor([s for _, s in pieces], dtype=rt.int64) if is_src else rt.zeros(len(object_list), dtype=rt.int64)
    broadcast(sizes, src=src, group=group)
    sizes = [int(s) for s in sizes.tolist()]
    total = sum(sizes)
    if total == 0:
        buf = rt.zeros(0, dtype=rt.uint8)
    elif is_src:
        buf = rt.cat([t for t, _ in pieces])
    else:
        buf = rt.zeros(total, dtype=rt.uint8)
    if total:
        broadcast(buf, src=src, group=group)
    if not is_src:
        offset = 0
        for i, s in enumerate(sizes):
            object_list[i] = _unpickled(buf[offset:offset + s], s)
            offset += s


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=0, group=None):
    from . import get_rank, get_world_size
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("scatter_object_list: scatter_object_output_list must be a list with at least one slot")
    n = get_world_size(group)
    if get_rank() == src:
        if scatter_object_input_list is None or len(scatter_object_input_list) != n:
            raise ValueError(f"scatter_object_list: on src, scatter_object_input_list needs one object per rank ({n})")
        objects = list(scatter_object_input_list)
    else:
        objects = [None] * n
    broadcast_object_list(objects, src=src, group=group)
    scatter_object_output_list[0] = objects[_my_group_rank(group)]
