"""nn.TransformerDecoderLayer, nn.TransformerDecoder and nn.Transformer against torch 1.13: torch's
state_dict loads into rt's modules (same keys, same order), and with dropout=0 the outputs and the
gradients of the inputs and of every parameter agree in float64, for post-norm and pre-norm, batch_first
and sequence-first, relu/gelu/callable activations, bool and float masks, key padding masks, unbatched
inputs and custom encoders/decoders; plus generate_square_subsequent_mask, the init, and the errors."""
import numpy as np
import pytest

import rustytorch as rt
from conftest import assert_close

torch = pytest.importorskip("torch")

D, H, FF = 8, 2, 16


def _load_torch_weights(m_r, m_t):
    """rt <- torch, through the state_dict: keys and their order must be torch's."""
    sd = m_t.state_dict()
    assert list(m_r.state_dict()) == list(sd)
    m_r.load_state_dict({k: rt.from_numpy(v.detach().numpy().copy()) for k, v in sd.items()})


def _tensor_pair(a, grad=True):
    r, t = rt.from_numpy(a.copy()), torch.from_numpy(a.copy())
    if grad and a.dtype.kind == "f":
        r.requires_grad_()
        t.requires_grad_()
    return r, t


def _compare(m_r, m_t, arrays, masks=None, **kw):
    """Runs both modules on the same inputs (arrays, then mask keyword arrays) and compares the outputs,
    the input gradients and every parameter gradient."""
    ins = [_tensor_pair(a) for a in arrays]
    kw_r, kw_t = dict(kw), dict(kw)
    for name, a in (masks or {}).items():
        kw_r[name], kw_t[name] = _tensor_pair(a, grad=False)
    out_r = m_r(*[r for r, _ in ins], **kw_r)
    out_t = m_t(*[t for _, t in ins], **kw_t)
    assert_close(out_r, out_t, "float64", "output")
    w = np.random.default_rng(9).standard_normal(tuple(out_t.shape))
    (out_r * rt.from_numpy(w.copy())).sum().backward()
    (out_t * torch.from_numpy(w)).sum().backward()
    for i, (r, t) in enumerate(ins):
        assert_close(r.grad, t.grad, "float64", f"gradient of input {i}")
    grads_t = dict(m_t.named_parameters())
    for name, p in m_r.named_parameters():
        assert p.grad is not None, f"no gradient reached {name}"
        assert_close(p.grad, grads_t[name].grad, "float64", name)


def _randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _causal(n):
    return np.triu(np.ones((n, n), dtype=bool), 1)


def _padding(batch, length, seed):
    pad = np.zeros((batch, length), dtype=bool)
    pad[np.arange(batch), np.random.default_rng(seed).integers(1, length, batch)] = True
    return pad


DECODER_LAYERS = [
    ("post_norm_seq_first", dict(), False),
    ("pre_norm_batch_first_gelu", dict(norm_first=True, batch_first=True, activation="gelu"), True),
    ("post_norm_batch_first_eps", dict(batch_first=True, layer_norm_eps=1e-3), True),
    ("pre_norm_seq_first_relu", dict(norm_first=True, activation="relu"), False),
]


@pytest.mark.parametrize("name,kw,batch_first", DECODER_LAYERS, ids=[c[0] for c in DECODER_LAYERS])
def test_decoder_layer_matches_torch(name, kw, batch_first):
    rt.manual_seed(0)
    torch.manual_seed(0)
    m_r = rt.nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, dtype=rt.float64, **kw)
    m_t = torch.nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, **kw).double()
    _load_torch_weights(m_r, m_t)
    tgt, mem = (_randn(2, 5, D), _randn(2, 7, D, seed=1)) if batch_first else (_randn(5, 2, D), _randn(7, 2, D, seed=1))
    masks = {"tgt_mask": _causal(5), "tgt_key_padding_mask": _padding(2, 5, 3),
             "memory_key_padding_mask": _padding(2, 7, 4)}
    _compare(m_r, m_t, [tgt, mem], masks)


