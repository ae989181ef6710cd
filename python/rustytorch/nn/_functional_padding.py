"""F.pad in its four modes and F.pixel_shuffle / F.pixel_unshuffle, composed from engine ops (cat, narrow,
index_select, reshape, permute), so autograd gives their backward. rt.nn.functional re-exports them.

    F.pad(x, (1, 2))                                  # last dim: 1 before, 2 after, zeros
    F.pad(x, (1, 1, 2, 0), mode="reflect")           # last two dims of a 3-D or 4-D input
    F.pad(x, (1, 1, 1, 1, 1, 1), mode="circular")    # last three dims of a 4-D or 5-D input
    F.pixel_shuffle(x, 2)                             # [*, C*4, H, W] -> [*, C, 2H, 2W]

Padding lists run from the last dim backwards: (left, right, top, bottom, front, back). A negative
entry crops. "constant" pads any number of trailing dims with `value`; "reflect" (mirror without
repeating the edge), "replicate" (repeat the edge) and "circular" (wrap around) pad the last 1, 2 or
3 dims of an input with one or two leading dims (batched or unbatched), as torch does.
"""
import operator

from .. import _C

__all__ = ["pad", "pixel_shuffle", "pixel_unshuffle"]

_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input, pad, mode="constant", value=None):
    pad = [operator.index(p) for p in pad]
    if mode not in _MODES:
        raise NotImplementedError(f"pad: unrecognised padding mode {mode!r}; use one of "
                                  + ", ".join(repr(m) for m in _MODES))
    if len(pad) % 2 != 0:
        raise ValueError(f"pad: padding length must be divisible by 2, got {len(pad)}")
    if len(pad) // 2 > input.dim():
        raise ValueError(f"pad: padding length too large: {len(pad)} entries pad {len(pad) // 2} dims but the "
                         f"input has {input.dim()}")
    if mode == "constant":
        return _pad_constant(input, pad, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise ValueError(f'pad: padding mode "{mode}" doesn\'t take in value argument; drop value= or use '
                         'mode="constant"')
    dims = len(pad) // 2
    if dims not in (1, 2, 3) or input.dim() not in (dims + 1, dims + 2):
        raise NotImplementedError(f"pad(mode={mode!r}) pads the last 1, 2 or 3 dims of an input with one or two "
                                  f"leading dims: {len(pad)} padding entries need a {dims + 1}-D or {dims + 2}-D "
                                  f"input, got {input.dim()}-D")
    out = input
    for i in range(dims):
        dim = input.dim() - 1 - i
        index = _source_index(mode, input.shape[dim], pad[2 * i], pad[2 * i + 1], dim)
        if index != list(range(input.shape[dim])):
            out = out.index_select(dim, _C.tensor(index, dtype=_C.int64, device=input.device))
    return out


def _source_index(mode, n, before, after, dim):
    """For each position of the padded dim, the input position it copies."""
    if mode == "circular":
        lo, hi = max(-before, 0), n - max(-after, 0)  # negative entries crop first
        kept = hi - lo
        if kept < 0:
            raise ValueError(f"pad(mode='circular'): negative padding ({before}, {after}) leaves an empty or "
                             f"negative size of dim {dim} (size {n})")
        if max(before, 0) > kept or max(after, 0) > kept:
            raise ValueError(f"pad(mode='circular'): padding ({before}, {after}) of dim {dim} wraps around more "
                             f"than once (the dim keeps {kept} elements); pad at most the dim's size")
        return [lo + j % kept for j in range(-max(before, 0), kept + max(after, 0))]
    size = n + before + after
    if size < 1:
        raise ValueError(f"pad(mode={mode!r}): input (size {n} in dim {dim}) is too small for padding "
                         f"({before}, {after}): calculated output size {size}")
    if mode == "reflect":
        if before >= n or after >= n:
            raise ValueError(f"pad(mode='reflect'): padding size should be less than the corresponding input "
                             f"dimension, but got padding ({before}, {after}) at dim {dim} of size {n}")
        return [-j if j < 0 else (2 * (n - 1) - j if j >= n else j) for j in range(-before, n + after)]
    return [min(max(j, 0), n - 1) for j in range(-before, n + after)]  # replicate


def _pad_constant(input, pad, value):
    out = input
    for i in range(len(pad) // 2):
        dim = input.dim() - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        if out.shape[dim] + min(before, 0) + min(after, 0) < 0:
            raise ValueError(f"pad: negative padding ({before}, {after}) is larger than dim {dim} "
                             f"(size {out.shape[dim]})")
        if before < 0:
            out = out.narrow(dim, -before, out.shape[dim] + before)
            before = 0
        if after < 0:
            out = out.narrow(dim, 0, out.shape[dim] + after)
            after = 0
        parts = []
        for n in (before, None, after):
            if n is None:
                parts.append(out)
            elif n > 0:
                shape = list(out.shape)
                shape[dim] = n
                parts.append(_C._full(shape, value, dtype=out.dtype, device=out.device))
        out = _C.cat(parts, dim) if len(parts) > 1 else out
    return out


def _check_factor(op, name, factor):
    factor = operator.index(factor)
    if factor <= 0:
        raise ValueError(f"{op} expects a positive {name}, but got {factor}")
    return factor


def pixel_shuffle(input, upscale_factor):
    """[*, C * r^2, H, W] -> [*, C, H * r, W * r]: channel blocks become r x r spatial tiles."""
    r = _check_factor("pixel_shuffle", "upscale_factor", upscale_factor)
    if input.dim() < 3:
        raise ValueError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                         f"{input.dim()} dimension(s)")
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise ValueError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
                         f"of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    nb = len(batch)
    x = input.reshape(tuple(batch) + (c // (r * r), r, r, h, w))
    x = x.permute(*range(nb), nb, nb + 3, nb + 1, nb + 4, nb + 2)
    return x.reshape(tuple(batch) + (c // (r * r), h * r, w * r))


def pixel_unshuffle(input, downscale_factor):
    """[*, C, H * r, W * r] -> [*, C * r^2, H, W]: the inverse of pixel_shuffle."""
    r = _check_factor("pixel_unshuffle", "downscale_factor", downscale_factor)
    if input.dim() < 3:
        raise ValueError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                         f"{input.dim()} dimension(s)")
    *batch, c, h, w = input.shape
    for name, size, d in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise ValueError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                             f"input.size({d})={size} is not divisible by {r}")
    nb = len(batch)
    x = input.reshape(tuple(batch) + (c, h // r, r, w // r, r))
    x = x.permute(*range(nb), nb, nb + 2, nb + 4, nb + 1, nb + 3)
    return x.reshape(tuple(batch) + (c * r * r, h // r, w // r))
