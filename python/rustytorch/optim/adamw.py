"""AdamW (torch.optim.AdamW): Adam's update with decoupled weight decay, p = p * (1 - lr * weight_decay)
applied before the moment updates. Defaults as PyTorch: lr 1e-3, betas (0.9, 0.999), eps 1e-8,
weight_decay 1e-2.

    opt = rt.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
"""
from .adam import Adam


class AdamW(Adam):
    _decoupled_weight_decay = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused)
