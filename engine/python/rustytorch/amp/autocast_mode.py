"""autocast: the context manager (and decorator) that switches mixed precision on, as torch.autocast."""
import functools
import warnings

import rustytorch as rt
from rustytorch import _C

__all__ = ["autocast", "is_autocast_available"]

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
