"""numpy interop: zero-copy numpy()/from_numpy, copies through rt.tensor, __array__, dtypes."""
import gc

import numpy as np
import pytest

import rustytorch as rt


@pytest.mark.parametrize("np_dtype,rt_dtype", [(np.float32, "float32"), (np.float64, "float64"),
                                               (np.float16, "float16"), (np.int64, "int64"),
                                               (np.int32, "int32"), (np.uint8, "uint8"), (np.bool_, "bool")])
def test_round_trip_dtypes(np_dtype, rt_dtype):
    a = (np.arange(6) % 2 if np_dtype is np.bool_ else np.arange(6)).astype(np_dtype).reshape(2, 3)
    t = rt.from_numpy(a)
    assert t.dtype is getattr(rt, rt_dtype) and t.shape == (2, 3)
    back = t.numpy()
    assert back.dtype == a.dtype
    np.testing.assert_array_equal(back, a)


def test_from_numpy_shares_memory_and_keeps_array_alive():
    a = np.zeros((3, 4), dtype=np.float32)
    t = rt.from_numpy(a)
    a[1, 2] = 5
    assert t[1, 2].item() == 5
    t[0, 0] = 7
    assert a[0, 0] == 7
    del a
    gc.collect()
    assert t[0, 0].item() == 7 and t.sum().item() == 12


def test_from_numpy_strided_views():
    a = np.arange(24, dtype=np.float64).reshape(4, 6)[::2, 1::2]
    t = rt.from_numpy(a)
    np.testing.assert_array_equal(t.numpy(), a)
    assert t.stride() == (12, 2)
    np.testing.assert_array_equal(rt.from_numpy(np.arange(6.0).reshape(2, 3).T).numpy(), np.arange(6.0).reshape(2, 3).T)


def test_numpy_shares_memory_and_keeps_tensor_alive():
    t = rt.arange(6.0).view(2, 3)
    a = t.numpy()
    a[0, 1] = 42
    assert t[0, 1].item() == 42
    v = t.t().numpy()
    assert v.shape == (3, 2) and v[1, 0] == 42
    del t
    gc.collect()
    assert a[0, 1] == 42 and v[1, 0] == 42


def test_numpy_refuses_requires_grad_and_bfloat16():
    with pytest.raises(ValueError, match="detach"):
        rt.ones(2, requires_grad=True).numpy()
    assert rt.ones(2, requires_grad=True).numpy(force=True).tolist() == [1, 1]
    with pytest.raises(TypeError, match="BFloat16"):
        rt.ones(2, dtype=rt.bfloat16).numpy()


def test_from_numpy_errors():
    with pytest.raises(ValueError, match="negative"):
        rt.from_numpy(np.arange(4.0)[::-1])
    with pytest.raises(TypeError, match="int16"):
        rt.from_numpy(np.zeros(2, dtype=np.int16))
    with pytest.raises(TypeError, match="expected np.ndarray"):
        rt.from_numpy([1, 2])


def test_tensor_copies_numpy_and_infers_dtype(torch):
    a = np.ones(3, dtype=np.float64)
    t = rt.tensor(a)
    a[0] = 5
    assert t.tolist() == [1, 1, 1] and t.dtype is rt.float64
    for data in ([1, 2], [1.0, 2], [[True], [False]], 3, 2.5, np.int32(3), [np.float32(1.5)]):
        assert str(rt.tensor(data).dtype).split(".")[1] == str(torch.tensor(data).dtype).split(".")[1]
    for data in (np.array(3.0), np.float64(2.5), np.int32(3), np.zeros((2, 0, 3)), np.ones((1, 2))):
        assert list(rt.tensor(data).shape) == list(torch.tensor(data).shape)   # 0-d stays 0-d


def test_array_protocol_and_tolist():
    t = rt.tensor([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(np.asarray(t), t.numpy())
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert np.add(t.numpy(), 1).sum() == 14
    assert t.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert rt.tensor(np.float16(1.5)).dtype is rt.float16


def test_float16_via_numpy():
    t = rt.tensor([1.5, 2.25], dtype=rt.float16)
    a = t.numpy()
    assert a.dtype == np.float16 and a.tolist() == [1.5, 2.25]
