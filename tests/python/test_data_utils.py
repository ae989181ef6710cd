"""rt.utils.data's datasets, samplers, random_split and default_collate against torch 1.13.

Our generator is Philox-based and torch's CPU generator is a Mersenne Twister, so the same seed
gives different draws: where an algorithm is random, the tests compare what torch's algorithm
fixes (lengths, partitions, each block of RandomSampler being a permutation, the samples of a
one-hot WeightedRandomSampler, reproducibility for a seed) and check the distribution against
the expected probabilities instead of comparing sequences. Deterministic parts (sequential and
batch samplers, fraction lengths, collation) are compared exactly."""
from collections import namedtuple

import numpy as np
import pytest

import rustytorch as rt
from rustytorch.utils.data import (BatchSampler, ChainDataset, ConcatDataset, IterableDataset, RandomSampler,
                                   SequentialSampler, Subset, SubsetRandomSampler, TensorDataset,
                                   WeightedRandomSampler, default_collate, random_split)

Point = namedtuple("Point", "x y")


def as_plain(value):
    """Nested structure with tensors (rt or torch) turned into (dtype name, values) pairs."""
    if hasattr(value, "tolist") and hasattr(value, "dtype"):
        return (str(value.dtype).split(".")[-1], value.tolist())
    if isinstance(value, dict):
        return {k: as_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value).__name__, [as_plain(v) for v in value]
    return value


def frequencies(draws, n):
    return np.bincount(np.asarray(draws), minlength=n) / len(draws)


# [SECTION] random_split and datasets

@pytest.mark.parametrize("n, lengths", [(10, [0.5, 0.3, 0.2]), (11, [0.5, 0.5]), (7, [0.1, 0.2, 0.7]),
                                        (100, [1 / 3, 1 / 3, 1 / 3]), (5, [3, 2]), (3, [1.0])])
