"""Forward and backward parity with PyTorch for every bound op, on random inputs.

Each case runs the same inputs through rt and torch (converted through numpy), compares the
outputs, then backpropagates a random-weighted sum of the outputs and compares the gradients of
every floating input: float32 within 1e-5 relative, float64 within 1e-10."""
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import rustytorch as rt
from conftest import assert_close

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402

import rustytorch.nn.functional as RF  # noqa: E402


@dataclass
class Case:
    name: str
    fn: Callable  # fn(lib, functional, *inputs)
    inputs: list  # specs: shape tuple (any real), ("pos", shape), ("nonzero", shape), ("unit", shape), ("int", lo, hi, shape)
    grad: bool = True
    dtypes: tuple = ("float32", "float64")
    nograd: tuple = ()  # indices of inputs torch does not differentiate (loss weights, running stats)


def _any(*s):
    return s


def P(*s):
    return ("pos", s)


def NZ(*s):
    return ("nonzero", s)


def U(*s):
    return ("unit", s)


def I(lo, hi, *s):
    return ("int", lo, hi, s)


def B(*s):
    return ("bool", s)


def sdpa(m, F, q, k, v, attn_mask=None, is_causal=False):
    """rt's fused op vs the reference formula in torch (torch 1.13 has no scaled_dot_product_attention)."""
    if m is rt:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=is_causal)
    s = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    if is_causal:
        s = s.masked_fill(torch.ones(s.shape[-2], s.shape[-1], dtype=torch.bool).tril().logical_not(), float("-inf"))
    if attn_mask is not None:
        s = s + attn_mask
    return s.softmax(-1) @ v


UNARY = ["neg", "abs", "exp", "sin", "cos", "tanh", "sigmoid", "relu", "square"]
POSITIVE = ["log", "log1p", "sqrt", "rsqrt"]

CASES = []
for n in UNARY:
    CASES.append(Case(n, lambda m, F, x, n=n: getattr(m, n)(x), [(3, 4)]))
    CASES.append(Case(n + "_method", lambda m, F, x, n=n: getattr(x, n)(), [(2, 3)]))
for n in POSITIVE:
    CASES.append(Case(n, lambda m, F, x, n=n: getattr(m, n)(x), [P(3, 4)]))
