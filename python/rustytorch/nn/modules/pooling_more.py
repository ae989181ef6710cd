"""MaxPool1d/3d, AvgPool1d/3d, AdaptiveMaxPool1d/2d and AdaptiveAvgPool1d (torch.nn). No parameters.

    pool = rt.nn.MaxPool1d(3, stride=2)                  # [N, C, L] -> [N, C, (L - 3) // 2 + 1]
    y, idx = rt.nn.AdaptiveMaxPool2d((4, 4), return_indices=True)(x)
    y = rt.nn.AvgPool3d(2)(rt.randn(2, 3, 8, 8, 8))      # [2, 3, 4, 4, 4]

stride defaults to kernel_size; unbatched input (no N) is accepted as in torch. See
nn/_functional_pooling.py for how each is computed.
"""
from .. import functional as F
from .module import Module
from .pooling import _AvgPoolNd, _MaxPoolNd


class MaxPool1d(_MaxPoolNd):
    _function = staticmethod(F.max_pool1d)


class MaxPool3d(_MaxPoolNd):
    _function = staticmethod(F.max_pool3d)


class AvgPool1d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


def _single(value):
    return (value,) if isinstance(value, int) else tuple(value)


class AvgPool3d(_AvgPoolNd):
    _functional = "avg_pool3d"


class _AdaptiveMaxPoolNd(Module):
    _function = None

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):
        return self._function(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    _function = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    _function = staticmethod(F.adaptive_max_pool2d)


class AdaptiveAvgPool1d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"
