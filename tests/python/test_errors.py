"""Engine errors surface as the exception torch raises in the same situation, message intact."""
import pytest

import rustytorch as rt
import rustytorch.nn.functional as F


def test_shape_error_is_runtime_error_with_full_message():
    with pytest.raises(RuntimeError) as e:
        rt.zeros(64, 784) @ rt.zeros(128, 10)
    msg = str(e.value)
    assert "matmul" in msg and "[64, 784]" in msg and "[128, 10]" in msg


def test_broadcast_error():
    with pytest.raises(RuntimeError, match=r"\[3\].*\[4\]|\[4\].*\[3\]"):
        rt.zeros(3) + rt.zeros(4)


def test_index_error_kind():
    with pytest.raises(IndexError):
        rt.zeros(2, 3).transpose(0, 5)
    with pytest.raises(IndexError):
        rt.zeros(2).sum(3)


def test_dtype_errors():
    with pytest.raises(RuntimeError, match="can't be cast"):
        x = rt.zeros(3, dtype=rt.int64)
        x += 1.5
    with pytest.raises(ValueError, match="floating point"):
        rt.zeros(2, dtype=rt.int64, requires_grad=True)


def test_autograd_errors():
    w = rt.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.add_(1)
    y = (w * 2).sum()
    y.backward()
    with pytest.raises(RuntimeError):
        y.backward()
    with pytest.raises(RuntimeError):
        rt.ones(2).sum().backward()


def test_type_errors_for_bad_arguments():
    with pytest.raises(TypeError):
        rt.zeros("a")
    with pytest.raises(TypeError):
        rt.exp([1, 2])
    with pytest.raises(TypeError, match="unsupported operand"):
        rt.ones(2) + "x"
    with pytest.raises(TypeError, match="Tensor or a number"):
        rt.add(rt.ones(2), "x")


def test_value_errors():
    with pytest.raises(ValueError, match="dropout probability"):
        F.dropout(rt.ones(2), p=1.5)
    with pytest.raises(ValueError, match="only one element tensors"):
        rt.ones(3).item()
    with pytest.raises(ValueError):
        F.cross_entropy(rt.zeros(2, 3), rt.tensor([0, 1]), reduction="avg")


def test_not_implemented_names_what_is_missing():
    with pytest.raises(NotImplementedError, match="derivative for floor_divide"):
        (rt.ones(2, requires_grad=True) // 2).sum().backward()
    with pytest.raises(NotImplementedError, match="return_indices"):  # F.max_pool2d composes it in Python
        rt._C.max_pool2d(rt.ones(1, 1, 2, 2), 2, return_indices=True)


def test_cross_entropy_target_errors():
    with pytest.raises((RuntimeError, IndexError)):
        F.cross_entropy(rt.zeros(2, 3), rt.tensor([0, 7]))


def test_anomaly_mode_names_forward_op():
    x = rt.tensor([0.0, 1.0], requires_grad=True)
    with rt.autograd.detect_anomaly():
        y = x.sqrt().sum()
        with pytest.raises(RuntimeError, match="(?i)sqrt"):
            y.backward()
