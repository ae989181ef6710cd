"""Datasets (torch.utils.data): map-style Dataset, IterableDataset, TensorDataset, ConcatDataset,
ChainDataset, Subset and random_split.

    ds = rt.utils.data.TensorDataset(images, labels)        # ds[i] == (images[i], labels[i])
    train, val = rt.utils.data.random_split(ds, [0.8, 0.2], generator=rt.Generator().manual_seed(0))
    both = train + val                                      # ConcatDataset; stream_a + stream_b: ChainDataset

A map-style dataset implements __getitem__(index) and __len__; an IterableDataset implements
__iter__. Indices passed to __getitem__ are Python ints in [0, len).
"""
import bisect
import math
import operator
import warnings

import rustytorch as rt


class Dataset:
    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__(index) (and __len__)")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__()")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        for i, t in enumerate(tensors):
            if not isinstance(t, rt.Tensor):
                raise TypeError(f"TensorDataset: argument {i} is a {type(t).__name__}, not a rustytorch Tensor")
            if t.dim() == 0:
                raise ValueError(f"TensorDataset: argument {i} is 0-dimensional; each tensor needs a first "
                                 "dimension that indexes the examples")
        sizes = [t.shape[0] for t in tensors]
        if any(s != sizes[0] for s in sizes):
            raise ValueError(f"Size mismatch between tensors: their first dimensions are {sizes}; all must be equal")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class ConcatDataset(Dataset):
    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        if which >= len(self.datasets):
            raise IndexError(f"index {idx} is out of range for a ConcatDataset of length {len(self)}")
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """The samples of each IterableDataset in turn; len() is the sum of their lengths."""

    def __init__(self, datasets):
        self.datasets = datasets

    def _checked(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError(f"ChainDataset only supports IterableDataset, got a {type(d).__name__}")
            yield d

    def __iter__(self):
        for d in self._checked():
            yield from d

    def __len__(self):
        return sum(len(d) for d in self._checked())


class Subset(Dataset):
    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self):
        return len(self.indices)


def _randperm(n, generator):
    perm = rt.randperm(n) if generator is None else rt.randperm(n, generator=generator)
    return perm.tolist()


def random_split(dataset, lengths, generator=None):
    """Splits into non-overlapping Subsets of the given lengths, or of fractions that sum to 1
    (floor(n * fraction) each, the remainder handed out one by one from the first split on)."""
    lengths = list(lengths)
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = []
        for i, fraction in enumerate(lengths):
            if fraction < 0 or fraction > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            counts.append(int(math.floor(n * fraction)))
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        for i, count in enumerate(counts):
            if count == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.")
        lengths = counts
    if sum(lengths) != n:
        raise ValueError(f"Sum of input lengths ({sum(lengths)}) does not equal the length of the input dataset "
                         f"({n}); give integer lengths summing to {n} or fractions summing to 1")
    if any(operator.index(x) < 0 for x in lengths):
        raise ValueError(f"random_split: lengths must be non-negative, got {lengths}")
    indices = _randperm(n, generator)
    subsets, offset = [], 0
    for length in lengths:
        subsets.append(Subset(dataset, indices[offset:offset + length]))
        offset += length
    return subsets
