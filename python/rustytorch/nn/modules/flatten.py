"""Flatten and Unflatten (torch.nn).

    rt.nn.Flatten()(rt.zeros(8, 16, 4, 4)).shape          # (8, 256): keeps the batch dim
    rt.nn.Unflatten(1, (16, 4, 4))(rt.zeros(8, 256)).shape  # (8, 16, 4, 4)
"""
from .module import Module


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    def __init__(self, dim, unflattened_size):
        super().__init__()
        if not isinstance(dim, int):
            raise TypeError(f"Unflatten: dim must be an int, got {type(dim).__name__}")
        self.dim = dim
        self.unflattened_size = tuple(unflattened_size)

    def forward(self, input):
        shape = list(input.shape)
        dim = self.dim if self.dim >= 0 else self.dim + len(shape)
        if not 0 <= dim < len(shape):
            raise IndexError(f"Unflatten: dim {self.dim} is out of range for input of shape {shape}")
        return input.reshape(tuple(shape[:dim]) + self.unflattened_size + tuple(shape[dim + 1:]))

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
