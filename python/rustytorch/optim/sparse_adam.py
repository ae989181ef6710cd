"""SparseAdam (torch.optim.SparseAdam) is refused: rustytorch has no sparse tensors, so there are no sparse
gradients for it to update lazily.

    rt.optim.SparseAdam(model.parameters())   # NotImplementedError saying what to use instead

Use rt.optim.Adam (or AdamW) with the dense gradients every rustytorch module produces (nn.Embedding
has no sparse=True mode here). One difference to expect: SparseAdam leaves the moments of rows that
get no gradient untouched, where Adam decays them every step.
"""
from .optimizer import Optimizer


class SparseAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        raise NotImplementedError(
            "SparseAdam is not supported: rustytorch has no sparse tensors, so there are no sparse gradients to "
            "update lazily. Use rt.optim.Adam (or rt.optim.AdamW) on dense gradients instead; nn.Embedding "
            "produces dense gradients here (its sparse=True mode is not supported either).")
