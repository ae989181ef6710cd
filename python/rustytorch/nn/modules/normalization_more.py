"""GroupNorm, InstanceNorm1d/2d/3d and LocalResponseNorm (torch.nn).

    gn = rt.nn.GroupNorm(4, 16)                          # weight (ones) and bias (zeros), 16 each
    inorm = rt.nn.InstanceNorm2d(16, affine=True, track_running_stats=True)
    lrn = rt.nn.LocalResponseNorm(5)

InstanceNorm has torch's state (that of BatchNorm): weight, bias when affine; running_mean, running_var,
num_batches_tracked when track_running_stats (the counter is kept for state_dict parity; as in torch,
InstanceNorm does not advance it). In training, or when not tracking, each sample's statistics are used
and the running stats are updated; in eval with tracked stats the running stats normalise.
"""
import warnings

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module, empty_tensor
from .normalization import _BatchNorm


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        if num_groups <= 0 or num_channels % num_groups != 0:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = Parameter(empty_tensor((num_channels,), device, dtype))
            self.bias = Parameter(empty_tensor((num_channels,), device, dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class _InstanceNorm(_BatchNorm):
    _spatial = 0

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False,
                 device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    def forward(self, input):
        name, unbatched = type(self).__name__, self._spatial + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise ValueError(f"{name}: expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input "
                             f"(got {input.dim()}D input)")
        channel_dim = input.dim() - unbatched
        if input.shape[channel_dim] != self.num_features:
            if self.affine or self.track_running_stats:
                raise ValueError(f"{name}: expected input's size at dim={channel_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.shape[channel_dim]}.")
            warnings.warn(f"{name}: input's size at dim={channel_dim} does not match num_features. You can "
                          "silence this warning by not passing in num_features, which is not used because "
                          "affine=False", stacklevel=2)
        x = input.unsqueeze(0) if input.dim() == unbatched else input
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats, self.momentum, self.eps)
        return out.squeeze(0) if input.dim() == unbatched else out


class InstanceNorm1d(_InstanceNorm):
    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    _spatial = 3


class LocalResponseNorm(Module):
    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
