"""Every rt.nn layer against torch.nn with copied weights: forward output, input gradient and
parameter gradients on random inputs (float32 within 1e-5 relative, float64 within 1e-10)."""
import numpy as np
import pytest
import torch

import rustytorch as rt
import rustytorch.nn  # noqa: F401  (until rustytorch/__init__ imports it)

F32_TOL = dict(rtol=1e-5, atol=1e-5)
F64_TOL = dict(rtol=1e-10, atol=1e-10)


def to_torch(t):
    return torch.from_numpy(np.array(t.detach().numpy(), copy=True))


def to_rt(a):
    return rt.from_numpy(np.array(a.detach().numpy(), copy=True))


def copy_weights(rt_module, torch_module):
    """torch <- rt, by state_dict key; both must have the same keys in the same order."""
    sd = rt_module.state_dict()
    assert list(sd.keys()) == list(torch_module.state_dict().keys())
    torch_module.load_state_dict({k: to_torch(v) for k, v in sd.items()})


def check_parity(rt_module, torch_module, *inputs, dtype=np.float32, grad_inputs=(0,), train=True):
    rt_module.train(train)
    torch_module.train(train)
    tol = F64_TOL if dtype == np.float64 else F32_TOL
    rt_in, torch_in = [], []
    for i, a in enumerate(inputs):
        t = torch.from_numpy(a)
        r = rt.from_numpy(a.copy())
        if i in grad_inputs:
            t.requires_grad_(True)
            r.requires_grad_(True)
        torch_in.append(t)
        rt_in.append(r)
    out_r = rt_module(*rt_in)
    out_t = torch_module(*torch_in)
    if isinstance(out_t, tuple):
        out_r, out_t = out_r[0], out_t[0]
    np.testing.assert_allclose(out_r.detach().numpy(), out_t.detach().numpy(), **tol)
    upstream = np.random.default_rng(7).standard_normal(tuple(out_t.shape)).astype(dtype)
    (out_r * rt.from_numpy(upstream.copy())).sum().backward()
    (out_t * torch.from_numpy(upstream)).sum().backward()
    for i in grad_inputs:
        np.testing.assert_allclose(rt_in[i].grad.numpy(), torch_in[i].grad.numpy(), **tol)
    torch_grads = dict(torch_module.named_parameters())
    for name, p in rt_module.named_parameters():
        assert p.grad is not None, f"no gradient reached {name}"
        np.testing.assert_allclose(p.grad.numpy(), torch_grads[name].grad.numpy(), err_msg=name, **tol)


def randn(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


LAYERS = [
    ("linear", lambda nn: nn.Linear(6, 4), (3, 6)),
    ("linear_nobias_3d", lambda nn: nn.Linear(6, 4, bias=False), (2, 3, 6)),
    ("relu", lambda nn: nn.ReLU(), (4, 5)),
    ("gelu", lambda nn: nn.GELU(), (4, 5)),
    ("gelu_tanh", lambda nn: nn.GELU(approximate="tanh"), (4, 5)),
    ("silu", lambda nn: nn.SiLU(), (4, 5)),
    ("tanh", lambda nn: nn.Tanh(), (4, 5)),
    ("sigmoid", lambda nn: nn.Sigmoid(), (4, 5)),
    ("leaky_relu", lambda nn: nn.LeakyReLU(0.2), (4, 5)),
    ("softmax", lambda nn: nn.Softmax(dim=-1), (4, 5)),
    ("log_softmax", lambda nn: nn.LogSoftmax(dim=1), (4, 5)),
    ("conv2d", lambda nn: nn.Conv2d(3, 4, 3, padding=1), (2, 3, 6, 6)),
    ("conv2d_strided_groups", lambda nn: nn.Conv2d(4, 6, (3, 2), stride=2, groups=2, bias=False), (2, 4, 7, 6)),
    ("conv1d", lambda nn: nn.Conv1d(3, 5, 3, stride=1, padding=1), (2, 3, 8)),
    ("maxpool2d", lambda nn: nn.MaxPool2d(2), (2, 3, 6, 6)),
    ("avgpool2d", lambda nn: nn.AvgPool2d(3, stride=1, padding=1), (2, 3, 5, 5)),
    ("adaptive_avgpool2d", lambda nn: nn.AdaptiveAvgPool2d(1), (2, 3, 5, 5)),
    ("batchnorm2d", lambda nn: nn.BatchNorm2d(3), (4, 3, 5, 5)),
    ("batchnorm1d", lambda nn: nn.BatchNorm1d(5), (8, 5)),
    ("layernorm", lambda nn: nn.LayerNorm(5), (3, 4, 5)),
    ("layernorm_2d_shape", lambda nn: nn.LayerNorm((4, 5)), (3, 4, 5)),
    ("flatten", lambda nn: nn.Flatten(), (2, 3, 4, 5)),
    ("dropout_eval", lambda nn: nn.Dropout(0.3), (4, 5)),
    ("identity", lambda nn: nn.Identity(), (4, 5)),
    ("sequential", lambda nn: nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 2)), (3, 5)),
    ("transformer_layer", lambda nn: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True),
     (2, 5, 8)),
    ("transformer_layer_norm_first_gelu", lambda nn: nn.TransformerEncoderLayer(
        8, 2, 16, dropout=0.0, activation="gelu", norm_first=True), (5, 2, 8)),
]


