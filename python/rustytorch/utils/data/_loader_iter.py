"""What iter(DataLoader) returns: LoaderIterator (the part both kinds share) and
SingleProcessLoaderIter (num_workers=0). The worker-process kind is _multiprocessing_iter.py.

    it = iter(loader)        # draws the base seed, starts iterating the index sampler
    batch = next(it)         # one fetched and collated batch, pinned when pin_memory=True
    len(it) == len(loader)

Each iterator draws a base seed from the loader's generator (the default generator without one)
when it is created, as torch's do, whether or not it starts workers; workers seed themselves from
it. Drawing it in every case keeps the random stream the samplers see the same for any
num_workers, so a shuffled loader gives the same batches with or without workers.
An iterator keeps no reference to its loader: a loader with persistent workers owns its iterator,
and the workers stop when both are gone.
"""
import warnings

import rustytorch as rt

from ._fetch import make_fetcher
from .pin_memory import pin_memory as _pin_memory


def draw_base_seed(generator):
    return int(rt.randint(0, 2**63 - 1, (), dtype=rt.int64, generator=generator).item())


class LoaderIterator:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._is_iterable = loader._is_iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._collate_fn = loader.collate_fn
        self._num_workers = loader.num_workers
        self._pin_memory = loader.pin_memory
        self._timeout = loader.timeout
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = draw_base_seed(loader.generator)
        self._num_yielded = 0
        self._reported_length = loader._reported_iterable_length

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._index_sampler)

    def _reset(self, loader):
        """Starts a new epoch over the same iterator (persistent workers)."""
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._reported_length = loader._reported_iterable_length

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if self._reported_length is not None and self._num_yielded > self._reported_length:
            self._warn_length_exceeded()
        return _pin_memory(data) if self._pin_memory else data

    def _warn_length_exceeded(self):
        message = (f"Length of IterableDataset {self._dataset} was reported to be {self._reported_length} batches "
                   f"(when accessing len(dataloader)), but {self._num_yielded} have been fetched.")
        if self._num_workers > 0:
            message += (" With worker processes, each worker iterates its own copy of the dataset: use "
                        "rt.utils.data.get_worker_info() in __iter__ to give each worker its own share.")
        warnings.warn(message)


class SingleProcessLoaderIter(LoaderIterator):
    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = make_fetcher(self._dataset, self._is_iterable, self._auto_collation, self._collate_fn,
                                     self._drop_last)

    def _next_data(self):
        index = next(self._sampler_iter)  # StopIteration ends the epoch
        return self._fetcher.fetch(index)