CASES += [
    Case("sign", lambda m, F, x: m.sign(x), [(3, 4)]),
    Case("reciprocal", lambda m, F, x: m.reciprocal(x), [NZ(3, 4)]),
    Case("silu", lambda m, F, x: F.silu(x), [(3, 4)]),
    Case("leaky_relu", lambda m, F, x: F.leaky_relu(x, 0.2), [(3, 4)]),
    Case("gelu", lambda m, F, x: F.gelu(x), [(3, 4)]),
    Case("gelu_tanh", lambda m, F, x: F.gelu(x, approximate="tanh"), [(3, 4)]),
    Case("softplus", lambda m, F, x: F.softplus(x, beta=2.0, threshold=3.0), [(3, 4)]),
    Case("elu", lambda m, F, x: F.elu(x, 0.5), [(3, 4)]),
    Case("logsigmoid", lambda m, F, x: F.logsigmoid(x), [(3, 4)]),
    Case("add_alpha", lambda m, F, a, b: m.add(a, b, alpha=2.5), [(3, 4), (4,)]),
    Case("sub_alpha", lambda m, F, a, b: m.sub(a, b, alpha=0.5), [(2, 3, 4), (3, 1)]),
    Case("mul", lambda m, F, a, b: m.mul(a, b), [(3, 4), (3, 1)]),
    Case("div", lambda m, F, a, b: m.div(a, b), [(3, 4), NZ(4,)]),
    # Rounding divisions (more in test_divmod.py); a number first has no derivative in torch.
    Case("remainder", lambda m, F, a, b: (m.remainder(a * 3, b), a % b, (a * 4) % 1.5, a.remainder(-0.4)),
         [(3, 4), NZ(4,)]),
    Case("fmod", lambda m, F, a, b: (m.fmod(a * 3, b), a.fmod(-0.4)), [(3, 4), NZ(3, 4)]),
    Case("div_rounding_mode", lambda m, F, a, b: (m.div(a * 3, b, rounding_mode="trunc"),
                                                  a.div(b, rounding_mode="floor")), [(3, 4), NZ(4,)]),
    Case("floor_divide", lambda m, F, a, b: (m.floor_divide(a * 3, b), a // b, (a * 4) // 0.7, 3 // b, 2.5 % b),
         [(3, 4), NZ(4,)], grad=False),
    Case("operators", lambda m, F, a, b: (a + b) * 2 - b / 3 + 1 - (2 * a) / (b * b + 1), [(3, 4), (3, 4)]),
    Case("reflected", lambda m, F, a: 1 - a + (2 / (a * a + 1)) * 3, [(3, 4)]),
    Case("pow_scalar", lambda m, F, a: a ** 3 + a.pow(2), [(3, 4)]),
    Case("pow_tensor", lambda m, F, a, b: m.pow(a, b), [P(3, 4), (3, 4)]),
    Case("rpow", lambda m, F, a: 2 ** a, [(3, 4)]),
    Case("maximum", lambda m, F, a, b: m.maximum(a, b), [(3, 4), (4,)]),
    Case("minimum", lambda m, F, a, b: m.minimum(a, b), [(3, 4), (3, 4)]),
    Case("clamp", lambda m, F, a: m.clamp(a, -0.5, 0.7), [(4, 5)]),
    Case("clamp_min", lambda m, F, a: a.clamp(min=-0.2), [(4, 5)]),
    Case("clamp_tensor", lambda m, F, a, lo: m.clamp(a, min=lo), [(4, 5), (5,)]),
    Case("where", lambda m, F, a, b: m.where(a > 0, a, b), [(3, 4), (3, 4)]),
    Case("where_scalar", lambda m, F, a: m.where(a > 0, a, 0.5), [(3, 4)]),
    Case("masked_fill", lambda m, F, a: a.masked_fill(a < 0, 2.0), [(3, 4)]),
    Case("addcmul", lambda m, F, a, b, c: m.addcmul(a, b, c, value=0.5), [(3, 4), (3, 4), (4,)]),
    Case("addcdiv", lambda m, F, a, b, c: m.addcdiv(a, b, c, value=2), [(3, 4), (3, 4), NZ(3, 4)]),
    Case("lerp", lambda m, F, a, b: m.lerp(a, b, 0.3), [(3, 4), (3, 4)]),
    Case("compare", lambda m, F, a, b: (a == b, a != b, a < b, a <= b, a > b, a >= b, m.gt(a, 0), m.le(a, 0.1), m.eq(a, b), m.lt(a, 0.2)),
         [(3, 4), (4,)], grad=False),
    Case("logical", lambda m, F, a, b: (m.logical_and(a > 0, b > 0), m.logical_or(a > 0, b > 0),
                                        m.logical_xor(a > 0, b > 0), m.logical_not(a > 0), (a > 0) & (b > 0),
                                        (a > 0) | (b > 0), (a > 0) ^ (b > 0), ~(a > 0)), [(3, 4), (3, 4)], grad=False),
    Case("isnan_isinf", lambda m, F, a: (m.isnan(a.log()), m.isinf(1 / (a - a))), [(3, 4)], grad=False),
    # reductions
    Case("sum_all", lambda m, F, a: a.sum(), [(3, 4)]),
    Case("sum_dim", lambda m, F, a: m.sum(a, dim=1, keepdim=True), [(3, 4, 2)]),
    Case("sum_dims", lambda m, F, a: a.sum((0, 2)), [(3, 4, 2)]),
    Case("mean", lambda m, F, a: (a.mean(), a.mean(-1), m.mean(a, (0, 1), keepdim=True)), [(3, 4, 2)]),
    Case("prod", lambda m, F, a: (a.prod(), a.prod(1), m.prod(a, 0, keepdim=True)), [NZ(3, 4)]),
    Case("max_min", lambda m, F, a: (a.max(), a.min(), m.max(a), m.min(a)), [(3, 4)]),
    Case("max_dim", lambda m, F, a: tuple(a.max(1)) + tuple(m.min(a, 0, keepdim=True)), [(3, 4)]),
    Case("max_other", lambda m, F, a, b: m.max(a, b), [(3, 4), (3, 4)]),
    Case("amax_amin", lambda m, F, a: (a.amax(1), m.amin(a, (0, 1)), a.amax()), [(3, 4, 2)]),
    Case("argmax_argmin", lambda m, F, a: (a.argmax(), a.argmax(1), m.argmin(a, 0, keepdim=True)), [(3, 4)], grad=False),
    Case("var_std", lambda m, F, a: (a.var(), a.std(1), m.var(a, 0, unbiased=False), a.var(1, keepdim=True),
                                     a.std(1, correction=0)), [(4, 5)]),
    Case("norm", lambda m, F, a: (a.norm(), m.norm(a, 2, 1), a.norm(1), a.norm(3, dim=0, keepdim=True)), [NZ(4, 5)]),
    Case("logsumexp", lambda m, F, a: (m.logsumexp(a, 1), a.logsumexp((0, 1), keepdim=True)), [(4, 5)]),
    Case("all_any", lambda m, F, a: (m.all(a > 0), (a > 0).any(1), (a > -5).all(0, keepdim=True)), [(4, 5)], grad=False),
    # linear algebra, conv, pooling
    Case("matmul_2d", lambda m, F, a, b: a @ b, [(3, 4), (4, 5)]),
    Case("matmul_batched", lambda m, F, a, b: m.matmul(a, b), [(2, 3, 4), (4, 5)]),
    Case("matmul_broadcast", lambda m, F, a, b: m.matmul(a, b), [(2, 1, 3, 4), (3, 4, 2)]),
    Case("matmul_vec", lambda m, F, a, b: (a @ b, b @ a.t()), [(3, 4), (4,)]),
    Case("mm", lambda m, F, a, b: m.mm(a, b), [(3, 4), (4, 2)]),
    Case("bmm", lambda m, F, a, b: a.bmm(b), [(2, 3, 4), (2, 4, 2)]),
    Case("addmm", lambda m, F, c, a, b: m.addmm(c, a, b, beta=0.5, alpha=2), [(3,), (2, 4), (4, 3)]),
    Case("linear", lambda m, F, x, w, b: F.linear(x, w, b), [(5, 4), (3, 4), (3,)]),
    Case("linear_nobias", lambda m, F, x, w: F.linear(x, w), [(2, 5, 4), (3, 4)]),
    Case("conv1d", lambda m, F, x, w, b: F.conv1d(x, w, b, stride=2, padding=1), [(2, 3, 9), (4, 3, 3), (4,)]),
    Case("conv1d_groups", lambda m, F, x, w: F.conv1d(x, w, groups=2, dilation=2), [(2, 4, 9), (4, 2, 3)]),
    Case("conv2d", lambda m, F, x, w, b: F.conv2d(x, w, b, stride=1, padding=1), [(2, 3, 6, 5), (4, 3, 3, 3), (4,)]),
    Case("conv2d_stride", lambda m, F, x, w: F.conv2d(x, w, stride=(2, 1), padding=(0, 1)), [(1, 2, 7, 6), (3, 2, 3, 2)]),
    Case("conv2d_same", lambda m, F, x, w: F.conv2d(x, w, padding="same"), [(1, 2, 5, 5), (3, 2, 3, 3)]),
    Case("max_pool2d", lambda m, F, x: F.max_pool2d(x, 2), [(2, 3, 6, 6)]),
    Case("max_pool2d_pad", lambda m, F, x: F.max_pool2d(x, 3, stride=2, padding=1), [(1, 2, 7, 7)]),
    Case("avg_pool2d", lambda m, F, x: F.avg_pool2d(x, 2, stride=1), [(2, 3, 5, 5)]),
    Case("avg_pool2d_pad", lambda m, F, x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), [(1, 2, 7, 7)]),
    Case("adaptive_avg_pool2d", lambda m, F, x: F.adaptive_avg_pool2d(x, (2, 3)), [(2, 3, 7, 8)]),
    # nn functional
    Case("softmax", lambda m, F, x: (F.softmax(x, dim=1), x.softmax(-1)), [(3, 5)]),
    Case("log_softmax", lambda m, F, x: (F.log_softmax(x, dim=0), x.log_softmax(1)), [(3, 5)]),
    Case("cross_entropy", lambda m, F, x, t: F.cross_entropy(x, t), [(6, 5), I(0, 5, 6)]),
    Case("cross_entropy_opts", lambda m, F, x, t, w: F.cross_entropy(x, t, weight=w, ignore_index=2, label_smoothing=0.1),
         [(8, 5), I(0, 5, 8), U(5)], nograd=(2,)),
    Case("cross_entropy_sum", lambda m, F, x, t: F.cross_entropy(x, t, reduction="sum"), [(4, 5, 3), I(0, 5, 4, 3)]),
    Case("cross_entropy_none", lambda m, F, x, t: F.cross_entropy(x, t, reduction="none"), [(6, 5), I(0, 5, 6)]),
    Case("nll_loss", lambda m, F, x, t: F.nll_loss(F.log_softmax(x, 1), t), [(6, 5), I(0, 5, 6)]),
    Case("nll_loss_weight", lambda m, F, x, t, w: F.nll_loss(x, t, weight=w, reduction="sum"), [(6, 5), I(0, 5, 6), U(5)], nograd=(2,)),
    Case("mse_loss", lambda m, F, x, y: (F.mse_loss(x, y), F.mse_loss(x, y, reduction="none")), [(4, 5), (4, 5)]),
    Case("l1_loss", lambda m, F, x, y: F.l1_loss(x, y), [(4, 5), (4, 5)]),
    Case("smooth_l1_loss", lambda m, F, x, y: F.smooth_l1_loss(x, y), [(4, 5), (4, 5)]),
    Case("bce", lambda m, F, x, y: F.binary_cross_entropy(x, y), [U(4, 5), U(4, 5)]),
    Case("bce_with_logits", lambda m, F, x, y: F.binary_cross_entropy_with_logits(x, y), [(4, 5), U(4, 5)]),
    Case("bce_with_logits_w", lambda m, F, x, y, w, pw: F.binary_cross_entropy_with_logits(x, y, weight=w, pos_weight=pw),
         [(4, 5), U(4, 5), U(5), P(5)], nograd=(2, 3)),
    Case("layer_norm", lambda m, F, x, w, b: F.layer_norm(x, (5,), w, b), [(3, 4, 5), (5,), (5,)]),
    Case("layer_norm_2d", lambda m, F, x: F.layer_norm(x, (4, 5), eps=1e-3), [(3, 4, 5)]),
    Case("batch_norm_train", lambda m, F, x, w, b: F.batch_norm(x, None, None, w, b, training=True), [(6, 3), (3,), (3,)]),
    Case("batch_norm_2d", lambda m, F, x, w, b: F.batch_norm(x, None, None, w, b, training=True), [(4, 3, 2, 2), (3,), (3,)]),
    Case("batch_norm_eval", lambda m, F, x, rm, rv: F.batch_norm(x, rm, rv, training=False), [(6, 3), (3,), P(3)], nograd=(1, 2)),
    Case("embedding", lambda m, F, i, w: F.embedding(i, w), [I(0, 7, 3, 4), (7, 5)]),
    Case("embedding_pad", lambda m, F, i, w: F.embedding(i, w, padding_idx=1), [I(0, 7, 9), (7, 5)]),
    Case("dropout_eval", lambda m, F, x: F.dropout(x, 0.5, training=False), [(3, 4)]),
    Case("sdpa", lambda m, F, q, k, v: sdpa(m, F, q, k, v), [(2, 3, 4), (2, 5, 4), (2, 5, 6)]),
    Case("sdpa_causal", lambda m, F, q, k, v: sdpa(m, F, q, k, v, is_causal=True),
         [(2, 2, 4, 3), (2, 2, 4, 3), (2, 2, 4, 3)]),
    Case("sdpa_mask", lambda m, F, q, k, v, mk: sdpa(m, F, q, k, v, attn_mask=mk),
         [(2, 3, 4), (2, 5, 4), (2, 5, 4), (3, 5)]),
    Case("one_hot", lambda m, F, i: F.one_hot(i, 6), [I(0, 6, 5)], grad=False),
    Case("pad", lambda m, F, x: F.pad(x, (1, 2, 0, 1), value=0.5), [(2, 3, 4)]),
    Case("normalize", lambda m, F, x: F.normalize(x, dim=1), [(3, 4)]),
    # views and shape ops
    Case("view_reshape", lambda m, F, x: (x.view(4, 6), x.reshape(-1, 3), m.reshape(x, (2, 12)), x.view((24,))),
         [(2, 3, 4)]),
    Case("permute_transpose", lambda m, F, x: (x.permute(2, 0, 1), m.permute(x, (1, 2, 0)), x.transpose(0, 2),
                                               m.transpose(x, 1, 2), x[0].T, x[0].t()), [(2, 3, 4)]),
    Case("squeeze_unsqueeze", lambda m, F, x: (x.squeeze(), x.squeeze(1), m.unsqueeze(x, 0), x.unsqueeze(-1)),
         [(2, 1, 3)]),
    Case("expand", lambda m, F, x: (x.expand(4, 3, 5), x.expand(-1, -1, 2), x.expand_as(m.ones(2, 3, 3))),
         [(1, 3, 1)]),
    Case("narrow_select", lambda m, F, x: (x.narrow(1, 1, 2), m.select(x, 0, 1), x.select(-1, 0)), [(3, 4, 2)]),
    Case("flatten", lambda m, F, x: (x.flatten(), m.flatten(x, 1), x.flatten(0, 1), x.unflatten(2, (2, 2))),
         [(2, 3, 4)]),
    Case("contiguous_clone", lambda m, F, x: (x.t().contiguous(), x.clone(), m.clone(x.t())), [(3, 4)]),
    Case("to_dtype", lambda m, F, x: (x.double() * 2, x.float() + 1, x.to(m.float64).sum()), [(3, 4)]),
    Case("cat_stack", lambda m, F, a, b: (m.cat([a, b], 0), m.cat((a, b), dim=1), m.stack([a, b]), m.stack([a, b], 2)),
         [(2, 3), (2, 3)]),
    Case("split_chunk", lambda m, F, x: tuple(x.split(2, 1)) + tuple(m.split(x, [1, 3], 1)) + tuple(x.chunk(2, 0)),
         [(4, 4)]),
    Case("unbind", lambda m, F, x: tuple(x.unbind(1)), [(2, 3)]),
    Case("gather", lambda m, F, x, i: m.gather(x, 1, i), [(3, 5), I(0, 5, 3, 4)]),
    Case("scatter_add", lambda m, F, x, i, s: x.scatter_add(1, i, s), [(3, 5), I(0, 5, 3, 4), (3, 4)]),
    Case("index_select", lambda m, F, x, i: (m.index_select(x, 0, i), x.index_select(1, i.clamp(0, 3))),
         [(5, 4), I(0, 5, 7)]),
    Case("repeat", lambda m, F, x: (x.repeat(2, 3), x.repeat(2, 1, 1)), [(2, 3)]),
    Case("tril_triu", lambda m, F, x: (x.tril(), m.triu(x, 1), x.tril(-1)), [(4, 5)]),
    Case("movedim", lambda m, F, x: m.movedim(x, 0, 2), [(2, 3, 4)]),
    # sorting, selection and scans (more in test_sort_select_scan.py); random normals have no ties
    Case("sort", lambda m, F, a: (m.sort(a, 1), a.sort(0, descending=True), m.argsort(a), a.argsort(0, descending=True),
                                  m.msort(a), a.msort()), [(4, 5)]),
    Case("topk_kthvalue", lambda m, F, a: (m.topk(a, 2), a.topk(3, 0, largest=False), m.kthvalue(a, 2, 1),
                                           a.kthvalue(1, 0, keepdim=True)), [(4, 5)]),
    Case("unique", lambda m, F, i: (m.unique(i), m.unique(i, return_inverse=True, return_counts=True),
                                    i.unique(dim=1, return_inverse=True), m.unique_consecutive(i),
                                    i.unique_consecutive(return_counts=True, return_inverse=True, dim=0)),
         [I(0, 3, 4, 3)], grad=False),
    Case("searchsorted_bucketize", lambda m, F, s, v: (m.searchsorted(m.sort(s).values, v),
                                                       m.searchsorted(m.sort(s).values, v, right=True, out_int32=True),
                                                       m.searchsorted(s[0], v[0], sorter=m.argsort(s[0])),
                                                       m.bucketize(v, m.sort(s[0]).values, right=True)),
         [(3, 6), (3, 4)], grad=False),
    Case("nonzero_argwhere", lambda m, F, a: (m.nonzero(a > 0), (a > 0).nonzero(as_tuple=True), m.argwhere(a > 0.5),
                                              a.argwhere()), [(3, 4)], grad=False),
    Case("masked_select", lambda m, F, a, b: (m.masked_select(a, b > 0), a.masked_select(a > 0)), [(3, 4), (4,)]),
    Case("take", lambda m, F, a, i: (m.take(a, i), a.take(i - 12)), [(3, 4), I(0, 12, 2, 5)]),
    Case("take_along_dim", lambda m, F, a, i: (m.take_along_dim(a, i, 1), a.take_along_dim(i[:2, :1], dim=0),
                                               m.take_along_dim(a, i)), [(3, 4), I(0, 3, 3, 2)]),
    Case("cumsum", lambda m, F, a: (m.cumsum(a, 1), a.cumsum(0), m.cumsum(a, -1, dtype=m.float64)), [(3, 4)]),
    Case("cumprod", lambda m, F, a: (m.cumprod(a, 1), a.cumprod(0)), [NZ(3, 4)]),
    Case("cummax_cummin", lambda m, F, a: (m.cummax(a, 1), a.cummin(0)), [(3, 4)]),
    Case("logcumsumexp", lambda m, F, a: (m.logcumsumexp(a, 1), a.logcumsumexp(0)), [(3, 4)]),
    Case("getitem", lambda m, F, x: (x[1], x[:, 1:3], x[..., ::2], x[None, 0, :, -1], x[[0, 2]], x[:, [1, 1, 0]],
                                     x[x > 0]), [(3, 4, 2)]),
]