@pytest.mark.parametrize("name,make,shape", LAYERS, ids=[l[0] for l in LAYERS])
def test_layer_matches_torch(name, make, shape):
    rt.manual_seed(0)
    m_rt, m_t = make(rt.nn), make(torch.nn)
    copy_weights(m_rt, m_t)
    check_parity(m_rt, m_t, randn(*shape), train=not name.endswith("_eval"))


def test_batchnorm_running_stats_and_eval_match_torch():
    m_rt, m_t = rt.nn.BatchNorm2d(3, momentum=None), torch.nn.BatchNorm2d(3, momentum=None)
    for seed in range(3):
        check_parity(m_rt, m_t, randn(4, 3, 5, 5, seed=seed))
    for key, value in m_t.state_dict().items():
        np.testing.assert_allclose(m_rt.state_dict()[key].numpy(), value.numpy(), rtol=1e-5, atol=1e-6, err_msg=key)
    assert int(m_rt.num_batches_tracked.item()) == 3
    check_parity(m_rt, m_t, randn(4, 3, 5, 5, seed=9), train=False)


def test_float64_linear_matches_torch():
    m_rt = rt.nn.Linear(5, 3).double()
    m_t = torch.nn.Linear(5, 3).double()
    copy_weights(m_rt, m_t)
    check_parity(m_rt, m_t, randn(4, 5, dtype=np.float64), dtype=np.float64)


def test_embedding_matches_torch():
    m_rt, m_t = rt.nn.Embedding(10, 4, padding_idx=0), torch.nn.Embedding(10, 4, padding_idx=0)
    assert np.all(m_rt.weight.detach().numpy()[0] == 0)
    copy_weights(m_rt, m_t)
    idx = np.array([[1, 0, 3], [9, 3, 2]], dtype=np.int64)
    check_parity(m_rt, m_t, idx, grad_inputs=())
    assert np.all(m_rt.weight.grad.numpy()[0] == 0)


@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention_matches_torch(batch_first):
    m_rt = rt.nn.MultiheadAttention(8, 2, batch_first=batch_first)
    m_t = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first)
    copy_weights(m_rt, m_t)
    q, kv = randn(2, 4, 8, seed=1), randn(2, 6, 8, seed=2)
    if not batch_first:
        q, kv = np.ascontiguousarray(q.transpose(1, 0, 2)), np.ascontiguousarray(kv.transpose(1, 0, 2))
    out_r, w_r = m_rt(rt.from_numpy(q), rt.from_numpy(kv), rt.from_numpy(kv))
    out_t, w_t = m_t(torch.from_numpy(q), torch.from_numpy(kv), torch.from_numpy(kv))
    np.testing.assert_allclose(out_r.detach().numpy(), out_t.detach().numpy(), **F32_TOL)
    np.testing.assert_allclose(w_r.detach().numpy(), w_t.detach().numpy(), **F32_TOL)


def test_multihead_attention_masks_match_torch():
    m_rt, m_t = rt.nn.MultiheadAttention(8, 2), torch.nn.MultiheadAttention(8, 2)
    copy_weights(m_rt, m_t)
    x = randn(5, 3, 8)
    causal = np.triu(np.ones((5, 5), dtype=bool), 1)
    pad = np.zeros((3, 5), dtype=bool)
    pad[1, 4] = True
    kwargs_r = dict(attn_mask=rt.from_numpy(causal), key_padding_mask=rt.from_numpy(pad),
                    average_attn_weights=False)
    kwargs_t = dict(attn_mask=torch.from_numpy(causal), key_padding_mask=torch.from_numpy(pad),
                    average_attn_weights=False)
    out_r, w_r = m_rt(rt.from_numpy(x), rt.from_numpy(x), rt.from_numpy(x), **kwargs_r)
    out_t, w_t = m_t(torch.from_numpy(x), torch.from_numpy(x), torch.from_numpy(x), **kwargs_t)
    np.testing.assert_allclose(out_r.detach().numpy(), out_t.detach().numpy(), **F32_TOL)
    np.testing.assert_allclose(w_r.detach().numpy(), w_t.detach().numpy(), **F32_TOL)


