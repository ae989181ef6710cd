"""Fetchers: turn one item of the loader's index sampler into one batch. The same code runs in the
calling process (num_workers=0) and in each worker, so both give the same batches.

    fetcher = make_fetcher(dataset, is_iterable, auto_collation, collate_fn, drop_last)
    batch = fetcher.fetch(indices)     # StopIteration when an IterableDataset has no batch left

With auto-collation (a batch size or a batch sampler), an index is a list and the batch is
collate_fn([samples]); without it, an index names one sample and the result is collate_fn(sample).
For an IterableDataset the indices are placeholders (None) that only say how many samples to
take: a short last batch is kept, or dropped with drop_last, and an empty one ends the epoch.
"""


class MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn

    def fetch(self, index):
        if self.auto_collation:
            return self.collate_fn([self.dataset[i] for i in index])
        return self.collate_fn(self.dataset[index])


class IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.samples = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            try:
                sample = next(self.samples)
            except StopIteration:
                self.ended = True
                raise
            return self.collate_fn(sample)
        batch = []
        for _ in index:
            try:
                batch.append(next(self.samples))
            except StopIteration:
                self.ended = True
                break
        if not batch or (self.drop_last and len(batch) < len(index)):
            raise StopIteration
        return self.collate_fn(batch)


def make_fetcher(dataset, is_iterable, auto_collation, collate_fn, drop_last):
    if is_iterable:
        return IterableDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)
    return MapDatasetFetcher(dataset, auto_collation, collate_fn)
