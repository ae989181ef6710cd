"""MaxPool2d, AvgPool2d and AdaptiveAvgPool2d over NCHW input (torch.nn). No parameters. The 1-D, 3-D
and adaptive max layers are in pooling_more.py.

    pool = rt.nn.MaxPool2d(2)                      # stride defaults to kernel_size
    y = pool(rt.randn(8, 16, 32, 32))              # [8, 16, 16, 16]
    gap = rt.nn.AdaptiveAvgPool2d(1)               # [N, C, 1, 1]
"""
from .. import functional as F
from .module import Module


class _MaxPoolNd(Module):
    """MaxPool1d/2d/3d: the same arguments, each subclass names its functional."""
    _function = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return self._function(input, self.kernel_size, self.stride, self.padding, self.dilation,
                              ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool2d(_MaxPoolNd):
    _function = staticmethod(F.max_pool2d)


class _AvgPoolNd(Module):
    """AvgPool2d and AvgPool3d: the same arguments, each subclass names its functional."""
    _functional = None  # the name of the F.avg_pool* function

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return getattr(F, self._functional)(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    _functional = "avg_pool2d"


class AdaptiveAvgPool2d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"
