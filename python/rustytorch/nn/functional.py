"""rt.nn.functional: torch.nn.functional's signatures over the engine's ops.

    import rustytorch.nn.functional as F
    loss = F.cross_entropy(logits, targets, label_smoothing=0.1)
    y = F.conv2d(x, w, b, stride=1, padding="same")

Functions the engine implements as one op (losses, norms, conv, pooling, attention) call it
directly, so forward and backward are the engine's; the torch functions it lacks (the activations
of _functional_activations.py, pad and pixel_shuffle in _functional_padding.py, normalize, and the
losses from l1_loss on: huber_loss, kl_div, poisson_nll_loss, ...) are compositions of engine ops,
so autograd gives their backward. The sampling and patch functions are compositions too: interpolate in
_functional_interpolate.py, grid_sample and affine_grid in _functional_grid.py, unfold and fold in
_functional_patches.py, embedding_bag in _functional_embedding_bag.py. `inplace=True` arguments are
honoured by the in-place op where one exists.
"""
import math
import warnings

from .. import _C
from ..amp.autocast_mode import _BCE_UNSAFE, _float32_rule  # torch's autocast rules for the compositions
from . import (_functional_activations, _functional_conv, _functional_embedding_bag, _functional_grid,
               _functional_interpolate, _functional_norm, _functional_padding, _functional_patches, _functional_pooling)
from ._functional_activations import *  # noqa: F401,F403 -- selu, celu, prelu, hardswish, ..., gumbel_softmax
from ._functional_activations import _source
from ._functional_embedding_bag import *  # noqa: F401,F403 -- embedding_bag
from ._functional_grid import *  # noqa: F401,F403 -- grid_sample, affine_grid
from ._functional_interpolate import *  # noqa: F401,F403 -- interpolate, upsample*
from ._functional_padding import *  # noqa: F401,F403 -- pad (4 modes), pixel_shuffle, pixel_unshuffle
from ._functional_ctc import ctc_loss  # noqa: F401 -- the alpha recursion in log space
from ._functional_patches import *  # noqa: F401,F403 -- unfold, fold
from ._functional_conv import *  # noqa: F401,F403 -- conv1d/2d/3d, conv_transpose1d/2d/3d
from ._functional_norm import *  # noqa: F401,F403 -- group_norm, instance_norm, local_response_norm
from ._functional_pooling import *  # noqa: F401,F403 -- max/avg pooling 1d/3d, indices, adaptive max

__all__ = ["linear", "relu", "relu_", "relu6", "leaky_relu", "elu", "gelu", "silu", "mish", "sigmoid", "tanh",
           "softplus", "logsigmoid", "hardtanh", "softmax", "log_softmax", "softmin", "cross_entropy", "nll_loss",
           "mse_loss", "l1_loss", "smooth_l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
           "layer_norm", "batch_norm", "embedding", "dropout", "conv1d", "conv2d", "max_pool2d", "avg_pool2d",
           "adaptive_avg_pool2d", "scaled_dot_product_attention", "one_hot", "pad", "normalize",
           "cosine_similarity", "huber_loss", "kl_div", "poisson_nll_loss", "gaussian_nll_loss",
           "cosine_embedding_loss", "margin_ranking_loss", "triplet_margin_loss", "pairwise_distance",
           "hinge_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss", "multilabel_margin_loss", "ctc_loss"]
__all__ += [n for m in (_functional_activations, _functional_padding, _functional_interpolate, _functional_grid,
                        _functional_patches, _functional_embedding_bag, _functional_conv, _functional_norm,
                        _functional_pooling) for n in m.__all__ if n not in __all__]


