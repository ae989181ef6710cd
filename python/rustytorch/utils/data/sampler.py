"""Samplers: which dataset indices a DataLoader visits, in what order (torch.utils.data).

    RandomSampler(ds, generator=rt.Generator().manual_seed(0))     # a new permutation every epoch
    RandomSampler(ds, replacement=True, num_samples=1000)           # 1000 uniform draws
    WeightedRandomSampler([0.1, 0.9, 0.4], num_samples=5)           # index i with probability w[i] / sum(w)
    SubsetRandomSampler([3, 5, 8])                                  # a permutation of these indices
    BatchSampler(SequentialSampler(ds), batch_size=32, drop_last=True)

Without a generator, the random samplers draw from the default generator, so rt.manual_seed(s)
before iterating makes the order reproducible. Our generator is Philox-based, not torch's
Mersenne Twister: the same seed gives different (equally distributed) draws than torch.
"""
import rustytorch as rt


class Sampler:
    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__()")


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def _generator_kwargs(self):
        return {} if self.generator is None else {"generator": self.generator}

    def __iter__(self):
        n = len(self.data_source)
        if self.replacement:
            draws = rt.randint(0, n, (self.num_samples,), dtype=rt.int64, **self._generator_kwargs())
            return iter(draws.tolist())
        order = []
        for _ in range(self.num_samples // n):
            order.extend(rt.randperm(n, **self._generator_kwargs()).tolist())
        order.extend(rt.randperm(n, **self._generator_kwargs()).tolist()[:self.num_samples % n])
        return iter(order)

    def __len__(self):
        return self.num_samples


class WeightedRandomSampler(Sampler):
    """num_samples indices in [0, len(weights)), index i drawn with probability weights[i] / sum(weights);
    without replacement, no index is drawn twice in one pass (num_samples <= the number of nonzero weights)."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        weights = weights.detach().double() if isinstance(weights, rt.Tensor) else rt.tensor(weights, dtype=rt.float64)
        if weights.dim() != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(weights.shape)}")
        self.weights = weights
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        draws = rt.multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
        return iter(draws.tolist())

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        kwargs = {} if self.generator is None else {"generator": self.generator}
        return (self.indices[i] for i in rt.randperm(len(self.indices), **kwargs).tolist())

    def __len__(self):
        return len(self.indices)


class BatchSampler(Sampler):
    def __init__(self, sampler, batch_size, drop_last):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size


class InfiniteConstantSampler(Sampler):
    """None forever: the DataLoader's sampler for an IterableDataset, whose samples need no index
    (a BatchSampler over it says how many samples make a batch)."""

    def __iter__(self):
        while True:
            yield None