def test_decoder_layer_float_masks_and_memory_mask():
    m_r = rt.nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, dtype=rt.float64)
    m_t = torch.nn.TransformerDecoderLayer(D, H, FF, dropout=0.0).double()
    _load_torch_weights(m_r, m_t)
    memory_mask = np.where(_randn(4, 6, seed=5) > 1.0, -np.inf, _randn(4, 6, seed=6))  # float: added to scores
    memory_mask[:, 0] = 0.0  # every query keeps a key
    masks = {"tgt_mask": np.where(_causal(4), -np.inf, 0.0), "memory_mask": memory_mask}
    _compare(m_r, m_t, [_randn(4, 3, D), _randn(6, 3, D, seed=1)], masks)


def test_decoder_layer_unbatched_input():
    m_r = rt.nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, batch_first=True, dtype=rt.float64)
    m_t = torch.nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, batch_first=True).double()
    _load_torch_weights(m_r, m_t)
    _compare(m_r, m_t, [_randn(5, D), _randn(6, D, seed=1)], {"tgt_mask": _causal(5)})


def test_decoder_stack_with_norm_matches_torch():
    layer_r = rt.nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, batch_first=True, dtype=rt.float64)
    m_r = rt.nn.TransformerDecoder(layer_r, 3, norm=rt.nn.LayerNorm(D, dtype=rt.float64))
    m_t = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, batch_first=True),
                                      3, norm=torch.nn.LayerNorm(D)).double()
    _load_torch_weights(m_r, m_t)
    assert len(m_r.layers) == 3 and m_r.layers[0] is not m_r.layers[1]
    masks = {"tgt_mask": _causal(5), "memory_key_padding_mask": _padding(2, 6, 1)}
    _compare(m_r, m_t, [_randn(2, 5, D), _randn(2, 6, D, seed=1)], masks)


TRANSFORMERS = [
    ("default_seq_first", dict()),
    ("batch_first_pre_norm_gelu", dict(batch_first=True, norm_first=True, activation="gelu")),
    ("callable_activation_eps", dict(activation=torch.nn.functional.silu, layer_norm_eps=1e-4)),
]


@pytest.mark.parametrize("name,kw", TRANSFORMERS, ids=[c[0] for c in TRANSFORMERS])
def test_transformer_matches_torch(name, kw):
    kw_r = dict(kw)
    if "activation" in kw and callable(kw["activation"]):
        kw_r["activation"] = rt.nn.functional.silu
    m_r = rt.nn.Transformer(D, H, 2, 2, FF, dropout=0.0, dtype=rt.float64, **kw_r)
    m_t = torch.nn.Transformer(D, H, 2, 2, FF, dropout=0.0, **kw).double()
    _load_torch_weights(m_r, m_t)
    batch_first = kw.get("batch_first", False)
    src, tgt = (_randn(2, 6, D), _randn(2, 4, D, seed=1)) if batch_first else (_randn(6, 2, D), _randn(4, 2, D, seed=1))
    masks = {"tgt_mask": _causal(4), "src_key_padding_mask": _padding(2, 6, 2),
             "tgt_key_padding_mask": _padding(2, 4, 3), "memory_key_padding_mask": _padding(2, 6, 2),
             "src_mask": np.zeros((6, 6)), "memory_mask": np.zeros((4, 6), dtype=bool)}
    _compare(m_r, m_t, [src, tgt], masks)


def test_transformer_square_subsequent_mask_matches_torch():
    m_r = rt.nn.Transformer.generate_square_subsequent_mask(5)
    m_t = torch.nn.Transformer.generate_square_subsequent_mask(5)
    assert m_r.dtype == rt.float32
    np.testing.assert_array_equal(m_r.numpy(), m_t.numpy())
    assert rt.nn.Transformer.generate_square_subsequent_mask(3, dtype=rt.float64).dtype == rt.float64
    # as a float mask in a model: the same output as the bool causal mask
    model = rt.nn.Transformer(D, H, 1, 1, FF, dropout=0.0)
    src, tgt = rt.randn(6, 2, D), rt.randn(4, 2, D)
    a = model(src, tgt, tgt_mask=rt.nn.Transformer.generate_square_subsequent_mask(4))
    b = model(src, tgt, tgt_mask=rt.from_numpy(_causal(4)))
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-6)


