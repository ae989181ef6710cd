"""F.grid_sample and F.affine_grid (spatial transformers), composed from engine ops (gather, where, matmul),
so autograd gives the gradients for the input, the grid and theta. rt.nn.functional re-exports them.

    theta = rt.tensor([[[0.9, -0.2, 0.1], [0.2, 0.9, 0.0]]])          # [N, 2, 3]
    grid = F.affine_grid(theta, [1, 3, 32, 32], align_corners=False)  # [N, H, W, 2], (x, y) in [-1, 1]
    out = F.grid_sample(img, grid, mode="bilinear", padding_mode="border", align_corners=False)

grid_sample takes 4-D inputs [N, C, H, W] and grids [N, Ho, Wo, 2]; modes bilinear and nearest (rounding
half to even, as torch does), padding modes zeros, border and reflection. Each output reads its corner
pixels with one gather per corner on the flattened input; corners outside the image count as zero. As in
torch, a clipped coordinate (border, reflection) passes no gradient to the grid, the border itself
included, and the nearest mode gives the grid a zero gradient. affine_grid builds 2-D ([N, 2, 3] theta,
4-D size) and 3-D ([N, 3, 4] theta, 5-D size) grids. align_corners=None means False, torch's default.
"""
from .. import _C

__all__ = ["grid_sample", "affine_grid"]

_PADDING_MODES = ("zeros", "border", "reflection")


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if mode == "bicubic":
        raise NotImplementedError("grid_sample(mode='bicubic') is not supported by rustytorch; use 'bilinear' "
                                  "or 'nearest'")
    if padding_mode not in _PADDING_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if input.dim() == 5:
        raise NotImplementedError("grid_sample on 5-D (volumetric) inputs is not supported by rustytorch; only "
                                  "4-D inputs [N, C, H, W] with grids [N, H_out, W_out, 2]")
    if input.dim() != 4 or grid.dim() != 4 or grid.shape[3] != 2:
        raise ValueError(f"grid_sample: expected a 4-D input [N, C, H, W] and a grid [N, H_out, W_out, 2], got "
                         f"input of shape {list(input.shape)} and grid of shape {list(grid.shape)}")
    if input.shape[0] != grid.shape[0]:
        raise ValueError(f"grid_sample: expected grid and input to have the same batch size, but got input of "
                         f"shape {list(input.shape)} and grid of shape {list(grid.shape)}")
    if input.dtype != grid.dtype or not input.is_floating_point():
        raise TypeError(f"grid_sample: expected input and grid to have the same floating-point dtype, got "
                        f"{input.dtype} and {grid.dtype}")
    if input.shape[2] == 0 or input.shape[3] == 0:
        raise ValueError(f"grid_sample: expected input to have non-empty spatial dimensions, got shape "
                         f"{list(input.shape)}")
    align_corners = bool(align_corners)
    n, c, h, w = input.shape
    ix = _source_coord(grid.select(3, 0), w, padding_mode, align_corners)
    iy = _source_coord(grid.select(3, 1), h, padding_mode, align_corners)
    flat = input.reshape(n, c, h * w)
    if mode == "nearest":
        # round() has a zero gradient: the product keeps the grid in the graph so grid.grad is zeros, as torch's.
        weight = (ix.round() + iy.round()) * 0.0 + 1.0
        return _tap(flat, iy.round().long(), ix.round().long(), weight, h, w).reshape(n, c, *grid.shape[1:3])
    x0, y0 = ix.floor(), iy.floor()
    x1, y1 = x0 + 1, y0 + 1
    x0i, y0i = x0.long(), y0.long()
    x1i, y1i = x0i + 1, y0i + 1
    out = (_tap(flat, y0i, x0i, (x1 - ix) * (y1 - iy), h, w) + _tap(flat, y0i, x1i, (ix - x0) * (y1 - iy), h, w)
           + _tap(flat, y1i, x0i, (x1 - ix) * (iy - y0), h, w) + _tap(flat, y1i, x1i, (ix - x0) * (iy - y0), h, w))
    return out.reshape(n, c, *grid.shape[1:3])


def _tap(flat, yi, xi, weight, h, w):
    """weight * input[n, :, yi, xi] for every grid point, zero where (yi, xi) lies outside the image."""
    n, c, _ = flat.shape
    inside = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
    index = (yi.clamp(0, h - 1) * w + xi.clamp(0, w - 1)).reshape(n, 1, -1).expand(n, c, -1)
    weight = _C.where(inside, weight, 0.0).reshape(n, 1, -1)
    return flat.gather(2, index) * weight


def _source_coord(coord, size, padding_mode, align_corners):
    """Grid coordinates in [-1, 1] -> pixel coordinates, with torch's clipping or reflection."""
    if align_corners:
        coord = (coord + 1) / 2 * (size - 1)
    else:
        coord = ((coord + 1) * size - 1) / 2
    if padding_mode == "zeros":
        return coord
    if padding_mode == "reflection":
        coord = _reflect(coord, 0, 2 * (size - 1)) if align_corners else _reflect(coord, -1, 2 * size - 1)
    return _clip(coord, size)


def _clip(coord, size):
    """clamp to [0, size - 1]; the gradient passes only strictly inside, as in torch."""
    inside = (coord > 0) & (coord < size - 1)
    return _C.where(inside, coord, coord.detach().clamp(0, size - 1))


def _reflect(coord, twice_low, twice_high):
    """Mirror coord into [twice_low / 2, twice_high / 2] as many times as needed."""
    if twice_low == twice_high:
        return coord * 0.0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    d = coord - low
    d = _C.where(d < 0, -d, d)
    flips = (d.detach() / span).floor()
    extra = d.fmod(span)
    even = flips.remainder(2) == 0
    return _C.where(even, extra + low, span - extra + low)


def affine_grid(theta, size, align_corners=None):
    size = [int(s) for s in size]
    if not theta.is_floating_point():
        raise TypeError(f"affine_grid: expected theta to have a floating-point dtype, got {theta.dtype}")
    if len(size) == 4:
        want = (size[0], 2, 3)
        kind = "2D affine matrices of shape Nx2x3"
    elif len(size) == 5:
        want = (size[0], 3, 4)
        kind = "3D affine matrices of shape Nx3x4"
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if theta.dim() != 3 or tuple(theta.shape) != want:
        raise ValueError(f"Expected a batch of {kind} for size {size}. Got {list(theta.shape)}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    align_corners = bool(align_corners)
    spatial = size[2:]  # (H, W) or (D, H, W)
    dims = len(spatial)
    columns = []  # x varies along the last axis, y along the one before, (z along the first)
    for k, steps in enumerate(reversed(spatial)):
        shape = [1] * dims
        shape[dims - 1 - k] = steps
        columns.append(_base_axis(steps, align_corners, theta).reshape(shape).expand(*spatial))
    columns.append(_C.ones_like(columns[0]))
    points = _C.stack(columns, -1).reshape(1, -1, dims + 1)  # [1, prod(spatial), dims + 1]: x, y, (z,) 1
    grid = points.matmul(theta.transpose(1, 2))  # [N, prod(spatial), dims]
    return grid.reshape(size[0], *spatial, len(spatial))


def _base_axis(steps, align_corners, like):
    """torch's normalised pixel centres along one axis: linspace(-1, 1), shrunk when not aligning corners."""
    if steps <= 1:
        return like.new_zeros(1)
    axis = _C.linspace(-1.0, 1.0, steps, dtype=like.dtype, device=like.device)
    return axis if align_corners else axis * ((steps - 1) / steps)
