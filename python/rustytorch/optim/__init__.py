"""rt.optim: optimizers and LR schedulers with PyTorch's names, update rules and state_dict format.

    opt = rt.optim.AdamW(model.parameters(), lr=3e-4)
    sched = rt.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=100)
"""
from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Adadelta", "Adagrad", "Adam", "Adamax", "AdamW", "LBFGS", "NAdam", "Optimizer", "RAdam", "RMSprop",
           "SGD", "SparseAdam", "lr_scheduler"]
