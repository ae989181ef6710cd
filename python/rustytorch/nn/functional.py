"""rt.nn.functional: torch.nn.functional's signatures over the engine's ops.

    import rustytorch.nn.functional as F
    loss = F.cross_entropy(logits, targets, label_smoothing=0.1)
    y = F.conv2d(x, w, b, stride=1, padding="same")

Functions the engine implements as one op (losses, norms, conv, pooling, attention) call it
directly, so forward and backward are the engine's; the few torch conveniences it lacks (elu,
hardtanh, pad, normalize, l1_loss, binary_cross_entropy, ...) are compositions of engine ops
with the same autograd. `inplace=True` arguments are honoured by the in-place op where one
exists.
"""
from .. import _C
from ..amp.autocast_mode import _BCE_UNSAFE, _float32_rule  # torch's autocast rules for the compositions

__all__ = ["linear", "relu", "relu_", "relu6", "leaky_relu", "elu", "gelu", "silu", "mish", "sigmoid", "tanh",
           "softplus", "logsigmoid", "hardtanh", "softmax", "log_softmax", "softmin", "cross_entropy", "nll_loss",
           "mse_loss", "l1_loss", "smooth_l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
           "layer_norm", "batch_norm", "embedding", "dropout", "conv1d", "conv2d", "max_pool2d", "avg_pool2d",
           "adaptive_avg_pool2d", "scaled_dot_product_attention", "one_hot", "pad", "normalize",
           "cosine_similarity"]


def _reduction(size_average, reduce, reduction):
    """torch's legacy size_average/reduce arguments -> a reduction string."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction: use 'mean', 'sum' or 'none'")


linear = _C.linear
conv1d = _C.conv1d
conv2d = _C.conv2d
max_pool2d = _C.max_pool2d
avg_pool2d = _C.avg_pool2d
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


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return input.clamp_(min_val, max_val) if inplace else input.clamp(min_val, max_val)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    out = _C.leaky_relu(input, negative_slope)
    return input.copy_(out) if inplace else out


def elu(input, alpha=1.0, inplace=False):
    out = _C.where(input > 0, input, (input.exp() - 1) * alpha)
    return input.copy_(out) if inplace else out


def gelu(input, approximate="none"):
    return _C.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    out = _C.silu(input)
    return input.copy_(out) if inplace else out


def mish(input, inplace=False):
    out = input * _C.softplus(input).tanh()
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


def pad(input, pad, mode="constant", value=None):
    """Constant padding of the last len(pad) // 2 dims: pad = (left, right, top, bottom, ...)."""
    if mode != "constant":
        raise NotImplementedError(f"pad(mode='{mode}') is not supported; only mode='constant' is available")
    if len(pad) % 2 != 0 or len(pad) // 2 > input.dim():
        raise ValueError(f"pad: padding length must be even and at most 2 * input.dim(), got {len(pad)}")
    value = 0.0 if value is None else value
    out = input
    for i in range(len(pad) // 2):
        dim = input.dim() - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        if before < 0:
            out = out.narrow(dim, -before, out.shape[dim] + before)
            before = 0
        if after < 0:
            out = out.narrow(dim, 0, out.shape[dim] + after)
            after = 0
        parts = []
        for n in (before, None, after):
            if n is None:
                parts.append(out)
            elif n > 0:
                shape = list(out.shape)
                shape[dim] = n
                parts.append(_C._full(shape, value, dtype=out.dtype))
        out = _C.cat(parts, dim) if len(parts) > 1 else out
    return out


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
