"""DistributedSampler: each of num_replicas processes visits its own share of a dataset
(torch.utils.data.distributed, PyTorch 1.13's index sequence).

    sampler = DistributedSampler(ds, num_replicas=4, rank=1, shuffle=True, seed=0)
    loader = DataLoader(ds, batch_size=32, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)          # a new shuffle each epoch, the same on every rank
        for xb, yb in loader: ...

The indices are shuffled (a permutation drawn from an rt.Generator seeded seed + epoch, identical on
every rank), padded to a multiple of num_replicas by repeating indices from the start (or, with
drop_last, truncated), then rank r takes every num_replicas-th index starting at r. rt.randperm draws
from rustytorch's Philox generator, so the shuffled order differs from torch's; the unshuffled order
is torch's exactly.
"""
import math

import rustytorch as rt

from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _process_group_size_and_rank():
    try:
        import rustytorch.distributed as dist
    except ImportError as e:
        raise RuntimeError("DistributedSampler: rustytorch.distributed is not available "
                           f"({e}); pass num_replicas and rank") from e
    if not dist.is_initialized():
        raise RuntimeError("DistributedSampler: the default process group is not initialized; pass num_replicas "
                           "and rank, or call rustytorch.distributed.init_process_group first")
    return dist.get_world_size(), dist.get_rank()


class DistributedSampler(Sampler):
    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None or rank is None:
            world_size, group_rank = _process_group_size_and_rank()
            num_replicas = world_size if num_replicas is None else num_replicas
            rank = group_rank if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            # Every rank gets the same number of samples: the last incomplete round is dropped.
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = rt.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = rt.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        if len(indices) != self.total_size:
            raise RuntimeError(f"DistributedSampler: built {len(indices)} indices instead of {self.total_size}")
        own = indices[self.rank:self.total_size:self.num_replicas]
        if len(own) != self.num_samples:
            raise RuntimeError(f"DistributedSampler: rank {self.rank} got {len(own)} indices instead of "
                               f"{self.num_samples}")
        return iter(own)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Sets the epoch whose shuffle the next iteration uses (call it before each epoch, on every rank)."""
        self.epoch = epoch
