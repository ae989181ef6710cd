"""rustytorch.distributed: torch.distributed's API over the RustyTorch++ distributed engine (rt_dist).

    import rustytorch as rt
    import rustytorch.distributed as dist

    dist.init_process_group("gloo")                 # env://: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
    t = rt.ones(4) * dist.get_rank()
    dist.all_reduce(t, op=dist.ReduceOp.SUM)        # every rank now holds the sum
    work = dist.broadcast(t, src=0, async_op=True)  # a Work: overlap, then
    work.wait()
    dist.destroy_process_group()

Start the ranks with `rtorch launch --nproc-per-node N script.py` (torchrun's flags and environment), with
`rustytorch.multiprocessing.spawn`, or under `mpirun` with backend "mpi". Backends: "gloo" and "mpi" for CPU
tensors, "nccl" for CUDA tensors, or one per device ("cpu:gloo,cuda:nccl"). Errors are DistError and its
subclasses (DistBackendError, DistNetworkError, DistStoreError), all RuntimeErrors, naming the collective,
its sequence number, the group and the rank or key involved.
"""
from datetime import timedelta

from .._C import _dist as _d
from .._C._dist import (DistBackendError, DistError, DistNetworkError, DistStoreError,  # noqa: F401
                        ProcessGroup, ReduceOp, Work)
from ._objects import all_gather_object, broadcast_object_list, gather_object, scatter_object_list  # noqa: F401

# Stores (rendezvous and side channel), as torch.distributed exports them.
for _name in ("Store", "TCPStore", "FileStore", "HashStore", "PrefixStore"):
    if hasattr(_d, _name):
        globals()[_name] = getattr(_d, _name)
del _name

default_pg_timeout = timedelta(minutes=30)

# The ledger monitor's thread may take the GIL (a hang report asks for this rank's Python stacks): stop it
# while the interpreter still runs.
import atexit as _atexit  # noqa: E402

_atexit.register(_d._stop_ledger_monitor)


def _get_future(work):
    """Work.get_future(): a rustytorch.futures.Future whose value is the list of tensors the work wrote."""
    from ..futures import _WorkFuture
    return _WorkFuture(work)


Work.get_future = _get_future


