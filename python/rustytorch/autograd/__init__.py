"""rustytorch.autograd: grad, backward, custom functions, anomaly detection (torch.autograd's API)."""
from .. import _C
from .._grad_mode import enable_grad, no_grad, set_grad_enabled
from .function import Function, FunctionCtx, once_differentiable

__all__ = ["Function", "FunctionCtx", "once_differentiable", "grad", "backward", "set_detect_anomaly", "detect_anomaly", "no_grad", "enable_grad",
           "set_grad_enabled", "is_anomaly_enabled"]

is_anomaly_enabled = _C.is_anomaly_enabled


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, _C.Tensor):
        return (x,)
    return tuple(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates gradients of `tensors` into the leaves' .grad."""
    if create_graph:
        raise NotImplementedError("backward(create_graph=True): higher-order gradients are not supported")
    if inputs is not None:
        raise NotImplementedError("backward(inputs=...) is not supported; use rustytorch.autograd.grad")
    _C._backward(_as_tuple(tensors), _as_tuple(grad_tensors), bool(retain_graph))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=False, is_grads_batched=False):
    """Returns the gradients of `outputs` with respect to `inputs` (a tuple), leaving .grad alone."""
    if is_grads_batched:
        raise NotImplementedError("grad(is_grads_batched=True) is not supported")
    if retain_graph is None:
        retain_graph = create_graph
    return _C._grad(_as_tuple(outputs), _as_tuple(inputs), _as_tuple(grad_outputs), bool(retain_graph),
                    bool(create_graph), bool(allow_unused))


class set_detect_anomaly:
    """Turns anomaly detection on or off now; restores the previous state when used with `with`."""

    def __init__(self, mode, check_nan=True):
        self._prev = _C.is_anomaly_enabled()
        _C._set_anomaly_enabled(bool(mode))

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _C._set_anomaly_enabled(self._prev)
        return False


class detect_anomaly:
    """Context manager / decorator: backward raises naming the forward op that produced NaN/Inf."""

    def __init__(self, check_nan=True):
        self._prev = None

    def __enter__(self):
        self._prev = _C.is_anomaly_enabled()
        _C._set_anomaly_enabled(True)

    def __exit__(self, *exc):
        _C._set_anomaly_enabled(self._prev)
        return False

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with detect_anomaly():
                return func(*args, **kwargs)

        return wrapper
