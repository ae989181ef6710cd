"""rustytorch: PyTorch's Python API over the RustyTorch++ engine.

    import rustytorch as rt
    x = rt.randn(64, 784)
    w = rt.zeros(784, 10, requires_grad=True)
    loss = (x @ w).relu().sum()
    loss.backward()                      # w.grad is now [784, 10]
    with rt.no_grad():
        w -= 0.1 * w.grad

Names and semantics follow torch; engine errors surface as the exception torch raises
(RuntimeError, IndexError, ValueError, TypeError, NotImplementedError), Ctrl+C during a long op
raises KeyboardInterrupt.
"""
from . import _C
from ._C import Tensor, device, dtype  # noqa: F401

# Every public engine function (rt.exp, rt.matmul, rt.cat, ...).
for _name in dir(_C):
    if not _name.startswith("_") and _name not in ("Node",):
        globals()[_name] = getattr(_C, _name)
del _name


class Size(tuple):
    """The shape of a tensor: a tuple of ints (torch.Size)."""

    def __repr__(self):
        return f"rustytorch.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return Size(r) if isinstance(item, slice) else r

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __reduce__(self):
        return (Size, (tuple(self),))


Size.__module__ = "rustytorch"
_C._set_size_type(Size)

float32, float64, float16, bfloat16 = _C.float32, _C.float64, _C.float16, _C.bfloat16
int64, int32, uint8, bool = _C.int64, _C.int32, _C.uint8, _C.bool  # noqa: A001
float, double, half = float32, float64, float16  # noqa: A001 -- torch's dtype aliases
long, int = int64, int32  # noqa: A001

from . import _tensor  # noqa: E402,F401 -- installs the Python-side Tensor methods
from ._factories import *  # noqa: E402,F401,F403
from ._grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled  # noqa: E402,F401
from ._random import (Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed,  # noqa: E402,F401
                      set_rng_state)
from ._functions import *  # noqa: E402,F401,F403
from ._shape_ops import *  # noqa: E402,F401,F403
from ._product_ops import *  # noqa: E402,F401,F403
from ._einsum import *  # noqa: E402,F401,F403
from ._distance_ops import *  # noqa: E402,F401,F403
from ._counting_ops import *  # noqa: E402,F401,F403
from ._rounding_ops import *  # noqa: E402,F401,F403
from ._index_ops import *  # noqa: E402,F401,F403
from ._interop import *  # noqa: E402,F401,F403
from ._print_options import set_printoptions  # noqa: E402,F401
from . import autograd  # noqa: E402,F401
from . import backends, cuda  # noqa: E402,F401
from . import debug  # noqa: E402,F401
from . import remote  # noqa: E402,F401
from . import ops  # noqa: E402,F401
import builtins as _builtins  # noqa: E402

from . import amp  # noqa: E402,F401
from .amp import autocast  # noqa: E402,F401
from ._C import get_num_threads, set_num_threads  # noqa: E402,F401
from ._C import (clear_autocast_cache, get_autocast_dtype, is_autocast_cache_enabled,  # noqa: E402,F401
                 is_autocast_enabled)


# The autocast state functions, torch's current names and the older per-device ones. (`bool` in this module
# is the dtype rt.bool, hence builtins.bool.)
def set_autocast_enabled(device_type, enabled=None):
    """set_autocast_enabled("cuda", True); the old one-argument form set_autocast_enabled(True) means CUDA."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    _C._set_autocast_enabled(device_type, _builtins.bool(enabled))


def set_autocast_dtype(device_type, dtype):
    _C._set_autocast_dtype(device_type, dtype)


def set_autocast_cache_enabled(enabled):
    _C._set_autocast_cache_enabled(_builtins.bool(enabled))


def is_autocast_cpu_enabled():
    return _C.is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    return _C.get_autocast_dtype("cpu")


def get_autocast_gpu_dtype():
    return _C.get_autocast_dtype("cuda")


def set_autocast_cpu_dtype(dtype):
    _C._set_autocast_dtype("cpu", dtype)


def set_autocast_gpu_dtype(dtype):
    _C._set_autocast_dtype("cuda", dtype)


def _lazy(name):
    import importlib
    return importlib.import_module("." + name, __name__)


def __getattr__(name):
    # nn, optim, utils, profiler and serialization are written on top of this module; import on first use
    # so that `import rustytorch` works while they import rustytorch themselves.
    if name in ("nn", "optim", "utils", "profiler", "serialization"):
        return _lazy(name)
    if name in ("save", "load"):
        return getattr(_lazy("serialization"), name)
    raise AttributeError(f"module 'rustytorch' has no attribute '{name}'")


__version__ = "0.1.0"


remote._serve_if_requested()