def _reduction(size_average, reduce, reduction):
    """torch's legacy size_average/reduce arguments -> a reduction string."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _check_reduction(reduction, allowed=("mean", "sum", "none")):
    """Refuses a bad reduction string before any work is done."""
    if reduction not in allowed:
        raise ValueError(f"{reduction} is not a valid value for reduction: use "
                         + ", ".join(f"'{r}'" for r in allowed))


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction: use 'mean', 'sum' or 'none'")


linear = _C.linear
adaptive_avg_pool2d = _C.adaptive_avg_pool2d
layer_norm = _C.layer_norm
batch_norm = _C.batch_norm
scaled_dot_product_attention = _C.scaled_dot_product_attention
one_hot = _C.one_hot
sigmoid = _C.sigmoid
tanh = _C.tanh


def relu(input, inplace=False):
    return input.relu_() if inplace else input.relu()


def relu_(input):
    return input.relu_()


def leaky_relu(input, negative_slope=0.01, inplace=False):
    out = _C.leaky_relu(_source(input, inplace), negative_slope)
    return input.copy_(out) if inplace else out


def gelu(input, approximate="none"):
    return _C.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    out = _C.silu(_source(input, inplace))
    return input.copy_(out) if inplace else out


def mish(input, inplace=False):
    x = _source(input, inplace)
    out = x * _C.softplus(x).tanh()
    return input.copy_(out) if inplace else out


def softplus(input, beta=1.0, threshold=20.0):
    return _C.softplus(input, beta, threshold)


def logsigmoid(input):
    return -_C.softplus(-input)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    return _C.softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    return _C.log_softmax(input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    return _C.softmax(-input, dim, dtype)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    if target.is_floating_point():
        raise NotImplementedError("cross_entropy with class-probability (floating) targets is not supported; pass "
                                  "int64 class indices")
    return _C._cross_entropy(input, target, weight, ignore_index, _reduction(size_average, reduce, reduction),
                             float(label_smoothing))


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    return _C._nll_loss(input, target, weight, ignore_index, _reduction(size_average, reduce, reduction))


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _C._mse_loss(input, target, _reduction(size_average, reduce, reduction))


@_float32_rule()
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _reduce((input - target).abs(), _reduction(size_average, reduce, reduction))


@_float32_rule()
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    diff = (input - target).abs()
    if beta == 0:
        loss = diff
    else:
        loss = _C.where(diff < beta, diff.square() * (0.5 / beta), diff - 0.5 * beta)
    return _reduce(loss, _reduction(size_average, reduce, reduction))


@_float32_rule(cuda_error=_BCE_UNSAFE)
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    log_p = input.log().clamp_min(-100.0)
    log_q = (1 - input).log().clamp_min(-100.0)
    loss = -(target * log_p + (1 - target) * log_q)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, _reduction(size_average, reduce, reduction))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    return _C._binary_cross_entropy_with_logits(input, target, weight, _reduction(size_average, reduce, reduction),
                                                pos_weight)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: max_norm, scale_grad_by_freq and sparse are not supported")
    return _C.embedding(input, weight, padding_idx)


def dropout(input, p=0.5, training=True, inplace=False):
    out = _C.dropout(input, p, training)
    return input.copy_(out) if inplace and training and p > 0 else out


@_float32_rule(on_cpu=False)
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    if out is not None:
        raise NotImplementedError("normalize(out=...) is not supported")
    return input / input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)


@_float32_rule(on_cpu=False)
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    n1 = x1.norm(2, dim).clamp_min(eps)
    n2 = x2.norm(2, dim).clamp_min(eps)
    return (x1 * x2).sum(dim) / (n1 * n2)


# ---- Losses composed from engine ops (autograd gives their backward) ----

def _broadcast_target(op, input, target):
    """input and target broadcast to one shape; warns as torch does when their sizes differ, and names
    the loss and both shapes when they cannot be broadcast."""
    if tuple(input.shape) == tuple(target.shape):
        return input, target
    try:
        shape = _C.broadcast_shapes(tuple(input.shape), tuple(target.shape))
    except RuntimeError as e:
        raise RuntimeError(f"{op}: target of size {list(target.shape)} cannot be broadcast to input of size "
                           f"{list(input.shape)}. Hint: pass a target with the input's shape") from e
    warnings.warn(f"{op}: the target's size {list(target.shape)} differs from the input's {list(input.shape)}; both "
                  f"are broadcast to {list(shape)}, which is rarely what a loss should compare. Give the target "
                  "the input's shape", stacklevel=3)
    return input.expand(*shape), target.expand(*shape)


@_float32_rule()
def huber_loss(input, target, reduction="mean", delta=1.0):
    _check_reduction(reduction)
    if delta <= 0:
        raise ValueError(f"huber_loss: delta must be positive, got {delta}")
    input, target = _broadcast_target("huber_loss", input, target)
    diff = (input - target).abs()
    loss = _C.where(diff < delta, diff.square() * 0.5, (diff - 0.5 * delta) * delta)
    return _reduce(loss, reduction)


@_float32_rule()
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Pointwise KL divergence target * (log target - input), input holding log-probabilities; with
    log_target, target holds log-probabilities too. reduction="batchmean" divides the sum by the batch
    size (the mathematically correct KL); "mean" divides by the element count, as torch does, with its warning."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction, ("mean", "sum", "none", "batchmean"))
    if reduction == "mean":
        warnings.warn("kl_div(reduction='mean') averages over every element, not over the batch: the result is "
                      "the KL divergence divided by the number of classes too. reduction='batchmean' gives the KL "
                      "divergence per sample (PyTorch plans to make 'mean' do that)", stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        # target * log(target) is 0 where target == 0; the log is taken of a safe value there so that
        # neither the forward nor the backward produces NaN.
        positive = target > 0
        safe = _C.where(positive, target, 1.0)
        loss = _C.where(positive, target * safe.log(), 0.0) - target * input
    if reduction == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.dim() != 0 else total
    return _reduce(loss, reduction)


@_float32_rule()
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """Negative log-likelihood of target ~ Poisson(rate): rate = exp(input) with log_input, else input
    (then log(input + eps)). full adds Stirling's approximation of log(target!) where target > 1."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        above_one = target > 1
        safe = _C.where(above_one, target, 1.0)
        stirling = safe * safe.log() - safe + (safe * (2 * math.pi)).log() * 0.5
        loss = loss + stirling.masked_fill(~above_one, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Negative log-likelihood of target ~ N(input, var): 0.5 * (log(max(var, eps)) + (input - target)^2 /
    max(var, eps)), plus 0.5 * log(2 pi) with full. var has input's shape, or input's shape without its last
    dim (one variance per sample), or that shape with a last dim of 1 (heteroscedastic, broadcast). The
    clamp to eps leaves var's gradient as if unclamped, as torch does."""
    _check_reduction(reduction)
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1):
            raise ValueError(f"gaussian_nll_loss: var is of incorrect size {list(var.shape)} for input of size "
                             f"{list(input.shape)}. Hint: var must have the input's shape, the input's shape "
                             "without its last dim, or that shape with a last dim of 1")
    if bool((var < 0).any()):
        raise ValueError("gaussian_nll_loss: var has negative entry/entries")
    var = var + (var.clamp_min(eps) - var).detach()
    loss = ((input - target).square() / var + var.log()) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


