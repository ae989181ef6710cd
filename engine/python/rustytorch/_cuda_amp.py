"""rt.cuda.amp: torch.cuda.amp's deprecated spellings of rt.amp.autocast("cuda") and rt.amp.GradScaler("cuda").

`from rustytorch.cuda.amp import autocast, GradScaler` keeps working; each warns, as torch does.
"""
import warnings

from .amp.autocast_mode import autocast as _autocast
from .amp.grad_scaler import GradScaler as _GradScaler

__all__ = ["autocast", "GradScaler"]


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
