"""Linear (y = x @ weight.T + bias) and Identity, as torch.nn.

    fc = rt.nn.Linear(784, 128)          # weight [128, 784], bias [128]
    y = fc(rt.randn(64, 784))            # [64, 128]; any leading dims work

Init (PyTorch's reset_parameters): weight ~ kaiming_uniform_(a=sqrt(5)) = U(-1/sqrt(in), 1/sqrt(in)),
bias ~ U(-1/sqrt(in), 1/sqrt(in)).
"""
import math

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module, empty_tensor


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        if in_features < 0 or out_features < 0:
            raise ValueError(f"Linear: in_features and out_features must be >= 0, got {in_features}, {out_features}")
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty_tensor((out_features, in_features), device, dtype))
        if bias:
            self.bias = Parameter(empty_tensor((out_features,), device, dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.in_features
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class NonDynamicallyQuantizableLinear(Linear):
    """PyTorch's class name for MultiheadAttention.out_proj; behaves exactly as Linear."""
