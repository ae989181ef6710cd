"""Padding layers (torch.nn.ConstantPad1d/2d/3d, ZeroPad1d/2d/3d, ReflectionPad1d/2d/3d,
ReplicationPad1d/2d/3d, CircularPad1d/2d/3d): F.pad with a fixed padding and mode. No parameters.

    rt.nn.ZeroPad2d(1)(x)                     # [N, C, H, W] -> [N, C, H + 2, W + 2]
    rt.nn.ReflectionPad1d((2, 1))(x)          # [N, C, W] -> [N, C, W + 3], mirrored at the edges
    rt.nn.ConstantPad2d((1, 0, 2, 0), 3.5)    # (left, right, top, bottom), filled with 3.5

`padding` is an int (the same on every side) or a tuple of 2 * d ints for the d padded dims, from the
last dim backwards; the 1d/2d/3d layers take an input with one or two dims in front of those (torch's
unbatched and batched forms).
"""
import operator

from .. import functional as F
from .module import Module


class _PadNd(Module):
    _dims = 1
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        count = 2 * self._dims
        if isinstance(padding, int):
            padding = (padding,) * count
        padding = tuple(operator.index(p) for p in padding)
        if len(padding) != count:
            raise ValueError(f"{type(self).__name__}: padding must be an int or a tuple of {count} ints, got "
                             f"{len(padding)} entries {padding}")
        self.padding = padding

    def _check(self, input):
        if input.dim() not in (self._dims + 1, self._dims + 2):
            raise ValueError(f"{type(self).__name__}: expected a {self._dims + 1}-D (unbatched) or "
                             f"{self._dims + 2}-D (batched) input, got {input.dim()}-D of shape {list(input.shape)}")

    def forward(self, input):
        self._check(input)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        self._check(input)
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ConstantPad1d(_ConstantPadNd):
    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    _dims = 3


class ZeroPad1d(_ZeroPadNd):
    _dims = 1


class ZeroPad2d(_ZeroPadNd):
    _dims = 2


class ZeroPad3d(_ZeroPadNd):
    _dims = 3


class ReflectionPad1d(_PadNd):
    _dims = 1
    _mode = "reflect"


class ReflectionPad2d(_PadNd):
    _dims = 2
    _mode = "reflect"


class ReflectionPad3d(_PadNd):
    _dims = 3
    _mode = "reflect"


class ReplicationPad1d(_PadNd):
    _dims = 1
    _mode = "replicate"


class ReplicationPad2d(_PadNd):
    _dims = 2
    _mode = "replicate"


class ReplicationPad3d(_PadNd):
    _dims = 3
    _mode = "replicate"


class CircularPad1d(_PadNd):
    _dims = 1
    _mode = "circular"


class CircularPad2d(_PadNd):
    _dims = 2
    _mode = "circular"


class CircularPad3d(_PadNd):
    _dims = 3
    _mode = "circular"
