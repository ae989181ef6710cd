"""PixelShuffle and PixelUnshuffle (torch.nn): sub-pixel convolution's rearrangement. No parameters.

    rt.nn.PixelShuffle(2)(x)      # [N, C * 4, H, W] -> [N, C, 2H, 2W]
    rt.nn.PixelUnshuffle(2)(y)    # [N, C, 2H, 2W] -> [N, C * 4, H, W]
"""
from .. import functional as F
from .module import Module


class PixelShuffle(Module):
    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"
