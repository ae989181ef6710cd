"""rt.utils.data.distributed.DistributedSampler: torch's index sequence without shuffling; with shuffling, a
partition of the (padded or truncated) dataset that depends only on seed + epoch."""
import sys

import pytest

import rustytorch as rt
from rustytorch.utils.data.distributed import DistributedSampler

SIZES = [0, 1, 5, 7, 10, 12, 13]
REPLICAS = [1, 2, 3, 4, 8]


class Sized:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n


def shares(n, replicas, **kw):
    return [list(DistributedSampler(Sized(n), num_replicas=replicas, rank=r, **kw)) for r in range(replicas)]


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("replicas", REPLICAS)
@pytest.mark.parametrize("n", SIZES)
def test_unshuffled_order_matches_torch(torch, n, replicas, drop_last):
    from torch.utils.data.distributed import DistributedSampler as TorchSampler
    for rank in range(replicas):
        ours = DistributedSampler(Sized(n), num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)
        theirs = TorchSampler(Sized(n), num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs), (n, replicas, rank)
        assert len(ours) == len(theirs)


@pytest.mark.parametrize("replicas", [2, 3, 4])
@pytest.mark.parametrize("n", [10, 12, 13])
def test_shuffled_shares_partition_the_dataset(n, replicas):
    parts = shares(n, replicas, shuffle=True, seed=7)
    per_rank = -(-n // replicas)
    assert all(len(p) == per_rank for p in parts)
    flat = [i for p in parts for i in p]
    assert set(flat) == set(range(n))  # covering
    padding = per_rank * replicas - n
    assert len(flat) - len(set(flat)) == padding  # disjoint except for the padding repeats

    dropped = shares(n, replicas, shuffle=True, seed=7, drop_last=True)
    flat = [i for p in dropped for i in p]
    assert all(len(p) == n // replicas for p in dropped)
    assert len(set(flat)) == len(flat) == (n // replicas) * replicas  # disjoint, nothing repeated


def test_shuffle_is_deterministic_per_epoch_and_changes_across_epochs():
    def epoch_order(epoch, seed=0):
        samplers = [DistributedSampler(Sized(50), num_replicas=2, rank=r, seed=seed) for r in range(2)]
        for s in samplers:
            s.set_epoch(epoch)
        return [list(s) for s in samplers]

    assert epoch_order(3) == epoch_order(3)
    assert epoch_order(3) != epoch_order(4)
    assert epoch_order(3, seed=1) != epoch_order(3, seed=0)
    assert epoch_order(0) != shares(50, 2, shuffle=False)
    # Iterating does not advance anything: the same sampler gives the same order until set_epoch.
    s = DistributedSampler(Sized(50), num_replicas=2, rank=0)
    assert list(s) == list(s)


def test_shuffle_uses_a_permutation_seeded_seed_plus_epoch():
    s = DistributedSampler(Sized(9), num_replicas=3, rank=2, seed=5)
    s.set_epoch(2)
    perm = rt.randperm(9, generator=rt.Generator().manual_seed(7)).tolist()
    assert list(s) == perm[2::3]


def test_invalid_rank():
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval \[0, 2\]"):
        DistributedSampler(Sized(4), num_replicas=3, rank=3)
    with pytest.raises(ValueError, match="Invalid rank -1"):
        DistributedSampler(Sized(4), num_replicas=3, rank=-1)


def test_without_a_process_group_the_error_says_what_to_do(monkeypatch):
    class NotInitialized:
        @staticmethod
        def is_initialized():
            return False

    monkeypatch.setitem(sys.modules, "rustytorch.distributed", NotInitialized)
    with pytest.raises(RuntimeError, match="pass num_replicas and rank, or call "
                                           "rustytorch.distributed.init_process_group first"):
        DistributedSampler(Sized(4))


def test_reads_world_size_and_rank_from_the_process_group(monkeypatch):
    class Initialized:
        @staticmethod
        def is_initialized():
            return True

        @staticmethod
        def get_world_size():
            return 4

        @staticmethod
        def get_rank():
            return 3

    # Both the module table and the package attribute: once rustytorch.distributed was imported (by any
    # earlier test in the session), `import rustytorch.distributed` reads the attribute.
    monkeypatch.setitem(sys.modules, "rustytorch.distributed", Initialized)
    monkeypatch.setattr(rt, "distributed", Initialized, raising=False)
    s = DistributedSampler(Sized(10), shuffle=False)
    assert (s.num_replicas, s.rank, list(s)) == (4, 3, [3, 7, 1])  # padded with 0, 1
    assert DistributedSampler(Sized(10), rank=1, shuffle=False).num_replicas == 4


def test_works_with_the_dataloader():
    ds = rt.utils.data.TensorDataset(rt.arange(10))
    sampler = DistributedSampler(ds, num_replicas=2, rank=1, shuffle=False)
    batches = [b[0].tolist() for b in rt.utils.data.DataLoader(ds, batch_size=2, sampler=sampler)]
    assert batches == [[1, 3], [5, 7], [9]]
