"""Upsample, UpsamplingNearest2d and UpsamplingBilinear2d (torch.nn): F.interpolate as a layer. No parameters.

    rt.nn.Upsample(scale_factor=2, mode="nearest")(x)            # [N, C, H, W] -> [N, C, 2H, 2W]
    rt.nn.Upsample(size=(64, 64), mode="bilinear")(x)
    rt.nn.UpsamplingBilinear2d(scale_factor=2)(x)                 # bilinear with align_corners=True

The modes and rules are F.interpolate's (see nn/_functional_interpolate.py).
"""
from .. import functional as F
from .module import Module


class Upsample(Module):
    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, (tuple, list)):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return info + f", mode={self.mode}"


class UpsamplingNearest2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