@_float32_rule()
def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(input1, input2) where target == 1, max(0, cos - margin) where target == -1 (rows of 2-D
    inputs with a 1-D target, or two 1-D inputs with a 0-D target)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if target.dim() not in (0, 1):
        raise RuntimeError(f"cosine_embedding_loss: 0D or 1D target tensor expected, multi-target not supported "
                           f"(target has size {list(target.shape)})")
    want = target.dim() + 1
    if input1.dim() != want or input2.dim() != want:
        raise RuntimeError(f"cosine_embedding_loss: {target.dim()}D target tensor expects {want}D input tensors, "
                           f"but found inputs with sizes {list(input1.shape)} and {list(input2.shape)}.")
    dim = target.dim()
    dot = (input1 * input2).sum(dim)
    squares = ((input1 * input1).sum(dim) + 1e-12) * ((input2 * input2).sum(dim) + 1e-12)
    cos = dot / squares.sqrt()
    loss = _C.where(target == 1, 1 - cos, 0.0) + _C.where(target == -1, (cos - margin).clamp_min(0.0), 0.0)
    return _reduce(loss, reduction)


@_float32_rule()
def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -target * (input1 - input2) + margin): target 1 means input1 should rank higher."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if not input1.dim() == input2.dim() == target.dim():
        raise RuntimeError("margin_ranking_loss: all input tensors should have the same dimension but got sizes: "
                           f"input1: {list(input1.shape)}, input2: {list(input2.shape)}, "
                           f"target: {list(target.shape)}")
    loss = (-target * (input1 - input2) + margin).clamp_min(0.0)
    return _reduce(loss, reduction)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """p-norm of x1 - x2 + eps over the last dim."""
    dim = max(x1.dim(), x2.dim()) - 1
    return (x1 - x2 + eps).norm(p, dim, keepdim=keepdim)


