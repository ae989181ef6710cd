"""Variable-length sequences for the recurrent modules (torch.nn.utils.rnn).

    from rustytorch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
    padded = pad_sequence([a, b, c])                       # [max_len, 3, *] (batch_first=True: [3, max_len, *])
    packed = pack_padded_sequence(padded, [5, 3, 2])       # or enforce_sorted=False for any order
    out, h_n = rt.nn.GRU(8, 16)(packed)                    # a PackedSequence in, a PackedSequence out
    out, lengths = pad_packed_sequence(out, batch_first=True)

A PackedSequence holds the time steps of all sequences one after another: data [sum(batch_sizes), *]
has, for t = 0, 1, ..., the batch_sizes[t] sequences still running at step t, longest first.
sorted_indices[j] is the original batch index of the j-th longest sequence (None when the input was
already sorted), unsorted_indices its inverse. Packing and padding are one index_select each, so
gradients flow through them.
"""
from collections import namedtuple

import numpy as np

import rustytorch as rt

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]


def invert_permutation(permutation):
    """The inverse of a permutation tensor (None stays None)."""
    if permutation is None:
        return None
    return permutation.argsort()


class PackedSequence(namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """(data, batch_sizes, sorted_indices, unsorted_indices); build it with pack_padded_sequence or pack_sequence."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if batch_sizes is None:
            raise TypeError("PackedSequence: batch_sizes is required; build packed sequences with "
                            "pack_padded_sequence or pack_sequence")
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """Moves or casts data (and the index tensors to data's device); batch_sizes stays on the CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        device = data.device
        sorted_indices = None if self.sorted_indices is None else self.sorted_indices.to(device)
        unsorted_indices = None if self.unsorted_indices is None else self.unsorted_indices.to(device)
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cuda(self, *args, **kwargs):
        return self.to(self.data.cuda(*args, **kwargs).device)

    def cpu(self):
        return self.to("cpu")

    def double(self):
        return self.to(dtype=rt.float64)

    def float(self):
        return self.to(dtype=rt.float32)

    def half(self):
        return self.to(dtype=rt.float16)

    def long(self):
        return self.to(dtype=rt.int64)

    def int(self):
        return self.to(dtype=rt.int32)

    def byte(self):
        return self.to(dtype=rt.uint8)

    def pin_memory(self):
        return type(self)(self.data.pin_memory(), self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return self.data.is_pinned()


def _lengths_list(lengths):
    if isinstance(lengths, rt.Tensor):
        if lengths.dim() != 1:
            raise ValueError(f"pack_padded_sequence: lengths must be a 1-D tensor or a list, got a "
                             f"{lengths.dim()}-D tensor")
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch [T, B, *] ([B, T, *] with batch_first) whose sequence b has lengths[b] steps."""
    lengths = _lengths_list(lengths)
    if input.dim() < 2:
        raise ValueError(f"pack_padded_sequence: input must be at least 2-D ([T, B, *] or [B, T, *] with "
                         f"batch_first=True), got shape {list(input.shape)}")
    batch, steps = (input.shape[0], input.shape[1]) if batch_first else (input.shape[1], input.shape[0])
    if len(lengths) != batch:
        raise ValueError(f"pack_padded_sequence: expected len(lengths) to be equal to batch_size, but got "
                         f"{len(lengths)} (batch_size={batch}); pass one length per sequence")
    if batch == 0:
        raise ValueError("pack_padded_sequence: the batch is empty; pass at least one sequence")
    lens = np.asarray(lengths, dtype=np.int64)
    if lens.min() <= 0:
        raise RuntimeError("pack_padded_sequence: length of all samples has to be greater than 0, but found an "
                           f"element in 'lengths' that is <= 0 (lengths={lengths}); drop empty sequences first")
    if lens.max() > steps:
        raise ValueError(f"pack_padded_sequence: lengths contains {int(lens.max())} but the padded input has only "
                         f"{steps} time steps")
    if enforce_sorted:
        if np.any(lens[1:] > lens[:-1]):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True "
                               f"(got {lengths}). You can pass `enforce_sorted=False` to pack_padded_sequence "
                               "and/or pack_sequence to sidestep this requirement if you do not need ONNX "
                               "exportability.")
        order = np.arange(batch, dtype=np.int64)
        sorted_indices = None
    else:
        order = np.argsort(-lens, kind="stable")
        sorted_indices = rt.tensor(order, device=input.device)
    sorted_lens = lens[order]
    batch_sizes = (sorted_lens[None, :] > np.arange(int(sorted_lens[0]))[:, None]).sum(1)
    # Packed row (t, j) reads the padded element (t, order[j]).
    t_idx = np.concatenate([np.full(bs, t, dtype=np.int64) for t, bs in enumerate(batch_sizes)])
    b_idx = np.concatenate([order[:bs] for bs in batch_sizes])
    flat = b_idx * steps + t_idx if batch_first else t_idx * batch + b_idx
    rows = input.reshape((batch * steps,) + tuple(input.shape[2:]))
    data = rows.index_select(0, rt.tensor(flat, device=input.device))
    return PackedSequence(data, rt.tensor(batch_sizes.astype(np.int64)), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Inverse of pack_padded_sequence: (padded [T, B, *] or [B, T, *], lengths int64 in the original order)."""
    data, batch_sizes, _, unsorted_indices = sequence
    sizes = np.asarray(batch_sizes.tolist(), dtype=np.int64)
    max_len, batch = len(sizes), int(sizes[0])
    steps = max_len
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in the "
                             f"input, but got total_length={total_length} and max sequence length being {max_len}")
        steps = total_length
    sorted_lens = (sizes[:, None] > np.arange(batch)[None, :]).sum(0)  # length of the j-th longest sequence
    rank = np.arange(batch) if unsorted_indices is None else np.asarray(unsorted_indices.tolist(), dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    t = np.arange(steps)[:, None]
    j = rank[None, :]
    pad_row = data.shape[0]
    src = np.where(t < sorted_lens[j], offsets[np.minimum(t, max_len - 1)] + j, pad_row)  # [steps, batch]
    if batch_first:
        src = src.T
    rest = tuple(data.shape[1:])
    pad = rt.full((1,) + rest, padding_value, dtype=data.dtype, device=data.device)
    padded = rt.cat([data, pad], 0).index_select(0, rt.tensor(np.ascontiguousarray(src).reshape(-1),
                                                                device=data.device))
    padded = padded.reshape(src.shape + rest)
    return padded, rt.tensor(sorted_lens[rank].astype(np.int64))


def pad_sequence(sequences, batch_first=False, padding_value=0.0):
    """Stacks [L_i, *] tensors into [max L, B, *] ([B, max L, *] with batch_first), padding with padding_value."""
    if isinstance(sequences, rt.Tensor):
        sequences = list(sequences.unbind(0))
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("pad_sequence: received an empty list of sequences; pass at least one tensor")
    rest = tuple(sequences[0].shape[1:])
    for i, s in enumerate(sequences):
        if s.dim() == 0 or tuple(s.shape[1:]) != rest:
            raise RuntimeError(f"pad_sequence: every sequence must have shape [L{''.join(f', {d}' for d in rest)}] like "
                               f"the first one, but sequence {i} has shape {list(s.shape)}")
    lens = np.asarray([s.shape[0] for s in sequences], dtype=np.int64)
    steps = int(lens.max())
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    t = np.arange(steps)[:, None]
    src = np.where(t < lens[None, :], starts[None, :] + t, int(lens.sum()))  # [steps, batch]
    if batch_first:
        src = src.T
    first = sequences[0]
    pad = rt.full((1,) + rest, padding_value, dtype=first.dtype, device=first.device)
    rows = rt.cat(sequences + [pad], 0)
    out = rows.index_select(0, rt.tensor(np.ascontiguousarray(src).reshape(-1), device=first.device))
    return out.reshape(src.shape + rest)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of [lengths[b], *] sequences in a padded batch (inverse of pad_sequence)."""
    lengths = _lengths_list(lengths)
    batch_dim = 0 if batch_first else 1
    return [padded_sequences.select(batch_dim, b).narrow(0, 0, n) for b, n in enumerate(lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of [L_i, *] tensors (longest first unless enforce_sorted=False)."""
    padded = pad_sequence(sequences)
    return pack_padded_sequence(padded, [s.shape[0] for s in sequences], enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences in a PackedSequence, in their original order (inverse of pack_sequence)."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
