"""rt.utils.data: datasets, samplers, DataLoader batching/shuffling/collation and their errors."""
from collections import namedtuple

import numpy as np
import pytest

import rustytorch as rt
import rustytorch.utils.data  # noqa: F401  (until rustytorch/__init__ imports it)
from rustytorch.utils.data import (BatchSampler, DataLoader, Dataset, IterableDataset, SequentialSampler,
                                   TensorDataset, default_collate, random_split)


def dataset(n=10):
    x = rt.arange(n * 3, dtype=rt.float32).reshape(n, 3)
    y = rt.arange(n, dtype=rt.int64)
    return TensorDataset(x, y)


def test_tensor_dataset_indexes_rows():
    ds = dataset()
    assert len(ds) == 10
    x, y = ds[4]
    assert x.tolist() == [12.0, 13.0, 14.0] and int(y.item()) == 4
    with pytest.raises(ValueError, match="Size mismatch between tensors"):
        TensorDataset(rt.zeros(3, 2), rt.zeros(4))


def test_loader_batches_in_order_with_last_partial_batch():
    loader = DataLoader(dataset(), batch_size=4)
    batches = list(loader)
    assert len(loader) == 3 and len(batches) == 3
    assert [tuple(b[0].shape) for b in batches] == [(4, 3), (4, 3), (2, 3)]
    assert batches[2][1].tolist() == [8, 9]
    assert isinstance(batches[0], list) and batches[0][1].dtype == rt.int64


def test_drop_last_drops_the_partial_batch():
    loader = DataLoader(dataset(), batch_size=4, drop_last=True)
    assert len(loader) == 2 and len(list(loader)) == 2


def seen_order(loader):
    return [i for _, y in loader for i in y.tolist()]


def test_shuffle_is_a_permutation_reproducible_with_manual_seed():
    rt.manual_seed(123)
    first = seen_order(DataLoader(dataset(), batch_size=3, shuffle=True))
    rt.manual_seed(123)
    again = seen_order(DataLoader(dataset(), batch_size=3, shuffle=True))
    assert sorted(first) == list(range(10)) and first == again
    loader = DataLoader(dataset(20), batch_size=5, shuffle=True)
    assert seen_order(loader) != seen_order(loader)


def test_shuffle_with_generator():
    if not hasattr(rt, "Generator"):
        pytest.skip("rt.Generator is not bound in this build")
    a = seen_order(DataLoader(dataset(), batch_size=2, shuffle=True, generator=rt.Generator().manual_seed(7)))
    b = seen_order(DataLoader(dataset(), batch_size=2, shuffle=True, generator=rt.Generator().manual_seed(7)))
    assert a == b and sorted(a) == list(range(10))


def test_custom_dataset_and_collate_of_dicts_numbers_and_namedtuples():
    Pair = namedtuple("Pair", "a b")

    class Squares(Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return {"x": float(i), "y": i * i, "flag": i % 2 == 0, "name": f"s{i}", "pair": Pair(i, rt.ones(2) * i)}

    batch = next(iter(DataLoader(Squares(), batch_size=3)))
    assert batch["x"].dtype == rt.float64 and batch["x"].tolist() == [0.0, 1.0, 2.0]
    assert batch["y"].dtype == rt.int64 and batch["y"].tolist() == [0, 1, 4]
    assert batch["flag"].tolist() == [True, False, True]
    assert batch["name"] == ["s0", "s1", "s2"]
    assert isinstance(batch["pair"], Pair) and tuple(batch["pair"].b.shape) == (3, 2)


def test_default_collate_numpy_and_errors():
    out = default_collate([np.ones(2, dtype=np.float32), np.zeros(2, dtype=np.float32)])
    assert tuple(out.shape) == (2, 2) and out.dtype == rt.float32
    with pytest.raises(TypeError, match="batch must contain tensors"):
        default_collate([object(), object()])
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [3]])


def test_custom_collate_fn_and_batch_size_none():
    loader = DataLoader(dataset(4), batch_size=2, collate_fn=lambda samples: len(samples))
    assert list(loader) == [2, 2]
    single = list(DataLoader(dataset(3), batch_size=None))
    assert len(single) == 3 and tuple(single[0][0].shape) == (3,)


def test_batch_sampler_and_sampler_options():
    loader = DataLoader(dataset(), batch_sampler=BatchSampler(SequentialSampler(range(10)), 5, False))
    assert [b[1].tolist() for b in loader] == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    loader = DataLoader(dataset(), batch_size=2, sampler=[9, 8, 7])
    assert seen_order(loader) == [9, 8, 7]


def test_iterable_dataset_is_batched_in_order():
    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(7))

    assert [b.tolist() for b in DataLoader(Stream(), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [b.tolist() for b in DataLoader(Stream(), batch_size=3, drop_last=True)] == [[0, 1, 2], [3, 4, 5]]


def test_random_split_partitions_the_dataset():
    rt.manual_seed(0)
    parts = random_split(dataset(), [7, 3])
    assert [len(p) for p in parts] == [7, 3]
    ids = sorted(int(p[i][1].item()) for p in parts for i in range(len(p)))
    assert ids == list(range(10))
    assert [len(p) for p in random_split(dataset(), [0.5, 0.3, 0.2])] == [5, 3, 2]
    with pytest.raises(ValueError, match="does not equal the length"):
        random_split(dataset(), [4, 4])


def test_concat_dataset_with_plus():
    both = dataset(3) + dataset(2)
    assert len(both) == 5 and int(both[4][1].item()) == 1


@pytest.mark.skipif(rt.cuda.is_available(), reason="checks the behaviour without a usable GPU")
def test_pin_memory_without_a_gpu_warns_and_yields_plain_batches():
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no accelerator is found"):
        loader = DataLoader(dataset(), batch_size=2, pin_memory=True)
    assert loader.pin_memory is False
    plain = DataLoader(dataset(), batch_size=2)
    for (x, y), (px, py) in zip(loader, plain):
        assert rt.equal(x, px) and rt.equal(y, py) and not x.is_pinned()


def test_pin_memory_keeps_the_batch_structure():
    from rustytorch.utils.data.pin_memory import pin_memory
    Pair = namedtuple("Pair", "a b")
    batch = {"names": ["x", "y"], "pair": Pair(1, "z"), "raw": b"bytes", "nested": ([2.5], (3,))}
    out = pin_memory(batch)  # nothing to pin: every leaf passes through, containers keep their type
    assert out == batch and type(out["pair"]) is Pair and type(out["nested"]) is tuple
    assert pin_memory("text") == "text" and pin_memory(7) == 7


def test_loader_option_errors():
    with pytest.raises(ValueError, match="num_workers"):
        DataLoader(dataset(), num_workers=-1)
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        DataLoader(dataset(), sampler=[0, 1], shuffle=True)
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        DataLoader(dataset(), batch_size=0)
    with pytest.raises(ValueError, match="pin_memory_device"):
        DataLoader(dataset(), pin_memory=True, pin_memory_device="xpu")
    with pytest.raises(TypeError, match="__getitem__ and __len__"):
        DataLoader(42)