def make_inputs(specs, dtype, rng):
    arrays = []
    for spec in specs:
        if isinstance(spec, tuple) and spec and spec[0] == "int":
            _, lo, hi, shape = spec
            arrays.append(rng.integers(lo, hi, size=shape).astype(np.int64))
            continue
        kind, shape = (spec[0], spec[1]) if isinstance(spec, tuple) and spec and isinstance(spec[0], str) else ("any", spec)
        if kind == "pos":
            a = rng.uniform(0.5, 2.0, size=shape)
        elif kind == "nonzero":
            a = rng.uniform(0.5, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)
        elif kind == "unit":
            a = rng.uniform(0.05, 0.95, size=shape)
        else:
            a = rng.standard_normal(size=shape)
        arrays.append(a.astype(dtype))
    return arrays


def flatten_outputs(out):
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res.extend(flatten_outputs(o))
        return res
    return [out]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_parity(case, dtype):
    rng = np.random.default_rng(abs(hash(case.name)) % (2 ** 32))
    arrays = make_inputs(case.inputs, dtype, rng)
    rt_in = [rt.tensor(a) for a in arrays]
    th_in = [torch.tensor(a) for a in arrays]
    for i, (r, t) in enumerate(zip(rt_in, th_in)):
        if case.grad and r.is_floating_point() and i not in case.nograd:
            r.requires_grad_()
            t.requires_grad_()
    rt_out = flatten_outputs(case.fn(rt, RF, *rt_in))
    th_out = flatten_outputs(case.fn(torch, TF, *th_in))
    assert len(rt_out) == len(th_out)
    for i, (r, t) in enumerate(zip(rt_out, th_out)):
        assert str(r.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], f"output {i} dtype"
        assert_close(r, t, dtype, f"{case.name} output {i}")
    if not case.grad:
        return
    rt_loss, th_loss = 0, 0
    for r, t in zip(rt_out, th_out):
        if not t.requires_grad:
            continue
        w = rng.standard_normal(size=tuple(t.shape)).astype(str(t.dtype).split(".")[-1])
        rt_loss = rt_loss + (r * rt.tensor(w)).sum()
        th_loss = th_loss + (t * torch.tensor(w)).sum()
    if isinstance(th_loss, int):
        return
    rt_loss.backward()
    th_loss.backward()
    for i, (r, t) in enumerate(zip(rt_in, th_in)):
        if not t.requires_grad:
            continue
        if t.grad is None:
            assert r.grad is None or float(r.grad.abs().sum()) == 0.0, f"input {i} should get no gradient"
            continue
        assert r.grad is not None, f"{case.name}: input {i} got no gradient"
        assert_close(r.grad, t.grad, dtype, f"{case.name} grad of input {i}")


