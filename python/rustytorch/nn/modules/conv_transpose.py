"""ConvTranspose1d, ConvTranspose2d and ConvTranspose3d (torch.nn), the adjoint of Conv1d/2d/3d.

    up = rt.nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1, output_padding=1)   # weight [16, 8, 3, 3]
    y = up(rt.randn(4, 16, 7, 7))                                                  # [4, 8, 14, 14]
    y = up(x, output_size=[13, 13])          # picks output_padding so that the output is 13 x 13

Size: out = (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1. The weight is
[in_channels, out_channels / groups, *kernel_size], initialised as torch does (kaiming_uniform_(a=sqrt(5)),
its fan_in taken from the weight's dim 1), so a torch state_dict loads unchanged.
"""
from .. import functional as F
from .conv import _ConvNd


class _ConvTransposeNd(_ConvNd):
    _function = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}, got '
                             f"{padding_mode!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype, transposed=True, output_padding=output_padding)

    def _output_padding(self, input, output_size):
        """output_padding giving output_size (its last len(kernel_size) entries), checked against the sizes
        this layer can produce."""
        if output_size is None:
            return self.output_padding
        n = self._dims
        output_size = [int(v) for v in output_size]
        if len(output_size) == n + 2:
            output_size = output_size[2:]
        if len(output_size) != n:
            raise ValueError(f"{type(self).__name__}: output_size must have {n} or {n + 2} elements (got "
                             f"{len(output_size)})")
        sizes = list(input.shape[-n:])
        padding = []
        for i in range(n):
            smallest = ((sizes[i] - 1) * self.stride[i] - 2 * self.padding[i]
                        + self.dilation[i] * (self.kernel_size[i] - 1) + 1)
            largest = smallest + self.stride[i] - 1
            if not smallest <= output_size[i] <= largest:
                raise ValueError(f"{type(self).__name__}: requested an output size of {output_size}, but valid "
                                 f"sizes range from {smallest} to {largest} (for an input of "
                                 f"{list(input.shape)[-n:]}) in dim {i}")
            padding.append(output_size[i] - smallest)
        return tuple(padding)

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return self._function(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                              self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    _dims = 1
    _function = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    _dims = 2
    _function = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    _dims = 3
    _function = staticmethod(F.conv_transpose3d)
