"""rt.backends.mps: torch.backends.mps's queries, for scripts that pick their device with them.

    device = "cuda" if rt.cuda.is_available() else "mps" if rt.backends.mps.is_available() else "cpu"

rustytorch has no Metal (Apple GPU) backend: both answers are False.
"""

__all__ = ["is_available", "is_built"]


def is_available():
    """False: rustytorch has no MPS device."""
    return False


def is_built():
    """False: rustytorch is never built with the MPS backend."""
    return False
