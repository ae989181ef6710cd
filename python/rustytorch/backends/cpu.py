"""rt.backends.cpu (torch.backends.cpu): the CPU kernels' instruction-set level, and one fusion switch.

    rt.backends.cpu.get_cpu_capability()          # "AVX512", "AVX2" or "DEFAULT"
    rt.backends.cpu.fuse_linear_activation = False  # nn.Sequential runs Linear, then ReLU, as two ops

The engine compiles its hot CPU kernels for three levels and runs the highest this CPU supports;
RT_CPU_CAPABILITY=default|avx2|avx512 in the environment (read once, before the first kernel runs)
forces a lower one, as ATEN_CPU_CAPABILITY does for PyTorch. A level above the CPU's runs at the
CPU's highest, with a warning.

fuse_linear_activation (True unless the process started with RT_FUSE_LINEAR_ACTIVATION=0): nn.Sequential
runs a Linear followed by ReLU, GELU, SiLU, Sigmoid or Tanh as one op that adds the bias and applies the
activation in one pass over the output, with the same values and autograd graph; a profile shows the
activation nested in `linear`. PyTorch has no such switch (its compiler fuses; eager mode does not).
"""
import sys
import types

from .. import _C

__all__ = ["get_cpu_capability", "fuse_linear_activation"]


def get_cpu_capability():
    return _C._get_cpu_capability()


class _CpuModule(types.ModuleType):
    """Gives the module its `fuse_linear_activation` attribute, read from and written to the engine."""

    @property
    def fuse_linear_activation(self):
        return _C._backends.fuse_linear_activation()

    @fuse_linear_activation.setter
    def fuse_linear_activation(self, value):
        _C._backends.set_fuse_linear_activation(bool(value))


sys.modules[__name__].__class__ = _CpuModule
