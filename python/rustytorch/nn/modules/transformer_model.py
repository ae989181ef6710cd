"""nn.Transformer: the encoder-decoder model of "Attention Is All You Need", with torch's arguments,
parameter names ("encoder.layers.0.self_attn.in_proj_weight", ..., "decoder.norm.bias") and init
(xavier_uniform_ on every parameter with more than one dim).

    model = rt.nn.Transformer(d_model=64, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
                              dim_feedforward=256, batch_first=True)
    tgt_mask = rt.nn.Transformer.generate_square_subsequent_mask(tgt.shape[1])
    out = model(src, tgt, tgt_mask=tgt_mask, src_key_padding_mask=src_pad)   # [N, T, 64]

src [S, N, E], tgt [T, N, E] ([N, S, E] / [N, T, E] with batch_first, or unbatched [S, E] / [T, E]).
custom_encoder / custom_decoder replace the built stacks (any modules with the encoder's and the
decoder's call signatures).
"""
import rustytorch as rt

from .. import init
from .module import Module
from .normalization import LayerNorm
from .transformer import TransformerEncoder, TransformerEncoderLayer
from .transformer_decoder import TransformerDecoder, TransformerDecoderLayer


class Transformer(Module):
    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation="relu", custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(TransformerEncoderLayer(*layer_args, **kw), num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, **kw))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(TransformerDecoderLayer(*layer_args, **kw), num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, **kw))
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        batched = src.dim() == 3
        if src.dim() != tgt.dim():
            raise RuntimeError(f"Transformer: src and tgt must both be batched (3-D) or both unbatched (2-D); got "
                               f"shapes {list(src.shape)} and {list(tgt.shape)}")
        batch_dim = 0 if self.batch_first else 1
        if batched and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError(f"the batch number of src and tgt must be equal: src {list(src.shape)}, tgt "
                               f"{list(tgt.shape)} (batch dim {batch_dim}; batch_first={self.batch_first})")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError(f"the feature number of src and tgt must be equal to d_model ({self.d_model}); got "
                               f"{src.shape[-1]} and {tgt.shape[-1]}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              **({"is_causal": src_is_causal} if src_is_causal is not None else {}))
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            **({"tgt_is_causal": tgt_is_causal} if tgt_is_causal is not None else {}),
                            **({"memory_is_causal": True} if memory_is_causal else {}))

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """[sz, sz] float mask: 0 on and below the diagonal, -inf above (position i may not attend to j > i)."""
        kwargs = {"dtype": dtype if dtype is not None else rt.get_default_dtype()}
        if device is not None:
            kwargs["device"] = device
        return rt.full((sz, sz), float("-inf"), **kwargs).triu(1)
