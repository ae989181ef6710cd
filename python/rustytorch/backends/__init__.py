"""rt.backends: switches of the compute backends, under torch.backends' names.

    rt.backends.cuda.matmul.allow_tf32 = True     # TF32 float32 matrix products on CUDA
    rt.backends.cuda.is_built()                   # compiled with the CUDA backend
    rt.backends.cudnn.deterministic = True        # accepted; rustytorch has no cuDNN (cudnn.py)
    rt.backends.mps.is_available()                # False: no Apple GPU backend
    rt.backends.cpu.get_cpu_capability()          # "AVX512", "AVX2" or "DEFAULT" (RT_CPU_CAPABILITY)
"""
from . import cpu, cuda, cudnn, mps  # noqa: F401