def test_every_engine_op_has_a_case():
    """Every public function bound from the engine is exercised above (or listed as covered elsewhere)."""
    import inspect
    source = inspect.getsource(inspect.getmodule(test_every_engine_op_has_a_case))
    covered_elsewhere = {"tensor", "arange", "linspace", "eye", "randperm", "bernoulli", "scalar_tensor", "empty_like",
                         "zeros_like", "ones_like", "rand_like", "randn_like", "full_like", "manual_seed", "seed",
                         "initial_seed", "from_numpy", "is_grad_enabled", "is_anomaly_enabled", "detach",
                         "broadcast_shapes", "Tensor", "dtype", "device", "hstack", "vstack", "concat",
                         "concatenate", "dropout", "batch_norm", "broadcast_to", "narrow", "moveaxis",
                         "swapaxes", "swapdims", "negative", "absolute", "clip", "clamp_max", "greater", "less",
                         "greater_equal", "less_equal", "not_equal", "subtract", "multiply", "divide", "true_divide",
                         "unflatten", "clear_autocast_cache", "get_autocast_dtype", "is_autocast_cache_enabled",
                         "is_autocast_enabled",  # autocast state: test_amp.py
                         "get_num_threads", "set_num_threads"}  # thread count: test_tensor.py
    from rustytorch import _C
    missing = [n for n in dir(_C) if not n.startswith("_") and n not in covered_elsewhere
               and not isinstance(getattr(_C, n), (type, _C.dtype)) and f"{n}(" not in source and f".{n}" not in source
               and f'"{n}"' not in source]
    assert not missing, f"ops without a parity case: {missing}"
