"""rt.backends: switches of the compute backends, under torch.backends' names.

    rt.backends.cuda.matmul.allow_tf32 = True     # TF32 float32 matrix products on CUDA
    rt.backends.cuda.is_built()                   # compiled with the CUDA backend
"""
from . import cuda  # noqa: F401
