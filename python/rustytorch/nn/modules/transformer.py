"""MultiheadAttention, TransformerEncoderLayer and TransformerEncoder (torch.nn).

    mha = rt.nn.MultiheadAttention(64, 4, batch_first=True)
    out, weights = mha(x, x, x)                  # x [N, L, 64] -> out [N, L, 64], weights [N, L, L]
    layer = rt.nn.TransformerEncoderLayer(64, 4, dim_feedforward=256, batch_first=True)
    enc = rt.nn.TransformerEncoder(layer, num_layers=2)     # deep copies of `layer`
    y = enc(x, mask=causal)                      # causal: bool [L, L], True = may NOT attend

TransformerDecoderLayer and TransformerDecoder live in transformer_decoder.py, nn.Transformer in
transformer_model.py. is_causal (torch 2.x) is only a hint that the mask given is causal.

Shapes (E = embed_dim, H = num_heads): query [L, N, E], key/value [S, N, E] ([N, L, E] with
batch_first; unbatched [L, E] too). key_padding_mask [N, S] (bool: True = ignore that key, or
float added to the scores); attn_mask [L, S] or [N * H, L, S], same conventions. Weights are
averaged over heads ([N, L, S]) unless average_attn_weights=False ([N, H, L, S]).
Parameters (PyTorch's names and init): in_proj_weight [3E, E] (xavier_uniform_), in_proj_bias [3E]
(zeros), out_proj.weight, out_proj.bias (zeros). kdim/vdim other than embed_dim, add_bias_kv and
add_zero_attn are not supported (NotImplementedError).
"""
import copy
import math

import rustytorch as rt

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear, NonDynamicallyQuantizableLinear
from .module import Module, empty_tensor
from .normalization import LayerNorm


def _float_mask(mask, dtype, name):
    if mask is None:
        return None
    if mask.dtype == rt.bool:
        return rt.zeros(tuple(mask.shape), dtype=dtype).masked_fill(mask, float("-inf"))
    if mask.dtype not in (rt.float32, rt.float64):
        raise TypeError(f"MultiheadAttention: only bool and floating types of {name} are supported, "
                        f"got {mask.dtype}")
    return mask


