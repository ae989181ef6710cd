"""Samplers: which dataset indices a DataLoader visits, in what order (torch.utils.data).

    RandomSampler(ds, generator=rt.Generator().manual_seed(0))     # a new permutation every epoch
    BatchSampler(SequentialSampler(ds), batch_size=32, drop_last=True)

Without a generator, RandomSampler draws from the default generator, so rt.manual_seed(s) before
iterating makes the order reproducible.
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