def test_random_split_lengths_match_torch(torch, n, lengths):
    ours = random_split(range(n), lengths, generator=rt.Generator().manual_seed(0))
    theirs = torch.utils.data.random_split(range(n), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    assert sorted(i for s in ours for i in s) == list(range(n))  # a partition, like torch's


def test_random_split_is_reproducible_for_a_seed_and_checks_lengths(torch):
    split = lambda seed: [list(s) for s in random_split(range(20), [15, 5], generator=rt.Generator().manual_seed(seed))]  # noqa: E731
    assert split(1) == split(1) and split(1) != split(2)
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        assert [len(s) for s in random_split(range(3), [1.0, 0.0])] == [3, 0]
    for lengths in ([4, 4], [0.5, 0.6]):
        with pytest.raises(ValueError):
            torch.utils.data.random_split(range(10), lengths)
        with pytest.raises(ValueError):
            random_split(range(10), lengths)
    with pytest.raises(ValueError, match="Fraction at index 1 is not between 0 and 1"):
        random_split(range(10), [0.5, -0.5, 1.0])


def test_subset_concat_and_tensor_dataset_match_torch(torch):
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    ds, tds = TensorDataset(rt.tensor(x), rt.arange(6)), torch.utils.data.TensorDataset(torch.tensor(x), torch.arange(6))
    assert len(ds) == len(tds) and ds[4][0].tolist() == tds[4][0].tolist()
    sub, tsub = Subset(ds, [5, 0, 3]), torch.utils.data.Subset(tds, [5, 0, 3])
    assert [sub[i][1].item() for i in range(3)] == [tsub[i][1].item() for i in range(3)] == [5, 0, 3]
    both = ConcatDataset([range(3), range(10, 14)])
    tboth = torch.utils.data.ConcatDataset([range(3), range(10, 14)])
    assert both.cumulative_sizes == tboth.cumulative_sizes and len(both) == len(tboth) == 7
    assert [both[i] for i in range(-7, 7)] == [tboth[i] for i in range(-7, 7)]
    with pytest.raises(ValueError, match="absolute value of index"):
        both[-8]
    with pytest.raises(ValueError, match="Size mismatch"):
        TensorDataset(rt.zeros(3), rt.zeros(4))


class Stream(IterableDataset):
    def __init__(self, values):
        self.values = values

    def __iter__(self):
        return iter(self.values)

    def __len__(self):
        return len(self.values)


def test_chain_dataset_matches_torch(torch):
    class TorchStream(torch.utils.data.IterableDataset):
        def __init__(self, values):
            self.values = values

        def __iter__(self):
            return iter(self.values)

        def __len__(self):
            return len(self.values)

    chain = ChainDataset([Stream([1, 2]), Stream([3]), Stream([4, 5])])
    tchain = torch.utils.data.ChainDataset([TorchStream([1, 2]), TorchStream([3]), TorchStream([4, 5])])
    assert list(chain) == list(tchain) == [1, 2, 3, 4, 5] and len(chain) == len(tchain) == 5
    plus = Stream([1]) + Stream([2, 3])  # IterableDataset + IterableDataset is a ChainDataset, as in torch
    assert isinstance(plus, ChainDataset) and list(plus) == [1, 2, 3]
    with pytest.raises(TypeError, match="ChainDataset only supports IterableDataset"):
        list(ChainDataset([Stream([1]), [2, 3]]))
    with pytest.raises(TypeError, match="does not support IterableDataset"):
        ConcatDataset([Stream([1])])


# [SECTION] samplers

def test_sequential_and_batch_samplers_match_torch_exactly(torch):
    for n, batch_size, drop_last in [(10, 3, False), (10, 3, True), (9, 3, False), (2, 5, False), (2, 5, True)]:
        ours = BatchSampler(SequentialSampler(range(n)), batch_size, drop_last)
        theirs = torch.utils.data.BatchSampler(torch.utils.data.SequentialSampler(range(n)), batch_size, drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
    for bad in (0, True, 2.0):
        with pytest.raises(ValueError, match="batch_size should be a positive integer"):
            BatchSampler(range(3), bad, False)


def test_random_sampler_has_torch_structure(torch):
    n = 7
    for num_samples in (None, 3, 7, 17):
        ours = list(RandomSampler(range(n), num_samples=num_samples, generator=rt.Generator().manual_seed(0)))
        theirs = list(torch.utils.data.RandomSampler(range(n), num_samples=num_samples,
                                                     generator=torch.Generator().manual_seed(0)))
        assert len(ours) == len(theirs) == (num_samples or n)
        for drawn in (ours, theirs):  # without replacement: whole permutations, then part of one
            blocks = [drawn[i:i + n] for i in range(0, len(drawn), n)]
            assert all(sorted(b) == list(range(n)) for b in blocks if len(b) == n)
            assert len(set(blocks[-1])) == len(blocks[-1])
    assert len(RandomSampler(range(n), num_samples=17)) == 17
    make = lambda: list(RandomSampler(range(50), generator=rt.Generator().manual_seed(5)))  # noqa: E731
    assert make() == make() and make() != list(range(50))
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(TypeError, match="replacement should be a boolean"):
        RandomSampler(range(3), replacement=1)


def test_random_sampler_with_replacement_is_uniform(torch):
    n, draws = 5, 20000
    ours = list(RandomSampler(range(n), replacement=True, num_samples=draws, generator=rt.Generator().manual_seed(1)))
    theirs = list(torch.utils.data.RandomSampler(range(n), replacement=True, num_samples=draws,
                                                 generator=torch.Generator().manual_seed(1)))
    assert len(ours) == len(theirs) == draws and min(ours) >= 0 and max(ours) < n
    assert np.abs(frequencies(ours, n) - 1 / n).max() < 0.02
    assert np.abs(frequencies(ours, n) - frequencies(theirs, n)).max() < 0.03


def test_weighted_random_sampler_distribution_and_torch_parity(torch):
    weights = [0.1, 0.9, 0.4, 0.0, 3.0, 0.6]
    draws = 30000
    ours = list(WeightedRandomSampler(weights, draws, generator=rt.Generator().manual_seed(2)))
    theirs = list(torch.utils.data.WeightedRandomSampler(weights, draws, generator=torch.Generator().manual_seed(2)))
    expected = np.array(weights) / sum(weights)
    assert np.abs(frequencies(ours, 6) - expected).max() < 0.015
    assert np.abs(frequencies(ours, 6) - frequencies(theirs, 6)).max() < 0.02
    assert 3 not in ours  # a zero weight is never drawn
    one_hot = [0.0, 0.0, 2.5, 0.0]  # deterministic: every draw is index 2, in both
    assert list(WeightedRandomSampler(one_hot, 6)) == list(torch.utils.data.WeightedRandomSampler(one_hot, 6)) \
        == [2] * 6
    no_repeat = list(WeightedRandomSampler(weights, 5, replacement=False, generator=rt.Generator().manual_seed(3)))
    torch_no_repeat = list(torch.utils.data.WeightedRandomSampler(weights, 5, replacement=False))
    assert sorted(no_repeat) == sorted(torch_no_repeat) == [0, 1, 2, 4, 5]  # every nonzero index once
    sampler = WeightedRandomSampler(rt.tensor([1.0, 2.0]), 4)
    assert len(sampler) == 4 and sampler.weights.dtype == rt.float64
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        WeightedRandomSampler(weights, 0)
    with pytest.raises(ValueError, match="replacement should be a boolean"):
        WeightedRandomSampler(weights, 3, replacement=None)
    with pytest.raises(ValueError, match=r"weights should be a 1d sequence but given weights have shape \(2, 2\)"):
        WeightedRandomSampler([[1.0, 2.0], [3.0, 4.0]], 3)


def test_subset_random_sampler_permutes_its_indices(torch):
    indices = [10, 20, 30, 40]
    ours = list(SubsetRandomSampler(indices, generator=rt.Generator().manual_seed(0)))
    theirs = list(torch.utils.data.SubsetRandomSampler(indices, generator=torch.Generator().manual_seed(0)))
    assert sorted(ours) == sorted(theirs) == indices and len(SubsetRandomSampler(indices)) == 4
    assert ours == list(SubsetRandomSampler(indices, generator=rt.Generator().manual_seed(0)))


# [SECTION] default_collate

@pytest.mark.filterwarnings("ignore:In future, it will be an error for .np.bool_.:DeprecationWarning")
def test_default_collate_matches_torch(torch):
    from torch.utils.data import default_collate as torch_collate
    cases = [
        [1, 2, 3], [1.5, 2.5], [True, False],
        [np.float32(1), np.float32(2)], [np.int32(4), np.int32(5)], [np.float64(0.5)], [np.bool_(True)],
        [np.arange(3, dtype=np.float32), np.ones(3, dtype=np.float32)], [np.zeros((2, 2), dtype=np.int64)],
        ["a", "b"], [{"x": 1, "y": [1.0, 2.0]}, {"x": 2, "y": [3.0, 4.0]}],
        [Point(1, 2.0), Point(3, 4.0)], [(1, "a"), (2, "b")], [[1, 2], [3, 4]],
    ]
    for batch in cases:
        assert as_plain(default_collate(batch)) == as_plain(torch_collate(batch)), batch
    tensors = [np.arange(6, dtype=np.float32).reshape(2, 3) + k for k in range(4)]
    ours = default_collate([(rt.tensor(t), k) for k, t in enumerate(tensors)])
    theirs = torch_collate([(torch.tensor(t), k) for k, t in enumerate(tensors)])
    assert as_plain(ours) == as_plain(theirs) and tuple(ours[0].shape) == (4, 2, 3)
    assert type(default_collate([Point(1, 2), Point(3, 4)])) is Point


def test_default_collate_errors_match_torch(torch):
    from torch.utils.data import default_collate as torch_collate
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        torch_collate([[1, 2], [3]])
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])
    for batch in ([np.array(["a"]), np.array(["b"])], [object(), object()]):
        with pytest.raises(TypeError):
            torch_collate(batch)
        with pytest.raises(TypeError, match="default_collate: batch must contain"):
            default_collate(batch)
