"""DataLoader: batches over a dataset, in the calling process or in worker processes
(torch.utils.data.DataLoader, PyTorch 1.13's options and semantics).

    loader = rt.utils.data.DataLoader(ds, batch_size=64, shuffle=True, drop_last=True,
                                      num_workers=2, persistent_workers=True)
    for epoch in range(10):
        for x, y in loader:                       # each pass is one epoch, reshuffled
            ...
    len(loader)                                   # batches per epoch

Contracts (PyTorch's): shuffle=True uses RandomSampler(dataset, generator=generator) (without a
generator, the order comes from the default generator, so rt.manual_seed makes it reproducible);
sampler/batch_sampler replace that logic and exclude the matching options (ValueError);
batch_size=None yields single samples passed through default_convert. Batches are
collate_fn(list of samples), default_collate by default. An IterableDataset is batched in the
order it yields. pin_memory=True puts each batch's tensors in pinned memory (pin_memory.py), so
that `xb.cuda(non_blocking=True)` is queued without a wait; without a usable GPU it warns and
yields ordinary batches, as torch does.

Worker processes (num_workers > 0; _multiprocessing_iter.py, _worker.py): each iterator starts
num_workers processes with `multiprocessing_context` ("fork", "spawn", "forkserver" or a context;
the platform default otherwise), each with its own copy of the dataset, collate_fn and
worker_init_fn (pickled under "spawn"). Batches come back in the sampler's order, the same batches
as with num_workers=0. Worker i seeds Python's `random` and the engine's default generator with
base_seed + i, where base_seed is drawn from `generator` when the iterator is created;
get_worker_info() tells dataset code which worker it runs in; at most prefetch_factor *
num_workers batches are requested ahead. persistent_workers=True keeps the workers (and their
dataset copies) from one epoch to the next. timeout > 0 bounds the wait for each batch
(RuntimeError). A worker's exception is raised in the calling process with the worker's traceback;
a worker that dies is a RuntimeError naming its pid. Batches cross the process boundary pickled:
tensors are copied by value, not moved to shared memory as torch does. Pinning happens in the
calling process as batches are returned.
"""
import multiprocessing
import warnings

import rustytorch as rt

from ._loader_iter import SingleProcessLoaderIter
from ._multiprocessing_iter import MultiProcessLoaderIter
from ._worker_processes import warn_if_more_workers_than_cpus
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, InfiniteConstantSampler, RandomSampler, SequentialSampler

_DEFAULT_PREFETCH_FACTOR = 2
_FIXED_AFTER_INIT = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


class DataLoader:
    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=_DEFAULT_PREFETCH_FACTOR,
                 persistent_workers=False, pin_memory_device=""):
        self._check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers)
        if pin_memory_device and not str(pin_memory_device).startswith("cuda"):
            raise ValueError(f"DataLoader(pin_memory_device={pin_memory_device!r}): pinned memory serves CUDA "
                             "devices only; leave it empty or use 'cuda'")
        if pin_memory and not rt.cuda.is_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          f"memory won't be used ({rt.cuda.unavailable_reason()})", stacklevel=2)
            pin_memory = False
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = _DEFAULT_PREFETCH_FACTOR if prefetch_factor is None else prefetch_factor
        self.pin_memory = bool(pin_memory)
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self._is_iterable = isinstance(dataset, IterableDataset)
        if self._is_iterable:
            if shuffle not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, "
                                 f"but got shuffle={shuffle}")
            if sampler is not None or batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler and batch_sampler "
                                 "options")
        elif not hasattr(dataset, "__getitem__") or not hasattr(dataset, "__len__"):
            raise TypeError(f"DataLoader: dataset of type {type(dataset).__name__} needs __getitem__ and __len__ "
                            "(a map-style Dataset) or must subclass rt.utils.data.IterableDataset")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
        if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int)
                                       or batch_size <= 0):
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if sampler is None:
            if self._is_iterable:
                sampler = InfiniteConstantSampler()  # an IterableDataset's "indices" only count samples
            else:
                sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._reported_iterable_length = None
        self._iterator = None  # the persistent workers' iterator
        self._initialized = True

    @staticmethod
    def _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers):
        if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(f"num_workers option should be a non-negative integer, got num_workers={num_workers!r}; "
                             "use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor not in (None, _DEFAULT_PREFETCH_FACTOR):
            raise ValueError("prefetch_factor option could only be specified in multiprocessing. let num_workers > 0 "
                             "to enable multiprocessing.")
        if prefetch_factor is not None and (isinstance(prefetch_factor, bool) or not isinstance(prefetch_factor, int)
                                            or prefetch_factor <= 0):
            raise ValueError(f"prefetch_factor should be a positive integer, got prefetch_factor={prefetch_factor!r}")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers == 0:
                raise ValueError("multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(f"multiprocessing_context option should specify a valid start method in "
                                     f"{methods!r}, but got multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            elif not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError(f"multiprocessing_context option should be a valid context object or a string "
                                f"specifying the start method, but got multiprocessing_context={context!r}")
        self._multiprocessing_context = context

    def __setattr__(self, name, value):
        if name in _FIXED_AFTER_INIT and self.__dict__.get("_initialized"):
            raise ValueError(f"{name} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(name, value)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        """What the iterators draw one batch's indices (or one sample's index) from."""
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return SingleProcessLoaderIter(self)
        warn_if_more_workers_than_cpus(self.num_workers)
        return MultiProcessLoaderIter(self)

    def __iter__(self):
        if not self.persistent_workers:
            return self._get_iterator()
        if self._iterator is None or self._iterator._shut_down:
            self._iterator = self._get_iterator()
        else:
            self._iterator._reset(self)
        return self._iterator

    def __len__(self):
        if self._is_iterable:
            if not hasattr(self.dataset, "__len__"):
                raise TypeError(f"object of type {type(self).__name__} over an IterableDataset without __len__ "
                                "has no len()")
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            self._reported_iterable_length = n  # iterators warn when they yield more than this
            return n
        return len(self._index_sampler)
