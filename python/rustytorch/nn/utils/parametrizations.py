"""rt.nn.utils.parametrizations: weight_norm and spectral_norm as parametrizations (torch.nn.utils.parametrizations).

    layer = rt.nn.utils.parametrizations.spectral_norm(rt.nn.Linear(20, 40))
    layer.parametrizations.weight.original       # the unnormalised weight (a Parameter)
    layer.parametrizations.weight[0]._u, ._v     # power-iteration vectors (buffers, in the state_dict)
    layer = rt.nn.utils.parametrizations.weight_norm(rt.nn.Linear(20, 40))
    layer.parametrizations.weight.original0      # g (the norms), original1: v (the direction)

spectral_norm divides the weight by its largest singular value, estimated by n_power_iterations steps of the power
method on each access in training mode (15 at registration; none in eval mode), with torch's u/v buffers and
update order. weight_norm follows torch 2.1's parametrization (torch 1.13 has only the hook-based
rt.nn.utils.weight_norm): a state dict with the older weight_g/weight_v keys loads into it. orthogonal is not
provided.
"""
import rustytorch as rt

from .. import functional as F
from ..modules.module import Module
from . import parametrize
from ._norms import norm_except_dim, power_iteration, sigma, weight_norm_value, weight_to_matrix

__all__ = ["spectral_norm", "weight_norm"]


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got n_power_iterations="
                             f"{n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:  # a vector's spectral norm is its 2-norm: nothing to estimate
            self.n_power_iterations = n_power_iterations
            weight_mat = weight_to_matrix(weight.detach(), self.dim)
            h, w = weight_mat.shape
            self.register_buffer("_u", F.normalize(weight_mat.new_empty(h).normal_(0, 1), dim=0, eps=eps))
            self.register_buffer("_v", F.normalize(weight_mat.new_empty(w).normal_(0, 1), dim=0, eps=eps))
            power_iteration(weight_mat, self._u, self._v, 15, eps)

    def forward(self, weight):
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = weight_to_matrix(weight, self.dim)
        if self.training:
            power_iteration(weight_mat.detach(), self._u, self._v, self.n_power_iterations, self.eps)
        return weight / sigma(weight_mat, self._u, self._v)

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Registers a spectral normalisation of module.<name>; dim defaults to 0 (1 for ConvTranspose)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, rt.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if any(c.__name__.startswith("ConvTranspose") for c in type(module).__mro__) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_norm_value(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Registers weight normalisation of module.<name>: original0 = g (norms over every dim but `dim`; dim=None:
    one norm for the whole tensor), original1 = v."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def load_older_keys(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(load_older_keys)
    return module
