"""Elementwise nonlinearities and softmax as modules (torch.nn.ReLU, GELU, SiLU, ELU, Hardswish, GLU,
Softmin, Softmax2d, ...). Only PReLU has a parameter (its learnt slope, `weight`).

    act = rt.nn.GELU(approximate="tanh")
    probs = rt.nn.Softmax(dim=-1)(logits)
    act = rt.nn.PReLU(num_parameters=16)     # one slope per channel of an [N, 16, ...] input
"""
from .. import functional as F
from .. import init as init_
from ..parameter import Parameter
from .module import Module, empty_tensor


class ReLU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=True) if self.inplace else F.relu(input)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        if self.inplace:
            return F.leaky_relu(input, self.negative_slope, inplace=True)
        return F.leaky_relu(input, self.negative_slope)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, inplace=True) if self.inplace else F.silu(input)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    def forward(self, input):
        return input.tanh()


class Sigmoid(Module):
    def forward(self, input):
        return input.sigmoid()


class Softplus(Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Softmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        if dim is None:
            raise ValueError("Softmax: give the dimension to normalise over, e.g. rt.nn.Softmax(dim=-1)")
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    def forward(self, input):
        return F.log_softmax(input, self.dim)


class _Inplace(Module):
    """An activation whose only option is inplace (torch's ReLU6, SELU, Hardswish, ...)."""
    _fn = None

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class _Stateless(Module):
    """An activation without options (torch's Softsign, Tanhshrink, LogSigmoid)."""
    _fn = None

    def forward(self, input):
        return type(self)._fn(input)


class SELU(_Inplace):
    _fn = F.selu


class ReLU6(_Inplace):
    _fn = F.relu6


class Hardswish(_Inplace):
    _fn = F.hardswish


class Hardsigmoid(_Inplace):
    _fn = F.hardsigmoid


class Mish(_Inplace):
    _fn = F.mish


class Softsign(_Stateless):
    _fn = F.softsign


class Tanhshrink(_Stateless):
    _fn = F.tanhshrink


class LogSigmoid(_Stateless):
    _fn = F.logsigmoid


class ELU(Module):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(ELU):
    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class Hardtanh(Module):
    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        if min_val > max_val:
            raise ValueError(f"Hardtanh: min_val ({min_val}) must not exceed max_val ({max_val})")
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class Threshold(Module):
    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class Hardshrink(Module):
    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    def forward(self, input):
        return F.softshrink(input, self.lambd)


class GLU(Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmin(Softmax):
    def forward(self, input):
        return F.softmin(input, self.dim)


class Softmax2d(Module):
    """Softmax over the channels at every spatial position: input [N, C, H, W] or [C, H, W]."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected a 3-D [C, H, W] or 4-D [N, C, H, W] input, got "
                             f"{input.dim()}-D of shape {list(input.shape)}")
        return F.softmax(input, -3)


class PReLU(Module):
    """max(0, x) + weight * min(0, x) with a learnt slope: 1 shared (num_parameters=1) or one per
    channel (dim 1 of the input). weight starts at `init`."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        if num_parameters < 1:
            raise ValueError(f"PReLU: num_parameters must be at least 1, got {num_parameters}")
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(empty_tensor((num_parameters,), device, dtype))
        self.reset_parameters()

    def reset_parameters(self):
        init_.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"
