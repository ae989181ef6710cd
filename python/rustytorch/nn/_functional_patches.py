"""F.unfold (im2col) and F.fold (col2im), composed from engine ops so autograd gives their backward.
rt.nn.functional re-exports them.

    cols = F.unfold(x, kernel_size=3, padding=1)          # [N, C, H, W] -> [N, C * 9, H * W]
    y = F.fold(cols, output_size=(H, W), kernel_size=3, padding=1)  # sums the overlapping patches back

unfold zero-pads the input, then reads every (channel, kernel row, kernel column) x (block row, block
column) element with one index_select on the flattened image. fold is its adjoint: one scatter_add of the
columns into a zero image, then the padding is cropped, so fold(unfold(x)) counts each pixel once per
block that covers it, as in torch. Both accept batched (unfold 4-D, fold 3-D) and unbatched inputs.
kernel_size, dilation, padding and stride are an int or a pair.
"""
import operator

from .. import _C

__all__ = ["unfold", "fold"]


def _pair(name, value, minimum):
    pair = (value, value) if not isinstance(value, (tuple, list)) else tuple(value)
    if len(pair) != 2:
        raise ValueError(f"It is expected {name} equals to 2, but got size {len(pair)}")
    pair = tuple(operator.index(v) for v in pair)
    if min(pair) < minimum:
        adjective = "non-negative" if minimum == 0 else "greater than zero"
        raise ValueError(f"{name} should be {adjective}, but got {name}={pair}")
    return pair


def _blocks(spatial, kernel, dilation, padding, stride):
    """Number of sliding blocks along each spatial dim."""
    return tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                 for n, k, d, p, s in zip(spatial, kernel, dilation, padding, stride))


def _block_index(blocks, padded_width, kernel, dilation, stride, device):
    """Flat positions in the padded image, ordered (kernel row, kernel column, block row, block column)."""
    i64 = _C.int64
    rows = (_C.arange(kernel[0], dtype=i64, device=device) * dilation[0]).reshape(-1, 1, 1, 1) \
        + (_C.arange(blocks[0], dtype=i64, device=device) * stride[0]).reshape(1, 1, -1, 1)
    cols = (_C.arange(kernel[1], dtype=i64, device=device) * dilation[1]).reshape(1, -1, 1, 1) \
        + (_C.arange(blocks[1], dtype=i64, device=device) * stride[1]).reshape(1, 1, 1, -1)
    return (rows * padded_width + cols).reshape(-1)


def _arguments(kernel_size, dilation, padding, stride):
    return (_pair("kernel_size", kernel_size, 1), _pair("dilation", dilation, 1), _pair("padding", padding, 0),
            _pair("stride", stride, 1))


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    kernel, dilation, padding, stride = _arguments(kernel_size, dilation, padding, stride)
    if input.dim() not in (3, 4):
        raise ValueError(f"unfold: expected a 3-D (unbatched) or 4-D (batched) input [N, C, H, W], got "
                         f"{input.dim()}-D input of shape {list(input.shape)}")
    x = input if input.dim() == 4 else input.unsqueeze(0)
    n, c, h, w = x.shape
    blocks = _blocks((h, w), kernel, dilation, padding, stride)
    if min(blocks) < 1:
        raise ValueError(f"Given input with spatial size ({h}, {w}), kernel_size={kernel}, dilation={dilation}, "
                         f"padding={padding}, calculated shape of the array of sliding blocks as {blocks}, but "
                         "its components must be at least one.")
    if any(padding):
        x = _C.cat([x.new_zeros((n, c, padding[0], w)), x, x.new_zeros((n, c, padding[0], w))], 2)
        x = _C.cat([x.new_zeros((n, c, x.shape[2], padding[1])), x, x.new_zeros((n, c, x.shape[2], padding[1]))],
                   3)
    hp, wp = x.shape[2], x.shape[3]
    index = _block_index(blocks, wp, kernel, dilation, stride, x.device)
    cols = x.reshape(n, c, hp * wp).index_select(2, index)
    cols = cols.reshape(n, c * kernel[0] * kernel[1], blocks[0] * blocks[1])
    return cols if input.dim() == 4 else cols.squeeze(0)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    kernel, dilation, padding, stride = _arguments(kernel_size, dilation, padding, stride)
    output_size = _pair("output_size", output_size, 1)
    if input.dim() not in (2, 3):
        raise ValueError(f"fold: expected a 2-D (unbatched) or 3-D (batched) input [N, C * prod(kernel_size), L], "
                         f"got {input.dim()}-D input of shape {list(input.shape)}")
    cols = input if input.dim() == 3 else input.unsqueeze(0)
    n, ckk, length = cols.shape
    k = kernel[0] * kernel[1]
    if ckk % k:
        raise ValueError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
                         f"but got input.size(1)={ckk} and kernel_size={kernel}.")
    blocks = _blocks(output_size, kernel, dilation, padding, stride)
    if min(blocks) < 1 or blocks[0] * blocks[1] != length:
        raise ValueError(f"Given output_size={output_size}, kernel_size={kernel}, dilation={dilation}, "
                         f"padding={padding}, stride={stride}, expected size of input's dimension 2 to match the "
                         f"calculated number of sliding blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, "
                         f"but got input.size(2)={length}.")
    c = ckk // k
    hp, wp = output_size[0] + 2 * padding[0], output_size[1] + 2 * padding[1]
    index = _block_index(blocks, wp, kernel, dilation, stride, cols.device)
    index = index.reshape(1, 1, -1).expand(n, c, index.shape[0])
    image = cols.new_zeros((n, c, hp * wp)).scatter_add(2, index, cols.reshape(n, c, k * length))
    image = image.reshape(n, c, hp, wp)
    if any(padding):
        image = image.narrow(2, padding[0], output_size[0]).narrow(3, padding[1], output_size[1])
    return image if input.dim() == 3 else image.squeeze(0)
