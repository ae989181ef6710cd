"""Edge cases a PyTorch user hits in the first hour (found by trying the module as one): numpy index
arrays, sizes that overflow int64, long float32 sums, writes through expanded tensors, exception
types that ported `except RuntimeError:` blocks rely on, and hints worded for Python."""
import numpy as np
import pytest

import rustytorch as rt


def test_numpy_arrays_and_scalars_index_like_torch():
    x = rt.arange(5)
    assert x[np.array([1, 3])].tolist() == [1, 3]
    assert x[np.array([True, False, True, False, False])].tolist() == [0, 2]
    assert x[np.int64(2)].item() == 2
    y = rt.zeros(5)
    y[np.array([1, 3])] = 1.0
    assert y.tolist() == [0.0, 1.0, 0.0, 1.0, 0.0]


def test_bad_index_objects_raise_instead_of_crashing():
    class Bad:
        def __index__(self):
            raise ValueError("no index for you")

    with pytest.raises(ValueError, match="no index for you"):
        rt.arange(5)[Bad()]
    with pytest.raises(IndexError, match="out of bounds"):
        rt.arange(5)[2**63]


def test_index_error_names_the_source_dimension():
    x = rt.arange(12).view(3, 4)
    with pytest.raises(IndexError, match="index 10 is out of bounds for dimension 1 with size 4"):
        x[0, 10]
    with pytest.raises(IndexError, match="dimension 2 with size 4"):
        x[None, 1, 7]


def test_sizes_overflowing_int64_are_refused():
    with pytest.raises(RuntimeError, match="more elements than fit in int64"):
        rt.zeros(2**32, 2**32)
    with pytest.raises(RuntimeError, match="more elements than fit in int64"):
        rt.ones(1).expand(2**62, 2**62)
    with pytest.raises(RuntimeError, match="bytes than fit in int64"):
        rt.ones(1).expand(2**62).sum()


def test_long_float32_sums_stay_accurate():
    x = rt.rand(2**24)
    exact = x.numpy().astype(np.float64).sum()
    assert abs(x.sum().item() - exact) <= 1e-6 * exact
    ones = rt.ones(3 * 2**20)
    assert ones.sum().item() == 3 * 2**20
    assert rt.ones(4096, 4097).sum().item() == 4096 * 4097


def test_writes_through_expanded_tensors_are_refused():
    x = rt.zeros(1)
    for write in (lambda v: v.add_(1), lambda v: v.mul_(2), lambda v: v.fill_(3), lambda v: v.exp_()):
        with pytest.raises(RuntimeError, match="single memory location"):
            write(x.expand(3))
    assert x.tolist() == [0.0]
    x.expand(1).add_(1)  # a size-1 broadcast dim is not an overlap
    assert x.tolist() == [1.0]


def test_empty_list_is_float32_like_torch():
    assert rt.tensor([]).dtype == rt.float32
    assert rt.tensor([[], []]).shape == (2, 0)
    assert rt.tensor([]).sum().item() == 0.0


def test_engine_value_and_index_errors_are_also_runtime_errors():
    with pytest.raises(RuntimeError):
        bool(rt.ones(2))
    with pytest.raises(RuntimeError):
        rt.gather(rt.ones(2, 2), 1, rt.tensor([[0, 5], [0, 1]]))
    assert issubclass(rt._C.EngineIndexError, IndexError) and issubclass(rt._C.EngineIndexError, RuntimeError)


def test_hints_are_worded_for_python():
    with pytest.raises(RuntimeError) as info:
        rt.arange(3).mean()
    assert "rt::" not in str(info.value)
    assert "rt.float32" in str(info.value) or "floating" in str(info.value)


def test_large_reductions_over_a_python_dim_argument():
    # Big enough that the binding releases the GIL (1 << 16 elements): the dim argument must be read before.
    # Reading it without the GIL crashed the process for sum(-1) on 16384 x 4.
    x = rt.ones(16384, 4)
    assert x.sum(-1).shape == (16384,) and float(x.sum(-1)[0]) == 4.0
    assert x.mean((-1,)).shape == (16384,)
    assert x.amax(-1).shape == (16384,)
    assert x.logsumexp(-1).shape == (16384,)
    assert x.norm(2, -1).shape == (16384,)
    assert x.var(-1).shape == (16384,)
    assert float((x.pow(2.5)).sum()) == 65536.0
