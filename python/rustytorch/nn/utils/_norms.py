"""Shared pieces of weight_norm and spectral_norm: norm_except_dim, _weight_norm and the power iteration."""
import rustytorch as rt

from .. import functional as F


def norm_except_dim(v, pow=2, dim=0):
    """The p-norm of v over every dimension but `dim`, kept as size-1 dimensions; dim=-1: over all of v
    (torch.norm_except_dim's convention)."""
    if dim == -1:
        return v.norm(pow)
    others = tuple(d for d in range(v.dim()) if d != dim)
    if not others:
        return v.abs() if pow != 0 else (v != 0).to(v.dtype)
    return v.norm(pow, dim=others, keepdim=True)


def weight_norm_value(v, g, dim):
    """v * g / ||v|| (torch._weight_norm)."""
    return v * (g / norm_except_dim(v, 2, dim))


def weight_to_matrix(weight, dim):
    """weight with `dim` moved first and the rest flattened: (size(dim), -1)."""
    if dim != 0:
        weight = weight.permute(dim, *(d for d in range(weight.dim()) if d != dim))
    return weight.reshape(weight.shape[0], -1)


def power_iteration(weight_mat, u, v, n_iterations, eps, v_first=False):
    """n_iterations of the power method, updating the vectors u, v in place (no gradient). torch's parametrization
    updates u then v; the older hook-based spectral_norm updates v then u (v_first=True)."""
    with rt.no_grad():
        for _ in range(n_iterations):
            if v_first:
                v.copy_(F.normalize(rt.matmul(weight_mat.t(), u), dim=0, eps=eps))
                u.copy_(F.normalize(rt.matmul(weight_mat, v), dim=0, eps=eps))
            else:
                u.copy_(F.normalize(rt.matmul(weight_mat, v), dim=0, eps=eps))
                v.copy_(F.normalize(rt.matmul(weight_mat.t(), u), dim=0, eps=eps))


def sigma(weight_mat, u, v):
    """u^T W v with clones of u and v, so later in-place updates do not touch this graph."""
    return (u.clone() * rt.matmul(weight_mat, v.clone())).sum()
