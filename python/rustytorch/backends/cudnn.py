"""rt.backends.cudnn: torch.backends.cudnn's switches, for scripts that set them while seeding.

    rt.backends.cudnn.deterministic = True     # as written in PyTorch scripts; see below
    rt.backends.cudnn.benchmark = False
    rt.backends.cudnn.is_available()           # False: rustytorch has no cuDNN

rustytorch does not use cuDNN: its CUDA convolutions, pooling and normalisations are its own kernels.
So, as in a PyTorch build without cuDNN (Debian's, for one), is_available() is False, version() is None,
and the flags keep PyTorch's defaults and whatever a script assigns, without selecting anything.
"""

__all__ = ["is_available", "version", "enabled", "benchmark", "deterministic", "allow_tf32"]

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available():
    """False: rustytorch is never built with cuDNN."""
    return False


def version():
    """None, as torch.backends.cudnn.version() answers without cuDNN."""
    return None
