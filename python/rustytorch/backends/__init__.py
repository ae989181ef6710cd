"""rt.backends: switches of the compute backends, under torch.backends' names.

    rt.backends.cuda.matmul.allow_tf32 = True     # TF32 float32 matrix products on CUDA
    rt.backends.cuda.is_built()                   # compiled with the CUDA backend
    rt.backends.cudnn.deterministic = True        # accepted; rustytorch has no cuDNN (cudnn.py)
    rt.backends.mkldnn.enabled = False            # CPU convolutions on im2col + GEMM instead of oneDNN
    rt.backends.mps.is_available()                # False: no Apple GPU backend
    rt.backends.cpu.get_cpu_capability()          # "AVX512", "AVX2" or "DEFAULT" (RT_CPU_CAPABILITY)
"""
from . import cpu, cuda, cudnn, mkldnn, mps  # noqa: F401
