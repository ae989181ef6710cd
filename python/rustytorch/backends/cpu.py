"""rt.backends.cpu (torch.backends.cpu): the CPU kernels' instruction-set level.

    rt.backends.cpu.get_cpu_capability()   # "AVX512", "AVX2" or "DEFAULT"

The engine compiles its hot CPU kernels for three levels and runs the highest this CPU supports;
RT_CPU_CAPABILITY=default|avx2|avx512 in the environment (read once, before the first kernel runs)
forces a lower one, as ATEN_CPU_CAPABILITY does for PyTorch. A level above the CPU's runs at the
CPU's highest, with a warning.
"""
from .. import _C


def get_cpu_capability():
    return _C._get_cpu_capability()
