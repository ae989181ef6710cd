"""DataLoader: batches over a dataset in the calling process (torch.utils.data.DataLoader).

    loader = rt.utils.data.DataLoader(ds, batch_size=64, shuffle=True, drop_last=True)
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
yields ordinary batches, as torch does. Worker processes are not supported: num_workers must be 0
(ValueError otherwise).
"""
import itertools
import warnings

import rustytorch as rt

from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .pin_memory import pin_memory as _pin_memory
from .sampler import BatchSampler, RandomSampler, SequentialSampler


class DataLoader:
    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device=""):
        if num_workers != 0:
            raise ValueError(f"DataLoader(num_workers={num_workers}): rustytorch loads data in the calling process "
                             "only; use num_workers=0")
        if pin_memory_device and not str(pin_memory_device).startswith("cuda"):
            raise ValueError(f"DataLoader(pin_memory_device={pin_memory_device!r}): pinned memory serves CUDA "
                             "devices only; leave it empty or use 'cuda'")
        if pin_memory and not rt.cuda.is_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          f"memory won't be used ({rt.cuda.unavailable_reason()})", stacklevel=2)
            pin_memory = False
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        self.dataset = dataset
        self.num_workers = 0
        self.pin_memory = bool(pin_memory)
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.generator = generator
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
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
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int)
                                       or batch_size <= 0):
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation or (self._iterable and batch_size) \
                else default_convert
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    def __iter__(self):
        batches = self._batches()
        return (_pin_memory(b) for b in batches) if self.pin_memory else batches

    def _batches(self):
        if self._iterable:
            return self._iterate_iterable()
        if self._auto_collation:
            return (self.collate_fn([self.dataset[i] for i in indices]) for indices in self.batch_sampler)
        return (self.collate_fn(self.dataset[i]) for i in self.sampler)

    def _iterate_iterable(self):
        it = iter(self.dataset)
        if self.batch_size is None:
            for sample in it:
                yield self.collate_fn(sample)
            return
        while True:
            batch = list(itertools.islice(it, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield self.collate_fn(batch)

    def __len__(self):
        if self._iterable:
            if not hasattr(self.dataset, "__len__"):
                raise TypeError(f"object of type {type(self).__name__} over an IterableDataset without __len__ "
                                "has no len()")
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self.batch_sampler) if self._auto_collation else len(self.sampler)

