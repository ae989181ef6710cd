"""get_worker_info(): which DataLoader worker this code runs in (torch.utils.data.get_worker_info).

    class Shards(rt.utils.data.IterableDataset):
        def __iter__(self):
            info = rt.utils.data.get_worker_info()
            if info is None:                                  # the main process: everything
                return iter(range(self.n))
            return iter(range(info.id, self.n, info.num_workers))   # worker info.id: its share

In the main process it returns None. In a worker it returns a WorkerInfo with `id` (0 to
num_workers - 1), `num_workers`, `seed` (the seed this worker gave Python's `random` and the
engine's default generator) and `dataset` (the worker's own copy of the dataset). A WorkerInfo is
read-only.
"""

_current = None


class WorkerInfo:
    __slots__ = ("id", "num_workers", "seed", "dataset")

    def __init__(self, *, id, num_workers, seed, dataset):  # noqa: A002 -- torch's field name
        for name, value in (("id", id), ("num_workers", num_workers), ("seed", seed), ("dataset", dataset)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise RuntimeError(f"Cannot assign attributes to {type(self).__name__} objects (tried to set {name!r})")

    def __repr__(self):
        return (f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, "
                f"dataset={self.dataset!r})")


def get_worker_info():
    """This worker's WorkerInfo, or None outside DataLoader worker processes."""
    return _current


def set_worker_info(info):
    """Called once by the worker loop (_worker.py) before any dataset or user code runs."""
    global _current
    _current = info