def test_transformer_init_and_attributes():
    rt.manual_seed(0)
    m = rt.nn.Transformer(d_model=16, nhead=4, num_encoder_layers=1, num_decoder_layers=2, dim_feedforward=32)
    assert (m.d_model, m.nhead, m.batch_first) == (16, 4, False)
    assert len(m.encoder.layers) == 1 and len(m.decoder.layers) == 2
    assert isinstance(m.encoder.norm, rt.nn.LayerNorm) and isinstance(m.decoder.norm, rt.nn.LayerNorm)
    w = m.decoder.layers[1].linear1.weight.detach().numpy()
    bound = np.sqrt(6.0 / (16 + 32))  # xavier_uniform_ on every matrix, as torch resets them
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert np.all(m.decoder.layers[0].norm3.weight.detach().numpy() == 1.0)
    t = torch.nn.Transformer(d_model=16, nhead=4, num_encoder_layers=1, num_decoder_layers=2, dim_feedforward=32)
    assert [n for n, _ in m.named_parameters()] == [n for n, _ in t.named_parameters()]


def test_transformer_custom_encoder_and_decoder():
    enc = rt.nn.TransformerEncoder(rt.nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, dtype=rt.float64), 1)
    dec = rt.nn.TransformerDecoder(rt.nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, dtype=rt.float64), 1)
    m_r = rt.nn.Transformer(D, H, custom_encoder=enc, custom_decoder=dec, dtype=rt.float64)
    assert m_r.encoder is enc and m_r.decoder is dec and m_r.encoder.norm is None
    enc_t = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(D, H, FF, dropout=0.0), 1)
    dec_t = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(D, H, FF, dropout=0.0), 1)
    m_t = torch.nn.Transformer(D, H, custom_encoder=enc_t, custom_decoder=dec_t).double()
    _load_torch_weights(m_r, m_t)
    _compare(m_r, m_t, [_randn(5, 2, D), _randn(3, 2, D, seed=1)], {"tgt_mask": _causal(3)})


def test_encoder_norm_first_batch_first_with_padding_matches_torch():
    """The encoder side nn.Transformer relies on: pre-norm, batch_first, key padding, float64 gradients."""
    layer = rt.nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, batch_first=True, norm_first=True,
                                          dtype=rt.float64)
    m_r = rt.nn.TransformerEncoder(layer, 2)
    m_t = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, batch_first=True,
                                                                       norm_first=True), 2,
                                      enable_nested_tensor=False).double()
    _load_torch_weights(m_r, m_t)
    _compare(m_r, m_t, [_randn(3, 5, D)], {"mask": _causal(5), "src_key_padding_mask": _padding(3, 5, 7)})


def test_dropout_is_active_in_training_only():
    m = rt.nn.Transformer(D, H, 1, 1, FF, dropout=0.5)
    src, tgt = rt.randn(5, 2, D), rt.randn(3, 2, D)
    rt.manual_seed(1)
    a = m(src, tgt)
    rt.manual_seed(2)
    b = m(src, tgt)
    assert not rt.equal(a, b)
    m.eval()
    assert rt.equal(m(src, tgt), m(src, tgt))


def test_causal_hints_of_torch_2():
    m = rt.nn.Transformer(D, H, 1, 1, FF, dropout=0.0)
    src, tgt = rt.randn(5, 2, D), rt.randn(3, 2, D)
    mask = rt.nn.Transformer.generate_square_subsequent_mask(3)
    assert rt.equal(m(src, tgt, tgt_mask=mask, tgt_is_causal=True), m(src, tgt, tgt_mask=mask))
    with pytest.raises(RuntimeError, match="tgt_is_causal=True needs the mask"):
        m(src, tgt, tgt_is_causal=True)
    with pytest.raises(RuntimeError, match="is_causal=True needs the mask"):
        m.encoder(src, is_causal=True)


def test_transformer_errors_name_the_problem():
    m = rt.nn.Transformer(D, H, 1, 1, FF)
    with pytest.raises(RuntimeError, match="batch number of src and tgt must be equal"):
        m(rt.randn(5, 2, D), rt.randn(3, 3, D))
    with pytest.raises(RuntimeError, match="feature number of src and tgt must be equal to d_model"):
        m(rt.randn(5, 2, D), rt.randn(3, 2, D + 1))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        rt.nn.TransformerDecoderLayer(D, H, activation="tanh")
    with pytest.raises(TypeError, match="decoder_layer must be a Module"):
        rt.nn.TransformerDecoder("layer", 2)
    with pytest.raises(ValueError, match="divisible by num_heads"):
        rt.nn.TransformerDecoderLayer(D, 3)
