"""rt.optim: optimizers and LR schedulers with PyTorch's names, update rules and state_dict format.

    opt = rt.optim.AdamW(model.parameters(), lr=3e-4)
    sched = rt.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=100)
"""
from . import lr_scheduler
from .adam import Adam
from .adamw import AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Adam", "AdamW", "Optimizer", "SGD", "lr_scheduler"]
