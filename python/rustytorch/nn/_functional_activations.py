"""The activations of torch.nn.functional that the engine has no single op for, composed from engine ops
(autograd gives their backward). rt.nn.functional re-exports every name here.

    F.selu(x); F.celu(x, alpha=0.5); F.prelu(x, weight)      # weight: 1 or x.shape[1] slopes
    F.hardswish(x); F.hardsigmoid(x); F.softsign(x); F.tanhshrink(x)
    F.threshold(x, 0.1, 20.0); F.hardshrink(x, 0.5); F.softshrink(x, 0.5); F.glu(x, dim=-1)
    F.gumbel_softmax(logits, tau=1.0, hard=True)            # one-hot forward, soft (straight-through) backward

Branches that would overflow (exp of a large input) are computed on a clamped input, so neither the
forward nor the backward of the branch `where` discards produces inf or NaN. `inplace=True` writes the
result into the input with copy_, as the existing elu/silu do.
"""
from .. import _C

__all__ = ["elu", "elu_", "selu", "selu_", "celu", "celu_", "prelu", "hardtanh", "hardtanh_", "relu6",
           "hardswish", "hardsigmoid", "softsign", "tanhshrink", "threshold", "threshold_", "hardshrink",
           "softshrink", "glu", "leaky_relu_", "gumbel_softmax"]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _source(input, inplace):
    """What an activation computes from. In place under autograd that is a clone, so that the copy_
    writing the result back does not modify a tensor the result's backward has saved."""
    if inplace and input.requires_grad and _C.is_grad_enabled():
        return input.clone()
    return input


def _result(input, out, inplace):
    return input.copy_(out) if inplace else out


def elu(input, alpha=1.0, inplace=False):
    """x where x > 0, alpha * (exp(x) - 1) elsewhere."""
    x = _source(input, inplace)
    negative = (x.clamp_max(0.0).exp() - 1) * alpha
    return _result(input, _C.where(x > 0, x, negative), inplace)


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def selu(input, inplace=False):
    """scale * elu(x, alpha) with the self-normalising constants of Klambauer et al."""
    return _result(input, elu(_source(input, inplace), _SELU_ALPHA) * _SELU_SCALE, inplace)


def selu_(input):
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise ValueError("celu: alpha cannot be 0 (the formula divides by it); use a nonzero alpha")
    x = _source(input, inplace)
    negative = ((x / alpha).clamp_max(0.0).exp() - 1) * alpha
    return _result(input, _C.where(x > 0, x, negative), inplace)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def prelu(input, weight):
    """x where x >= 0, weight * x elsewhere; weight holds 1 slope or one per channel (input dim 1)."""
    channels = input.shape[1] if input.dim() >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError(f"prelu: mismatch of parameter numbers and input channel size. Found parameter numbers = "
                           f"{weight.numel()} and channel size = {channels}. Hint: give 1 slope or input.shape[1]")
    slope = weight.reshape(-1)
    if weight.numel() != 1:
        slope = slope.reshape((channels,) + (1,) * (input.dim() - 2))
    elif input.dim() == 0:
        slope = slope.reshape(())
    return _C.where(input >= 0, input, input * slope)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """x clamped to [min_val, max_val]."""
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) must not exceed max_val ({max_val})")
    return input.clamp_(min_val, max_val) if inplace else input.clamp(min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6: 0 below -3, 1 above 3, linear between."""
    return _result(input, (_source(input, inplace) + 3).clamp(0.0, 6.0) / 6, inplace)


def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6 (MobileNetV3)."""
    x = _source(input, inplace)
    return _result(input, x * ((x + 3).clamp(0.0, 6.0) / 6), inplace)


def softsign(input):
    """x / (1 + |x|)."""
    return input / (input.abs() + 1)


def tanhshrink(input):
    """x - tanh(x)."""
    return input - input.tanh()


def threshold(input, threshold, value, inplace=False):
    """x where x > threshold, value elsewhere."""
    x = _source(input, inplace)
    return _result(input, _C.where(x > threshold, x, value), inplace)


def threshold_(input, threshold, value):
    x = _source(input, True)
    return _result(input, _C.where(x > threshold, x, value), True)


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, 0 elsewhere."""
    return _C.where(input.abs() > lambd, input, 0.0)


def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""
    if lambd < 0:
        raise ValueError(f"softshrink: lambd must be greater or equal to 0, but found to be {lambd}")
    return _C.where(input > lambd, input - lambd, _C.where(input < -lambd, input + lambd, 0.0))


def glu(input, dim=-1):
    """a * sigmoid(b), a and b the two halves of input along dim."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    size = input.shape[dim]
    if size % 2:
        d = dim + input.dim() if dim < 0 else dim
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {size}")
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def leaky_relu_(input, negative_slope=0.01):
    return input.copy_(_C.leaky_relu(_source(input, True), negative_slope))


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + g) / tau) with g ~ Gumbel(0, 1) drawn from the default generator. With hard, the
    result is the one-hot of its argmax in the forward pass and the soft sample's gradient in the backward
    (straight-through: y_hard - y_soft.detach() + y_soft). eps is accepted for torch's signature (unused)."""
    if tau <= 0:
        raise ValueError(f"gumbel_softmax: tau must be positive, got {tau}")
    uniform = _C.rand_like(logits)
    exponential = (-(1 - uniform).log()).clamp_min(1e-30)  # Exp(1) draws, never 0
    y_soft = _C.softmax((logits - exponential.log()) / tau, dim, None)
    if not hard:
        return y_soft
    d = dim + logits.dim() if dim < 0 else dim
    index = y_soft.argmax(d)
    y_hard = _C.one_hot(index, logits.shape[d]).movedim(-1, d).to(y_soft.dtype)
    return y_hard - y_soft.detach() + y_soft
