"""Parameter: a Tensor that a Module registers as trainable when assigned as an attribute.

    w = rt.nn.Parameter(rt.randn(3, 4))      # requires_grad=True, shares w's storage with the input
    module.weight = w                         # lands in module._parameters["weight"]

Contract: Parameter(data) shares `data`'s storage (detached from its history) and is a leaf;
isinstance(p, rt.Tensor) holds, so every Tensor method works on it.
"""
import copy

import rustytorch as rt


class Parameter(rt.Tensor):
    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = rt.empty(0)
        if not isinstance(data, rt.Tensor):
            raise TypeError(
                f"Parameter(data): data must be a rustytorch Tensor, got {type(data).__name__}; "
                "wrap Python numbers or lists with rt.tensor(...) first")
        super().__init__(data.detach())  # Tensor(t) aliases t's storage
        self.requires_grad_(requires_grad)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __copy__(self):
        return copy.deepcopy(self)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()
