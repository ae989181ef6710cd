"""Embedding: a lookup table of vectors (torch.nn.Embedding); EmbeddingBag: sums, means or maxima of
bags of its rows (torch.nn.EmbeddingBag, see F.embedding_bag).

    emb = rt.nn.Embedding(10000, 256, padding_idx=0)    # weight [10000, 256] ~ N(0, 1), row 0 zeros
    v = emb(rt.tensor([[5, 0, 42]]))                      # [1, 3, 256]
    bag = rt.nn.EmbeddingBag(10000, 256, mode="sum")
    s = bag(rt.tensor([5, 0, 42, 7]), rt.tensor([0, 3]))  # [2, 256]: bags [5, 0, 42] and [7]

padding_idx may be negative (counts from the end); its row gets no gradient.
"""
import rustytorch as rt

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module, empty_tensor


class Embedding(Module):
    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        for name, value, default in (("max_norm", max_norm, None), ("scale_grad_by_freq", scale_grad_by_freq, False),
                                     ("sparse", sparse, False)):
            if value != default:
                raise NotImplementedError(f"Embedding({name}={value!r}) is not supported by rustytorch")
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"Padding_idx must be within num_embeddings: got {padding_idx} for "
                                 f"num_embeddings={num_embeddings}")
            if padding_idx < 0:
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(empty_tensor((num_embeddings, embedding_dim), device, dtype),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"Embedding: _weight has shape {list(_weight.shape)}, expected "
                                 f"[{num_embeddings}, {embedding_dim}]")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with rt.no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None):
        if embeddings.dim() != 2:
            raise ValueError("Embeddings parameter is expected to be 2-dimensional, got shape "
                             f"{list(embeddings.shape)}")
        rows, cols = embeddings.shape
        return cls(rows, cols, _weight=embeddings, _freeze=freeze, padding_idx=padding_idx)


class EmbeddingBag(Module):
    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None, device=None,
                 dtype=None):
        super().__init__()
        for name, value, default in (("max_norm", max_norm, None), ("scale_grad_by_freq", scale_grad_by_freq, False),
                                     ("sparse", sparse, False)):
            if value != default:
                raise NotImplementedError(f"EmbeddingBag({name}={value!r}) is not supported by rustytorch")
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"EmbeddingBag: mode has to be one of sum, mean or max, got {mode!r}")
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"padding_idx must be within num_embeddings: got {padding_idx} for "
                                 f"num_embeddings={num_embeddings}")
            if padding_idx < 0:
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(empty_tensor((num_embeddings, embedding_dim), device, dtype))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"EmbeddingBag: _weight has shape {list(_weight.shape)}, expected "
                                 f"[{num_embeddings}, {embedding_dim}]")
            self.weight = Parameter(_weight)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with rt.no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset,
                               self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}, mode={self.mode}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                        mode="mean", sparse=False, include_last_offset=False, padding_idx=None):
        if embeddings.dim() != 2:
            raise ValueError("Embeddings parameter is expected to be 2-dimensional, got shape "
                             f"{list(embeddings.shape)}")
        rows, cols = embeddings.shape
        bag = cls(rows, cols, _weight=embeddings, max_norm=max_norm, norm_type=norm_type,
                  scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
