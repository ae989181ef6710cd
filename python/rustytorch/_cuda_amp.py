"""rt.cuda.amp: torch.cuda.amp's deprecated spellings of rt.amp.autocast("cuda"), rt.amp.GradScaler("cuda")
and rt.amp.custom_fwd/custom_bwd(device_type="cuda").

`from rustytorch.cuda.amp import autocast, GradScaler, custom_fwd, custom_bwd` keeps working; each warns,
as torch does.
"""
import warnings

from .amp.autocast_mode import autocast as _autocast
from .amp.autocast_mode import custom_bwd as _custom_bwd
from .amp.autocast_mode import custom_fwd as _custom_fwd
from .amp.grad_scaler import GradScaler as _GradScaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


class autocast(_autocast):
    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        warnings.warn("`rt.cuda.amp.autocast(args...)` is deprecated. Please use `rt.amp.autocast('cuda', args...)` "
                      "instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True):
        warnings.warn("`rt.cuda.amp.GradScaler(args...)` is deprecated. Please use `rt.amp.GradScaler('cuda', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    warnings.warn("`rt.cuda.amp.custom_fwd(args...)` is deprecated. Please use `rt.amp.custom_fwd(args..., "
                  "device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return _custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    warnings.warn("`rt.cuda.amp.custom_bwd(args...)` is deprecated. Please use `rt.amp.custom_bwd(args..., "
                  "device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return _custom_bwd(bwd, device_type="cuda")