class Backend(str):
    """Backend names, as torch.distributed.Backend: Backend("GLOO") == "gloo"."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    MPI = "mpi"
    NCCL = "nccl"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend name must be a string, got {type(name).__name__}")
        value = name.lower()
        if value not in ("gloo", "mpi", "nccl") and ":" not in value:
            raise ValueError(f"unknown backend '{name}': use gloo, mpi, nccl or 'cpu:gloo,cuda:nccl'")
        return str.__new__(cls, value)


class _NonGroupMember:
    def __repr__(self):
        return "<rustytorch.distributed.GroupMember.NON_GROUP_MEMBER>"


class GroupMember:
    """GroupMember.WORLD is the default group; new_group returns NON_GROUP_MEMBER on ranks outside it."""

    WORLD = None
    NON_GROUP_MEMBER = _NonGroupMember()


group = GroupMember  # torch.distributed.group.WORLD


def is_available():
    return True


is_gloo_available = _d.is_gloo_available
is_mpi_available = _d.is_mpi_available
is_nccl_available = _d.is_nccl_available
is_initialized = _d.is_initialized


def is_torchelastic_launched():
    import os
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None or os.environ.get("RT_LAUNCH_JOB_ID") is not None


def _timeout(t, what="timeout"):
    if t is None:
        return None
    if isinstance(t, timedelta):
        return t
    if isinstance(t, (int, float)):
        return timedelta(seconds=t)
    raise TypeError(f"{what} must be a datetime.timedelta, got {type(t).__name__}")


def init_process_group(backend=None, init_method=None, timeout=default_pg_timeout, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None):
    if store is not None and init_method is not None:
        raise ValueError("init_process_group: pass either init_method or store, not both")
    if pg_options is not None:
        raise NotImplementedError("init_process_group: pg_options is not supported yet; leave it out")
    _d.init_process_group(str(backend or ""), init_method or "", _timeout(timeout), int(world_size), int(rank),
                          store, group_name)


def destroy_process_group(group=None):
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    _d.destroy_process_group(group)


def _group(g):
    """None -> the default group (the engine's null); NON_GROUP_MEMBER -> None (the call does nothing)."""
    if g is GroupMember.NON_GROUP_MEMBER:
        return _NOT_A_MEMBER
    if g is not None and not isinstance(g, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup from new_group() or None, got {type(g).__name__}")
    return g


_NOT_A_MEMBER = object()


def _skip(g):
    return g is _NOT_A_MEMBER


def get_rank(group=None):
    g = _group(group)
    return -1 if _skip(g) else _d.get_rank(g)


def get_world_size(group=None):
    g = _group(group)
    return -1 if _skip(g) else _d.get_world_size(g)


def get_backend(group=None):
    g = _group(group)
    if _skip(g):
        raise ValueError("get_backend: this process is not a member of that group")
    return Backend(_d.get_backend(g))


def get_process_group_ranks(group):
    g = _group(group)
    return list(range(get_world_size())) if g is None else list(g.global_ranks)


def get_global_rank(group, group_rank):
    return get_process_group_ranks(group)[group_rank]


def get_group_rank(group, global_rank):
    ranks = get_process_group_ranks(group)
    if global_rank not in ranks:
        raise ValueError(f"global rank {global_rank} is not part of the group")
    return ranks.index(global_rank)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None):
    if pg_options is not None:
        raise NotImplementedError("new_group: pg_options is not supported yet; leave it out")
    g = _d.new_group(list(ranks or []), _timeout(timeout), str(backend or ""))
    return GroupMember.NON_GROUP_MEMBER if g is None else g


def _result(work, async_op):
    return work if async_op else None


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    g = _group(group)
    if _skip(g):
        return None
    return _result(_d.all_reduce(tensor, op, g, async_op), async_op)


def broadcast(tensor, src, group=None, async_op=False):
    g = _group(group)
    if _skip(g):
        return None
    return _result(_d.broadcast(tensor, src, g, async_op), async_op)


def reduce(tensor, dst, op=ReduceOp.SUM, group=None, async_op=False):
    g = _group(group)
    if _skip(g):
        return None
    return _result(_d.reduce(tensor, dst, op, g, async_op), async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    g = _group(group)
    if _skip(g):
        return None
    return _result(_d.all_gather(list(tensor_list), tensor, g, async_op), async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    g = _group(group)
    if _skip(g):
        return None
    return _result(_d.all_gather_into_tensor(output_tensor, input_tensor, g, async_op), async_op)


_all_gather_base = all_gather_into_tensor


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    g = _group(group)
    if _skip(g):
        return None
    return _result(_d.reduce_scatter_tensor(output, input, op, g, async_op), async_op)


_reduce_scatter_base = reduce_scatter_tensor


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False):
    g = _group(group)
    if _skip(g):
        return None
    return _result(_d.gather(tensor, list(gather_list or []), dst, g, async_op), async_op)


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False):
    g = _group(group)
    if _skip(g):
        return None
    return _result(_d.scatter(tensor, list(scatter_list or []), src, g, async_op), async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None, async_op=False):
    g = _group(group)
    if _skip(g):
        return None
    return _result(_d.all_to_all_single(output, input, list(output_split_sizes or []), list(input_split_sizes or []),
                                        g, async_op), async_op)


def isend(tensor, dst, group=None, tag=0):
    g = _group(group)
    if _skip(g):
        return None
    return _d.isend(tensor, dst, g, tag)


def irecv(tensor, src=None, group=None, tag=0):
    g = _group(group)
    if _skip(g):
        return None
    if src is None:
        raise NotImplementedError("irecv from any source (src=None) is not supported yet: pass src")
    return _d.irecv(tensor, src, g, tag)


def send(tensor, dst, group=None, tag=0):
    work = isend(tensor, dst, group, tag)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0):
    """Receives into `tensor` and returns the sender's rank (as torch does)."""
    work = irecv(tensor, src, group, tag)
    if work is None:
        return -1
    work.wait()
    return src


def barrier(group=None, async_op=False, device_ids=None):
    g = _group(group)
    if _skip(g):
        return None
    return _result(_d.barrier(g, async_op), async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    g = _group(group)
    if _skip(g):
        return None
    _d.monitored_barrier(g, _timeout(timeout), bool(wait_all_ranks))


def write_ledger_trace(path, rank=None):
    """Writes this process's collective ledger (every collective it issued, the most recent 4096, with
    sequence numbers, shapes and call sites) as JSON that also opens as a Chrome trace in Perfetto."""
    if rank is None:
        rank = _d.get_rank() if _d.is_initialized() else 0
    _d.write_ledger_trace(str(path), int(rank))


def ledger_trace(rank=None):
    """The collective ledger as a dict (what write_ledger_trace writes)."""
    import json
    if rank is None:
        rank = _d.get_rank() if _d.is_initialized() else 0
    return json.loads(_d.ledger_trace_json(int(rank)))


from . import checkpoint  # noqa: E402,F401  (rustytorch.distributed.checkpoint: save / load_latest)
