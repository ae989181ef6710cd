"""F.embedding_bag: sums, means or maxima of bags of embedding rows without materialising the
per-index embeddings as a padded batch (except in max mode). Composed from engine ops (index_select,
searchsorted, scatter_add, max), so autograd gives the gradients for weight and per_sample_weights.
The bag of each index is looked up on the host from the offsets (searchsorted has no CUDA kernel).
rt.nn.functional re-exports it.

    F.embedding_bag(rt.tensor([1, 2, 4, 5, 4, 3]), weight, rt.tensor([0, 4]))   # 2 bags, mean of each
    F.embedding_bag(rt.tensor([[1, 2], [4, 5]]), weight, mode="max")            # 2-D: one bag per row
    F.embedding_bag(idx, weight, offsets, mode="sum", per_sample_weights=w)    # weighted sums

A 1-D input is cut into bags at `offsets` (the first must be 0; they must not decrease); with
include_last_offset=True the last offset ends the last bag and the indices after it are ignored. A
2-D input [B, L] is B bags of L indices. Entries equal to padding_idx are left out of their bag: they
add nothing, are not counted by the mean and never win the max. Empty bags give zeros. The max mode
gathers the bags into a [bags, longest bag, dim] block, so its memory grows with the longest bag; ties
go to the first maximal entry, as in torch. max_norm, scale_grad_by_freq and sparse are not supported.
"""
from .. import _C

__all__ = ["embedding_bag"]

_MODES = ("sum", "mean", "max")


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    for name, value, default in (("max_norm", max_norm, None), ("scale_grad_by_freq", scale_grad_by_freq, False),
                                 ("sparse", sparse, False)):
        if value != default:
            raise NotImplementedError(f"embedding_bag({name}={value!r}) is not supported by rustytorch")
    if mode not in _MODES:
        raise ValueError(f"embedding_bag: mode has to be one of sum, mean or max, got {mode!r}")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.is_floating_point() or (offsets is not None and offsets.is_floating_point()):
        raise TypeError("embedding_bag: input and offsets must be integer tensors (int64 or int32), got "
                        f"{input.dtype}" + ("" if offsets is None else f" and {offsets.dtype}"))
    if per_sample_weights is not None:
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(f"embedding_bag: If per_sample_weights ({list(per_sample_weights.shape)}) is not None, "
                             f"then it must have the same shape as the input ({list(input.shape)})")
        if mode != "sum":
            raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                      f"supported for mode='sum' (got mode='{mode}').")
    rows = weight.shape[0]
    if padding_idx is not None:
        if not -rows <= padding_idx < rows:
            raise ValueError(f"embedding_bag: padding_idx must be within num_embeddings: got {padding_idx} for "
                             f"{rows} embeddings")
        padding_idx %= rows
    index, starts, end = _bags(input, offsets, include_last_offset)
    if index.numel() and not (0 <= int(index.min().item()) and int(index.max().item()) < rows):
        raise IndexError(f"embedding_bag: indices must lie in [0, {rows}) for a weight with {rows} rows, got "
                         f"values from {int(index.min().item())} to {int(index.max().item())}")
    if per_sample_weights is not None:
        per_sample_weights = per_sample_weights.reshape(-1)
    if mode == "max":
        longest = _bag_ends(starts, end).sub(starts).max().item() if starts.numel() else 0
        if longest > 0:
            return _bag_max(index, weight, starts, end, int(longest), padding_idx)
    return _bag_sum(index, weight, starts, end, mode == "mean", per_sample_weights, padding_idx)


def _bags(input, offsets, include_last_offset):
    """(flat int64 indices, int64 start of each bag, end of the last bag)."""
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences. However, found offsets of type Tensor")
        if include_last_offset:
            raise ValueError("embedding_bag: include_last_offset=True needs a 1-D input with offsets; the bags of a "
                             "2-D input are its rows")
        bags, length = input.shape
        starts = _C.arange(bags, dtype=_C.int64, device=input.device) * length
        return input.reshape(-1).long(), starts, bags * length
    if input.dim() != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.dim() != 1:
        raise ValueError(f"offsets has to be a 1D Tensor, got {offsets.dim()}-D offsets")
    index, offsets = input.long(), offsets.long()
    n = index.shape[0]
    if include_last_offset:
        starts, end = offsets[:-1], (int(offsets[-1].item()) if offsets.shape[0] else 0)
    else:
        starts, end = offsets, n
    if offsets.shape[0]:
        first = int(offsets[0].item())
        if first != 0:
            raise ValueError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                             f"from position 0. However, got {first}")
        if offsets.shape[0] > 1 and bool((offsets[1:] < offsets[:-1]).any().item()):
            raise ValueError(f"embedding_bag: offsets must not decrease, got {offsets.tolist()}")
        last = int(offsets[-1].item())
        if last > n:
            raise ValueError(f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of {last}")
    return index, starts, end


def _bag_ends(starts, end):
    tail = _C.tensor([end], dtype=_C.int64, device=starts.device)
    return _C.cat([starts[1:], tail]) if starts.shape[0] else tail[:0]


def _kept(index, padding_idx):
    return index != padding_idx if padding_idx is not None else _C.ones_like(index).bool()


def _bag_sum(index, weight, starts, end, mean, per_sample_weights, padding_idx):
    """Sum (or mean) of each bag's rows: one scatter_add of the (weighted) rows into their bags."""
    bags, dim, n = starts.shape[0], weight.shape[1], index.shape[0]
    position = _C.arange(n, dtype=_C.int64, device=index.device)
    kept = _kept(index, padding_idx) & (position < end)
    if bags == 0:
        return weight.index_select(0, index[:0]).reshape(0, dim)
    # searchsorted has no CUDA kernel: the bag of each position is found on the host, from the offsets alone.
    host_starts = starts if starts.is_cpu else starts.cpu()
    bag = _C.searchsorted(host_starts, _C.arange(n, dtype=_C.int64), right=True) - 1
    bag = bag.clamp(0, bags - 1).to(index.device)
    scale = kept.to(weight.dtype)
    if per_sample_weights is not None:
        scale = scale * per_sample_weights
    picked = weight.index_select(0, index) * scale.unsqueeze(1)
    out = weight.new_zeros((bags, dim)).scatter_add(0, bag.unsqueeze(1).expand(n, dim), picked)
    if mean:
        count = weight.new_zeros((bags,)).scatter_add(0, bag, kept.to(weight.dtype))
        out = out / count.clamp_min(1).unsqueeze(1)
    return out


def _bag_max(index, weight, starts, end, longest, padding_idx):
    """Per-feature maximum of each bag: its rows gathered into [bags, longest, dim], the rest masked out."""
    bags, dim, n = starts.shape[0], weight.shape[1], index.shape[0]
    slot = _C.arange(longest, dtype=_C.int64, device=index.device)
    length = _bag_ends(starts, end) - starts
    position = (starts.unsqueeze(1) + slot).clamp_max(n - 1)  # [bags, longest]
    chosen = index.index_select(0, position.reshape(-1)).reshape(bags, longest)
    kept = (slot < length.unsqueeze(1)) & _kept(chosen, padding_idx)
    block = weight.index_select(0, chosen.reshape(-1)).reshape(bags, longest, dim)
    block = block.masked_fill(kept.logical_not().unsqueeze(2), float("-inf"))
    best = block.max(1).values
    return _C.where(kept.any(1).unsqueeze(1), best, 0.0)
