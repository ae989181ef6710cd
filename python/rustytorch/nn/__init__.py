"""rt.nn: layers, Parameter, init schemes and utilities with PyTorch's names and semantics.

    import rustytorch as rt
    model = rt.nn.Sequential(rt.nn.Linear(64, 128), rt.nn.ReLU(), rt.nn.Linear(128, 10))
    loss = rt.nn.functional.cross_entropy(model(x), y)
    rt.nn.init.zeros_(model[0].bias)
"""
from . import functional, init, parallel, utils
from .modules import *  # noqa: F401,F403 -- the layer classes are this package's API
from .modules import __all__ as _modules_all
from .parameter import Parameter

__all__ = ["Parameter", "functional", "init", "parallel", "utils"] + list(_modules_all)
