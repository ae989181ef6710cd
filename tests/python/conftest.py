"""Shared fixtures for the rustytorch tests: conversions between rt, torch and numpy, and
tolerance checks. torch (Debian python3-torch) is the reference; tests that need it skip
cleanly when it is missing."""
import numpy as np
import pytest

import rustytorch as rt

TOLERANCE = {"float32": 1e-5, "float64": 1e-10}


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def to_numpy(t):
    """numpy copy of an rt or torch tensor (float16/bfloat16 widened to float32)."""
    if t is None:
        return None
    d = t.detach()
    if str(d.dtype).endswith(("bfloat16", "float16")):
        d = d.float()
    return np.array(d.numpy(), copy=True)


def rt_from_torch(t, requires_grad=False):
    r = rt.tensor(t.detach().numpy())
    return r.requires_grad_() if requires_grad else r


def assert_close(actual, expected, dtype_name, what=""):
    a, e = to_numpy(actual), to_numpy(expected)
    assert a.shape == e.shape, f"{what}: shape {a.shape} != {e.shape}"
    tol = TOLERANCE.get(dtype_name, 1e-5)
    if a.dtype == np.bool_ or np.issubdtype(a.dtype, np.integer):
        np.testing.assert_array_equal(a, e, err_msg=what)
        return
    # Relative to the result's magnitude: elements near zero are compared against the scale
    # of the whole result, as rounding errors are.
    scale = float(np.max(np.abs(e[np.isfinite(e)]), initial=1.0))
    np.testing.assert_allclose(a, e, rtol=tol, atol=tol * scale, err_msg=what)


@pytest.fixture(autouse=True)
def _grad_mode_reset():
    rt.set_grad_enabled(True)
    yield
    rt.set_grad_enabled(True)
