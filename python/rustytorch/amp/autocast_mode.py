"""autocast: the context manager (and decorator) that switches mixed precision on, as torch.autocast."""
import functools
import warnings

import rustytorch as rt
from rustytorch import _C

__all__ = ["autocast", "is_autocast_available", "custom_fwd", "custom_bwd"]

# torch's message for ops it refuses to autocast on CUDA.
_BCE_UNSAFE = ("torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
               "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
               "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
               "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
               "safe to autocast.")

_DEVICE_TYPES = ("cuda", "cpu")


def is_autocast_available(device_type):
    """True for the device types autocast supports here: "cuda" and "cpu"."""
    return device_type in _DEVICE_TYPES


class autocast:
    """Runs the ops in its region in mixed precision on one device type.

    with rt.autocast("cuda"):                       # float16
    with rt.autocast("cuda", dtype=rt.bfloat16):
    with rt.autocast("cpu"):                        # bfloat16
    @rt.autocast("cuda")                            # as a decorator
    def forward(...): ...

    enabled=False switches autocast off inside a region (for a part that must run in float32).
    cache_enabled (default: the current setting, True) reuses each parameter's float16 copy
    within the outermost region. A "cuda" region on a machine without a usable GPU warns and
    does nothing, as in torch.
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"autocast: expected device_type to be a str such as 'cuda' or 'cpu', "
                             f"got {type(device_type).__name__}")
        if device_type not in _DEVICE_TYPES:
            raise ValueError(f"autocast: device_type '{device_type}' is not supported; "
                             f"rustytorch autocasts on 'cuda' and 'cpu'")
        self.device = device_type
        self.fast_dtype = _C.get_autocast_dtype(device_type) if dtype is None else dtype
        if self.fast_dtype not in (rt.float16, rt.bfloat16):
            raise ValueError(f"autocast: dtype {self.fast_dtype} is not a lower-precision dtype; use rt.float16 or "
                             f"rt.bfloat16, or enabled=False to run the region in the inputs' own dtypes")
        self._cache_enabled = _C.is_autocast_cache_enabled() if cache_enabled is None else bool(cache_enabled)
        self._enabled = bool(enabled)
        if self._enabled and device_type == "cuda" and not rt.cuda.is_available():
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. Disabling "
                          f"({rt.cuda.unavailable_reason()})")
            self._enabled = False

    def __enter__(self):
        self._prev = (_C.is_autocast_enabled(self.device), _C.get_autocast_dtype(self.device),
                      _C.is_autocast_cache_enabled())
        _C._set_autocast_dtype(self.device, self.fast_dtype)
        _C._set_autocast_enabled(self.device, self._enabled)
        _C._set_autocast_cache_enabled(self._cache_enabled)
        _C._autocast_increment_nesting()
        return None

    def __exit__(self, exc_type, exc, tb):
        if _C._autocast_decrement_nesting() == 0:
            _C.clear_autocast_cache()
        enabled, dtype, cache = self._prev
        _C._set_autocast_enabled(self.device, enabled)
        _C._set_autocast_dtype(self.device, dtype)
        _C._set_autocast_cache_enabled(cache)
        return False

    def __call__(self, func):
        device, dtype, enabled, cache_enabled = self.device, self.fast_dtype, self._enabled, self._cache_enabled

        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with autocast(device, dtype, enabled, cache_enabled):  # a fresh region per call: calls may nest
                return func(*args, **kwargs)

        return decorate_autocast

    def __repr__(self):
        return (f"autocast(device_type='{self.device}', dtype={self.fast_dtype}, enabled={self._enabled}, "
                f"cache_enabled={self._cache_enabled})")


def _first_device_type(args, kwargs):
    for value in (*args, *kwargs.values()):
        if isinstance(value, rt.Tensor):
            return value.device.type
    return None


def _to_float32(value, device_type):
    if (isinstance(value, rt.Tensor) and value.is_floating_point() and value.dtype not in (rt.float32, rt.float64)
            and value.device.type == device_type):
        return value.float()
    return value


def _float32_rule(on_cpu=True, cuda_error=None):
    """The float32 rule for an op written in Python from other ops (a C++ op carries it in its own code,
    Note [Autocast]): in an autocast region its floating inputs are cast to float32 and its body runs with
    autocast off, so it computes and returns float32. on_cpu=False: CUDA regions only (torch's CPU list
    leaves the op alone). cuda_error: the op is refused in CUDA regions, with that message (torch's)."""
    def wrap(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            device_type = _first_device_type(args, kwargs)
            if device_type is None or not _C.is_autocast_enabled(device_type) or (device_type == "cpu" and not on_cpu):
                return fn(*args, **kwargs)
            if device_type == "cuda" and cuda_error:
                raise RuntimeError(cuda_error)
            args = tuple(_to_float32(a, device_type) for a in args)
            kwargs = {k: _to_float32(v, device_type) for k, v in kwargs.items()}
            with autocast(device_type, enabled=False):
                return fn(*args, **kwargs)

        return run

    return wrap


def _cast(value, device_type, dtype):
    """value with its floating tensors on device_type (not float64) cast to dtype, through lists,
    tuples and dicts (torch.amp's _cast)."""
    if isinstance(value, rt.Tensor):
        if value.is_floating_point() and value.device.type == device_type and value.dtype != rt.float64:
            return value.to(dtype)
        return value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, dict):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def _check_device_type(device_type, who):
    if not isinstance(device_type, str):
        raise ValueError(f"{who}: expected `device_type` of type `str`, got: `{type(device_type)}`")
    if device_type not in _DEVICE_TYPES:
        raise ValueError(f"{who}: device_type '{device_type}' is not supported; rustytorch autocasts on 'cuda' and 'cpu'")


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorates the forward of a custom rt.autograd.Function for autocast regions (torch.amp.custom_fwd).

        class MyMM(rt.autograd.Function):
            @staticmethod
            @rt.amp.custom_fwd(device_type="cuda", cast_inputs=rt.float32)
            def forward(ctx, a, b): ...          # in a region: a and b come in float32, autocast off inside
            @staticmethod
            @rt.amp.custom_bwd(device_type="cuda")
            def backward(ctx, grad): ...         # autocast as it was in forward

    cast_inputs=None: forward runs under the region as it is (its ops autocast); a dtype: inside an
    enabled region the floating tensor arguments on device_type are cast to it and forward runs with
    autocast off; outside a region forward runs unchanged."""
    _check_device_type(device_type, "custom_fwd")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = _C.get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = _C.is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if _C.is_autocast_enabled(device_type):
            with autocast(device_type, enabled=False):
                return fwd(ctx, *_cast(args[1:], device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorates the backward of a custom rt.autograd.Function whose forward has custom_fwd: backward runs
    with autocast as forward had it (enabled or not, same dtype), as torch.amp.custom_bwd."""
    _check_device_type(device_type, "custom_bwd")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        if not hasattr(ctx, "_fwd_used_autocast"):
            raise RuntimeError(f"custom_bwd: the forward of this function has no custom_fwd(device_type="
                               f"'{device_type}') decorator; add it, or remove custom_bwd")
        with autocast(device_type, dtype=ctx._dtype, enabled=ctx._fwd_used_autocast):
            return bwd(*args, **kwargs)

    return decorate_bwd
