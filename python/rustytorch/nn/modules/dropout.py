"""Dropout (torch.nn.Dropout): in training each element is zeroed with probability p and the rest
scaled by 1 / (1 - p); in eval mode the input passes through unchanged.

    drop = rt.nn.Dropout(0.1)
"""
from .. import functional as F
from .module import Module


class Dropout(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        if self.inplace:
            return F.dropout(input, self.p, self.training, inplace=True)
        return F.dropout(input, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"