class MultiheadAttention(Module):
    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError("MultiheadAttention: add_bias_kv and add_zero_attn are not supported by "
                                      "rustytorch")
        if (kdim is not None and kdim != embed_dim) or (vdim is not None and vdim != embed_dim):
            raise NotImplementedError("MultiheadAttention: kdim/vdim different from embed_dim are not supported "
                                      f"by rustytorch (embed_dim={embed_dim}, kdim={kdim}, vdim={vdim})")
        if embed_dim <= 0 or num_heads <= 0 or embed_dim % num_heads != 0:
            raise ValueError(f"embed_dim must be divisible by num_heads (embed_dim={embed_dim}, "
                             f"num_heads={num_heads})")
        self.embed_dim = self.kdim = self.vdim = embed_dim
        self._qkv_same_embed_dim = True
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        self.in_proj_weight = Parameter(empty_tensor((3 * embed_dim, embed_dim), device, dtype))
        self.register_parameter("q_proj_weight", None)
        self.register_parameter("k_proj_weight", None)
        self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty_tensor((3 * embed_dim,), device, dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        self.bias_k = self.bias_v = None
        self.add_zero_attn = False
        self._reset_parameters()

    def _reset_parameters(self):
        init.xavier_uniform_(self.in_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True):
        batched = query.dim() == 3
        if query.dim() not in (2, 3) or key.dim() != query.dim() or value.dim() != query.dim():
            raise ValueError("MultiheadAttention: query, key and value must all be 3-D (batched) or 2-D "
                             f"(unbatched); got shapes {list(query.shape)}, {list(key.shape)}, {list(value.shape)}")
        if not batched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        out, weights = self._attend(query, key, value, key_padding_mask, need_weights, attn_mask,
                                    average_attn_weights)
        if not batched:
            return out.squeeze(1), (weights.squeeze(0) if weights is not None else None)
        if self.batch_first:
            out = out.transpose(0, 1)
        return out, weights

    def _attend(self, query, key, value, key_padding_mask, need_weights, attn_mask, average_attn_weights):
        tgt_len, bsz, embed_dim = query.shape
        src_len = key.shape[0]
        heads, head_dim = self.num_heads, self.head_dim
        if embed_dim != self.embed_dim or tuple(key.shape) != tuple(value.shape) or key.shape[1] != bsz \
                or key.shape[2] != embed_dim:
            raise ValueError(f"MultiheadAttention(embed_dim={self.embed_dim}): expected query [L, N, E] and "
                             f"key/value [S, N, E] with E={self.embed_dim}; got query {list(query.shape)}, key "
                             f"{list(key.shape)}, value {list(value.shape)} (after batch_first transposition)")
        w_q, w_k, w_v = self.in_proj_weight.chunk(3)
        b_q, b_k, b_v = self.in_proj_bias.chunk(3) if self.in_proj_bias is not None else (None, None, None)
        q = F.linear(query, w_q, b_q)
        k = F.linear(key, w_k, b_k)
        v = F.linear(value, w_v, b_v)

        attn_mask = _float_mask(attn_mask, q.dtype, "attn_mask")
        if attn_mask is not None:
            if attn_mask.dim() == 2:
                if tuple(attn_mask.shape) != (tgt_len, src_len):
                    raise ValueError(f"The shape of the 2D attn_mask is {list(attn_mask.shape)}, but should be "
                                     f"{[tgt_len, src_len]}.")
                attn_mask = attn_mask.unsqueeze(0)
            elif attn_mask.dim() == 3:
                if tuple(attn_mask.shape) != (bsz * heads, tgt_len, src_len):
                    raise ValueError(f"The shape of the 3D attn_mask is {list(attn_mask.shape)}, but should be "
                                     f"{[bsz * heads, tgt_len, src_len]}.")
            else:
                raise ValueError(f"attn_mask's dimension {attn_mask.dim()} is not supported (use 2-D or 3-D)")
        if key_padding_mask is not None:
            if tuple(key_padding_mask.shape) != (bsz, src_len):
                raise ValueError(f"expected shape of key_padding_mask to be {[bsz, src_len]}, but got "
                                 f"{list(key_padding_mask.shape)}")
            pad = _float_mask(key_padding_mask, q.dtype, "key_padding_mask")
            pad = pad.view(bsz, 1, 1, src_len).expand(-1, heads, -1, -1).reshape(bsz * heads, 1, src_len)
            attn_mask = pad if attn_mask is None else attn_mask + pad

        q = q.reshape(tgt_len, bsz * heads, head_dim).transpose(0, 1)
        k = k.reshape(src_len, bsz * heads, head_dim).transpose(0, 1)
        v = v.reshape(src_len, bsz * heads, head_dim).transpose(0, 1)
        scores = rt.bmm(q / math.sqrt(head_dim), k.transpose(-2, -1))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = F.softmax(scores, -1)
        if self.training and self.dropout > 0.0:
            weights = F.dropout(weights, self.dropout, True)
        out = rt.bmm(weights, v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = F.linear(out, self.out_proj.weight, self.out_proj.bias).view(tgt_len, bsz, embed_dim)
        if not need_weights:
            return out, None
        weights = weights.view(bsz, heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        return out, weights


def _activation(activation):
    if callable(activation):
        return activation
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _check_causal_hint(name, is_causal, mask):
    """torch 2.x's is_causal arguments only tell that the given mask is causal; the mask is what is
    applied, so a causal hint without a mask is refused, as torch refuses it."""
    if is_causal and mask is None:
        raise RuntimeError(f"{name}=True needs the mask it describes: pass the causal mask too, e.g. "
                           "rt.nn.Transformer.generate_square_subsequent_mask(length)")


class TransformerEncoderLayer(Module):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        _check_causal_hint("is_causal", is_causal, src_mask)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True):
        super().__init__()
        if not isinstance(encoder_layer, Module):
            raise TypeError(f"TransformerEncoder: encoder_layer must be a Module, got {type(encoder_layer).__name__}")
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        _check_causal_hint("is_causal", is_causal, mask)
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output