def test_transformer_encoder_stack_matches_torch():
    layer_rt = rt.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    enc_rt = rt.nn.TransformerEncoder(layer_rt, 2, norm=rt.nn.LayerNorm(8))
    enc_t = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True),
                                        2, norm=torch.nn.LayerNorm(8), enable_nested_tensor=False)
    copy_weights(enc_rt, enc_t)
    causal = np.triu(np.ones((5, 5), dtype=bool), 1)
    x = randn(2, 5, 8)
    out_r = enc_rt(rt.from_numpy(x), mask=rt.from_numpy(causal))
    out_t = enc_t(torch.from_numpy(x), mask=torch.from_numpy(causal))
    np.testing.assert_allclose(out_r.detach().numpy(), out_t.detach().numpy(), **F32_TOL)


LOSSES = [
    ("cross_entropy", lambda nn: nn.CrossEntropyLoss(), (6, 4), np.array([0, 3, 1, 2, 2, 0])),
    ("cross_entropy_smooth_sum", lambda nn: nn.CrossEntropyLoss(label_smoothing=0.1, reduction="sum"), (6, 4),
     np.array([0, 3, 1, 2, 2, 0])),
    ("cross_entropy_ignore", lambda nn: nn.CrossEntropyLoss(ignore_index=1), (6, 4), np.array([0, 1, 1, 2, 2, 0])),
    ("nll", lambda nn: nn.NLLLoss(), (6, 4), np.array([0, 3, 1, 2, 2, 0])),
    ("mse", lambda nn: nn.MSELoss(), (6, 4), None),
    ("bce_with_logits", lambda nn: nn.BCEWithLogitsLoss(), (6, 4), None),
]


@pytest.mark.parametrize("name,make,shape,target", LOSSES, ids=[l[0] for l in LOSSES])
def test_loss_matches_torch(name, make, shape, target):
    if target is None:
        target = np.random.default_rng(3).uniform(size=shape).astype(np.float32)
    else:
        target = target.astype(np.int64)
    x = randn(*shape)
    if name == "nll":
        x = np.log(np.exp(x) / np.exp(x).sum(1, keepdims=True)).astype(np.float32)
    check_parity(make(rt.nn), make(torch.nn), x, target)


def test_weighted_losses_register_weight_buffers():
    w = np.array([1.0, 2.0, 0.5, 1.0], dtype=np.float32)
    m_rt = rt.nn.CrossEntropyLoss(weight=rt.from_numpy(w.copy()))
    assert list(m_rt.state_dict().keys()) == ["weight"]
    check_parity(m_rt, torch.nn.CrossEntropyLoss(weight=torch.from_numpy(w)), randn(5, 4),
                 np.array([0, 1, 2, 3, 1], dtype=np.int64))


def test_default_init_distributions_follow_torch_bounds():
    rt.manual_seed(0)
    lin = rt.nn.Linear(400, 300)
    w = lin.weight.detach().numpy()
    bound = 1 / np.sqrt(400)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.98 * bound
    assert abs(w.std() - bound / np.sqrt(3)) < 0.02 * bound
    conv = rt.nn.Conv2d(8, 16, 3)
    fan_in = 8 * 9
    assert np.abs(conv.bias.detach().numpy()).max() <= 1 / np.sqrt(fan_in)
    emb = rt.nn.Embedding(1000, 64).weight.detach().numpy()
    assert abs(emb.mean()) < 0.02 and abs(emb.std() - 1) < 0.02


def test_module_repr_matches_torch():
    def build(nn):
        return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Dropout(0.1), nn.Linear(16, 10), nn.GELU(approximate="tanh"),
                             nn.LayerNorm(10), nn.Embedding(5, 3, padding_idx=0), nn.CrossEntropyLoss(),
                             nn.MultiheadAttention(8, 2))
    assert repr(build(rt.nn)) == repr(build(torch.nn))


def test_layer_errors_name_the_problem():
    with pytest.raises(ValueError, match="divisible by groups"):
        rt.nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="dropout probability"):
        rt.nn.Dropout(1.5)
    with pytest.raises(ValueError, match="divisible by num_heads"):
        rt.nn.MultiheadAttention(10, 3)
    with pytest.raises(ValueError, match="expected 4D input"):
        rt.nn.BatchNorm2d(3)(rt.zeros(2, 3))
    with pytest.raises(ValueError, match="reduction"):
        rt.nn.MSELoss(reduction="average")
    with pytest.raises(NotImplementedError, match="padding_mode"):
        rt.nn.Conv2d(3, 4, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="Padding_idx"):
        rt.nn.Embedding(5, 2, padding_idx=7)
