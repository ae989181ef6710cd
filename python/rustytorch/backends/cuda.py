"""rt.backends.cuda: the CUDA backend's switches (torch.backends.cuda).

    rt.backends.cuda.matmul.allow_tf32 = True     # float32 matmul/linear on CUDA through TF32
    assert rt.backends.cuda.matmul.allow_tf32

allow_tf32 is the engine's one switch (rt.cuda.set_allow_tf32 sets it too): off by default, as in
torch; on, float32 products on CUDA run on tensor cores with about 3e-4 relative error instead of
float32's 1e-6. CPU products never use TF32. In a build without CUDA the switch does not exist and
reads False.
"""
from .. import _C

__all__ = ["is_built", "matmul"]


def is_built():
    """True when this rustytorch was compiled with the CUDA backend (whether or not a GPU is present)."""
    return _C._cuda.is_built()


class _MatmulSettings:
    """rt.backends.cuda.matmul: attribute allow_tf32 (bool); other attributes are refused."""

    __slots__ = ()

    @property
    def allow_tf32(self):
        return _C._cuda.allow_tf32()

    @allow_tf32.setter
    def allow_tf32(self, allow):
        _C._cuda.set_allow_tf32(bool(allow))

    def __repr__(self):
        return f"rt.backends.cuda.matmul(allow_tf32={self.allow_tf32})"


matmul = _MatmulSettings()
