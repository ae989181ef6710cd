"""rt.backends.mkldnn: whether CPU convolutions run through oneDNN (torch.backends.mkldnn).

    rt.backends.mkldnn.enabled = False            # conv2d/conv1d on the CPU back on im2col + GEMM
    with rt.backends.mkldnn.flags(enabled=False): # the same for a block, restored after it
        y = conv(x)
    rt.backends.mkldnn.is_available()             # True: rustytorch is built with oneDNN
    rt.backends.mkldnn.version()                  # '2.6.3 (OpenMP, avx512_core_amx)'

mkldnn is PyTorch's name for oneDNN. While enabled (the default; the environment variable RT_ONEDNN=0 starts
a process with it off), float32 CPU convolutions and their gradients, and float32 avg_pool2d, run through
oneDNN, as PyTorch's convolutions do; float64, and any geometry oneDNN has only reference code for, run
im2col + GEMM (the pooling loops). A profile shows which path ran as a nested op: mkldnn_convolution /
mkldnn_convolution_backward or _slow_conv2d_forward / _slow_conv2d_backward; mkldnn_avg_pool2d(_backward).
The switch is the engine's (rt::backends::mkldnn in C++), process-wide (docs/cpu-convolutions.md).
"""
import contextlib
import sys
import types

from .. import _C

__all__ = ["is_available", "version", "enabled", "flags"]


def is_available():
    """True: this rustytorch is built with oneDNN."""
    return _C._backends.mkldnn_is_available()


def version():
    """oneDNN's version, its threading runtime and the instruction set its kernels use on this CPU."""
    return _C._backends.mkldnn_version()


@contextlib.contextmanager
def flags(enabled=False):
    """Sets `enabled` for the block and restores the previous value after it, as torch's flags() does."""
    saved = _C._backends.mkldnn_enabled()
    _C._backends.set_mkldnn_enabled(bool(enabled))
    try:
        yield
    finally:
        _C._backends.set_mkldnn_enabled(saved)


class _MkldnnModule(types.ModuleType):
    """Gives the module its `enabled` attribute, read from and written to the engine."""

    @property
    def enabled(self):
        return _C._backends.mkldnn_enabled()

    @enabled.setter
    def enabled(self, value):
        _C._backends.set_mkldnn_enabled(bool(value))


sys.modules[__name__].__class__ = _MkldnnModule