@_float32_rule()
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) with d the pairwise p-distance; swap
    uses min(d(anchor, negative), d(positive, negative)) as the negative distance."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError("triplet_margin_loss: the anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and "
                           f"negative {dims[2]}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _C.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    loss = (d_pos - d_neg + margin).clamp_min(0.0)
    return _reduce(loss, reduction)


@_float32_rule()
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """input where target == 1, max(0, margin - input) where target == -1 (both terms for other targets)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    loss = (_C.where(target != 1, (margin - input).clamp_min(0.0), 0.0)
            + _C.where(target != -1, input, 0.0))
    return _reduce(loss, reduction)


@_float32_rule()
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input)), computed as softplus so large margins do not overflow."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    input, target = _broadcast_target("soft_margin_loss", input, target)
    return _reduce(_C.softplus(-target * input, 1.0, 20.0), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Per-class binary logistic loss averaged over the classes (last dim): one loss per sample."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"multilabel_soft_margin_loss: target size {list(target.shape)} must match input size "
                         f"{list(input.shape)}")
    loss = target * _C.softplus(-input, 1.0, 20.0) + (1 - target) * _C.softplus(input, 1.0, 20.0)
    if weight is not None:
        loss = loss * weight
    classes = input.dim() - 1
    loss = loss.sum(classes) / input.shape[classes]
    return _reduce(loss, reduction)


@_float32_rule()
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """sum over target classes j and non-target classes i of max(0, 1 - (x[j] - x[i])), divided by the class
    count. target holds class indices (int64) with input's shape; the first -1 ends each sample's list."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if input.dim() not in (0, 1, 2) or tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"multilabel_margin_loss: inconsistent target size {list(target.shape)} for input of "
                           f"size {list(input.shape)}. Hint: input is (C) or (N, C) and target has the same shape")
    if target.is_floating_point():
        raise RuntimeError("multilabel_margin_loss: target must hold int64 class indices")
    squeeze = input.dim() < 2
    x = input.reshape(1, -1) if squeeze else input
    t = target.reshape(1, -1) if squeeze else target
    classes = x.shape[1]
    if classes == 0:
        loss = x.sum(1)
    else:
        listed = (t != -1).long().cumprod(1).bool()  # positions before the first -1
        if bool(((t < 0) | (t >= classes)).logical_and(listed).any()):
            raise RuntimeError(f"multilabel_margin_loss: target index out of bounds for {classes} classes")
        index = t.clamp(0, classes - 1)
        is_target = (_C.one_hot(index, classes) * listed.long().unsqueeze(-1)).sum(1) > 0
        x_target = x.gather(1, index)
        hinge = (1 - x_target.unsqueeze(2) + x.unsqueeze(1)).clamp_min(0.0)
        pairs = listed.unsqueeze(2).logical_and(is_target.logical_not().unsqueeze(1))
        loss = _C.where(pairs, hinge, 0.0).sum((1, 2)) / classes
    if squeeze:
        loss = loss.reshape(())
    return _reduce(loss, reduction)
