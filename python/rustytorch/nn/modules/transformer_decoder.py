"""TransformerDecoderLayer and TransformerDecoder (torch.nn), built from MultiheadAttention, Linear,
LayerNorm and Dropout with PyTorch's parameter names, so a torch state_dict loads as it is.

    layer = rt.nn.TransformerDecoderLayer(64, 4, dim_feedforward=256, batch_first=True)
    dec = rt.nn.TransformerDecoder(layer, num_layers=2, norm=rt.nn.LayerNorm(64))   # deep copies
    mask = rt.nn.Transformer.generate_square_subsequent_mask(tgt.shape[1])
    y = dec(tgt, memory, tgt_mask=mask, tgt_key_padding_mask=pad)

A layer is self-attention over tgt (tgt_mask, tgt_key_padding_mask), attention from tgt to memory
(memory_mask, memory_key_padding_mask) and a feed-forward block, each with a residual connection and
LayerNorm after it (before it with norm_first=True). Masks follow MultiheadAttention: bool (True =
may not attend) or float (added to the scores). The *_is_causal arguments of torch 2.x are hints that
the given mask is causal: the mask is what is applied, and a causal hint without a mask is an error,
as in torch.
"""
import copy

from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm
from .transformer import MultiheadAttention, _activation, _check_causal_hint


class TransformerDecoderLayer(Module):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        _check_causal_hint("tgt_is_causal", tgt_is_causal, tgt_mask)
        _check_causal_hint("memory_is_causal", memory_is_causal, memory_mask)
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, memory, attn_mask, key_padding_mask):
        x = self.multihead_attn(x, memory, memory, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoder(Module):
    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        if not isinstance(decoder_layer, Module):
            raise TypeError(f"TransformerDecoder: decoder_layer must be a Module, got {type(decoder_layer).__name__}")
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        _check_causal_hint("tgt_is_causal", tgt_is_causal, tgt_mask)
        _check_causal_hint("memory_is_causal", memory_is_causal, memory_mask)
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output
