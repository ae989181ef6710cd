"""F.ctc_loss: connectionist temporal classification loss (torch.nn.functional.ctc_loss), composed of engine ops.

    log_probs = model(x).log_softmax(2)              # (T, N, C): time, batch, classes (blank included)
    loss = F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0)

targets are padded (N, S) or concatenated 1-D (sum(target_lengths)); lengths are integer tensors or tuples/lists
of ints. The forward (alpha) recursion runs in log space over the extended label sequence (blank, l1, blank, l2,
..., blank), vectorised over the batch and the label positions, with a Python loop over time steps only; autograd
differentiates it, so the gradient is the engine's backward of gather/logsumexp/where. As in torch, the gradient
returned for log_probs is the one for the logits under a log_softmax (the true gradient plus softmax(log_probs) on
each step within the input length): identical to the true one once it flows back through log_softmax. Impossible alignments
(an input shorter than its target needs) give an infinite loss and NaN gradients as in torch, or 0 and a zero
gradient with zero_infinity=True. reduction="mean" divides each loss by its target length (at least 1) and then
averages over the batch, as torch does.

Unreachable states are carried as a large negative finite number rather than -inf, so that logsumexp and its
backward never meet -inf - -inf; a final log-likelihood at that level means "impossible". Difference from torch
1.13: an input length of 0 gives a loss of 0 (empty target) or inf (otherwise), where torch 1.13 reads
uninitialised state.
"""
import numpy as np

import rustytorch as rt
from .. import _C
from ..amp.autocast_mode import _float32_rule
from ..autograd.function import Function

__all__ = ["ctc_loss"]

_UNREACHABLE = -1e30  # log-probability of an unreachable state (finite: keeps logsumexp's backward free of NaN)
_IMPOSSIBLE = 1e29  # a negative log-likelihood above this came from unreachable states only


def _lengths(value, name, batch):
    if isinstance(value, _C.Tensor):
        if value.dtype.is_floating_point or value.dtype == rt.bool:
            raise TypeError(f"ctc_loss: {name} must hold integers, got dtype {value.dtype}; pass an int64 tensor or "
                            "a tuple of ints")
        values = value.reshape(-1).tolist()
    elif isinstance(value, (tuple, list)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        values = list(value)
    else:
        raise TypeError(f"ctc_loss: {name} must be an integer tensor or a tuple/list of ints, got "
                        f"{type(value).__name__}")
    if len(values) != batch:
        raise RuntimeError(f"{name} must be of size batch_size ({batch}), got {len(values)} values")
    return values


def _extended_labels(targets, input_lengths, target_lengths, blank, n_classes, n_steps):
    """Numpy index arrays of the extended label sequences: labels (N, L), skip allowed (N, L)."""
    for n, length in enumerate(input_lengths):
        if not 0 <= length <= n_steps:
            raise RuntimeError(f"Expected input_lengths to have value at most {n_steps} (and at least 0), but got "
                               f"value {length} for batch element {n}")
    if any(length < 0 for length in target_lengths):
        raise RuntimeError(f"ctc_loss: target_lengths must be >= 0, got {target_lengths}")
    if not isinstance(targets, _C.Tensor) or targets.dtype.is_floating_point or targets.dtype == rt.bool:
        raise TypeError("ctc_loss: targets must be an integer tensor of class indices (int64 or int32)")
    flat = np.asarray(targets.detach().cpu().tolist(), dtype=np.int64)
    batch = len(target_lengths)
    longest = max(target_lengths, default=0)
    if flat.ndim == 2:  # padded (N, S)
        if flat.shape[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                               f"{flat.shape[1]} for argument #2 'targets'")
        rows = [flat[n, :length] for n, length in enumerate(target_lengths)]
    elif flat.ndim == 1:  # concatenated
        if flat.shape[0] != sum(target_lengths):
            raise RuntimeError(f"Expected tensor to have size {sum(target_lengths)} at dimension 0, but got size "
                               f"{flat.shape[0]} for argument #2 'targets' (1-D targets are the concatenation of "
                               "every target, sum(target_lengths) long)")
        offsets = np.concatenate([[0], np.cumsum(target_lengths)]).astype(np.int64)
        rows = [flat[offsets[n]:offsets[n + 1]] for n in range(batch)]
    else:
        raise RuntimeError(f"ctc_loss: targets must be 2-D (batch, max target length) or 1-D (concatenated), got "
                           f"{flat.ndim}-D")
    width = 2 * longest + 1
    labels = np.full((batch, width), blank, dtype=np.int64)
    for n, row in enumerate(rows):
        if row.size and (row.min() < 0 or row.max() >= n_classes):
            raise RuntimeError(f"ctc_loss: target values must be class indices in [0, {n_classes}), got "
                               f"{int(row.min())}..{int(row.max())} for batch element {n}")
        labels[n, 1:2 * len(row):2] = row
    positions = np.arange(width)
    skip = np.zeros((batch, width), dtype=bool)
    if width > 2:  # a label may follow the previous label directly (skipping the blank) unless they are equal
        skip[:, 2:] = (positions[2:] % 2 == 1) & (labels[:, 2:] != labels[:, :-2])
    return labels, skip


class _ImpossibleGradient(Function):
    """Adds 0 to the loss; its backward is NaN over log_probs[t, n] (t < input length) of the impossible samples,
    the gradient torch gives an infinite CTC loss (zero_infinity=False)."""

    @staticmethod
    def forward(ctx, log_probs, rows):
        ctx.rows = rows.expand(log_probs.shape)
        return rt.zeros(log_probs.shape[1], dtype=log_probs.dtype, device=log_probs.device)

    @staticmethod
    def backward(ctx, grad):
        rows = ctx.rows
        nan = rt.full((), float("nan"), dtype=grad.dtype, device=grad.device)
        return rt.where(rows, nan, rt.zeros((), dtype=grad.dtype, device=grad.device)), None


def _alpha_log_likelihood(log_probs, labels, skip, input_lengths, target_lengths):
    """log p(target | input) per batch element by the alpha recursion; unreachable ~ _UNREACHABLE."""
    n_steps, batch, _ = log_probs.shape
    width = labels.shape[1]
    device, dtype = log_probs.device, log_probs.dtype
    unreachable = rt.full((), _UNREACHABLE, dtype=dtype, device=device)
    index = rt.tensor(labels, device=device).unsqueeze(0).expand(n_steps, batch, width)
    emissions = log_probs.gather(2, index).clamp(min=_UNREACHABLE)  # (T, N, L); log(0) stays finite
    skip_t = rt.tensor(skip, device=device)
    pad = rt.full((batch, 2), _UNREACHABLE, dtype=dtype, device=device)
    start = rt.tensor(np.arange(width) < 2, device=device).unsqueeze(0)
    alpha = rt.where(start, emissions[0], unreachable)
    longest_input = max(input_lengths, default=0)
    lengths = np.asarray(input_lengths)
    for t in range(1, longest_input):
        padded = rt.cat([pad, alpha], 1)
        stay, advance = alpha, padded[:, 1:width + 1]
        jump = rt.where(skip_t, padded[:, :width], unreachable)
        new = rt.logsumexp(rt.stack([stay, advance, jump]), 0) + emissions[t]
        if (lengths > t).all():
            alpha = new
        else:  # sequences that have ended keep their last alpha
            running = rt.tensor(lengths > t, device=device).unsqueeze(1)
            alpha = rt.where(running, new, alpha)
    ends = np.stack([2 * np.asarray(target_lengths), np.maximum(2 * np.asarray(target_lengths) - 1, 0)], 1)
    has_label = np.stack([np.ones(batch, dtype=bool), np.asarray(target_lengths) > 0], 1)
    final = rt.where(rt.tensor(has_label, device=device), alpha.gather(1, rt.tensor(ends, device=device)),
                     unreachable)
    log_likelihood = rt.logsumexp(final, 1)
    if (lengths == 0).any():  # nothing emitted: only the empty target is possible
        empty = rt.tensor(np.where(np.asarray(target_lengths) == 0, 0.0, _UNREACHABLE), dtype=dtype, device=device)
        log_likelihood = rt.where(rt.tensor(lengths == 0, device=device), empty, log_likelihood)
    return log_likelihood


def _softmax_convention(log_probs, within):
    """Zero, with gradient exp(log_probs[t, n]) for t < input length: torch's CTC backward returns the gradient
    with respect to the logits before log_softmax (true gradient + softmax), not the gradient with respect to
    log_probs. Through a log_softmax both give the same logit gradient (each row of the extra term sums to the
    softmax, which log_softmax's backward removes); on log_probs themselves this term makes the numbers torch's."""
    probs = (log_probs.exp() * within.unsqueeze(2).to(log_probs.dtype)).sum((0, 2))
    return probs - probs.detach()


@_float32_rule()  # torch's autocast runs ctc_loss in float32 (CPU and CUDA)
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """torch.nn.functional.ctc_loss. log_probs: (T, N, C) or (T, C) log-softmax outputs."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction: use 'none', 'mean' or 'sum'")
    if not isinstance(log_probs, _C.Tensor) or log_probs.dtype not in (rt.float32, rt.float64):
        got = log_probs.dtype if isinstance(log_probs, _C.Tensor) else type(log_probs).__name__
        raise TypeError(f"ctc_loss: log_probs must be a float32 or float64 tensor, got {got}; convert with "
                        ".float()")
    batched = log_probs.dim() == 3
    if not batched:
        if log_probs.dim() != 2:
            raise RuntimeError(f"ctc_loss: log_probs must be (T, N, C) or unbatched (T, C), got shape "
                               f"{tuple(log_probs.shape)}")
        log_probs = log_probs.unsqueeze(1)
        if isinstance(targets, _C.Tensor) and targets.dim() == 1:
            targets = targets.unsqueeze(0)
    n_steps, batch, n_classes = log_probs.shape
    if not 0 <= blank < n_classes:
        raise RuntimeError(f"blank must be in label range: got blank={blank} for {n_classes} classes")
    input_lengths = _lengths(input_lengths, "input_lengths", batch)
    target_lengths = _lengths(target_lengths, "target_lengths", batch)
    labels, skip = _extended_labels(targets, input_lengths, target_lengths, blank, n_classes, n_steps)
    loss = -_alpha_log_likelihood(log_probs, labels, skip, input_lengths, target_lengths)
    within = rt.tensor(np.arange(n_steps)[:, None] < np.asarray(input_lengths)[None, :], device=log_probs.device)
    if log_probs.requires_grad:
        loss = loss + _softmax_convention(log_probs, within)
    impossible = loss.detach() > _IMPOSSIBLE
    if bool(impossible.any()):
        if zero_infinity:
            loss = rt.where(impossible, rt.zeros((), dtype=loss.dtype, device=loss.device), loss)
        else:
            inf = rt.full((), float("inf"), dtype=loss.dtype, device=loss.device)
            loss = rt.where(impossible, inf, loss)
            if loss.requires_grad:
                rows = (impossible.unsqueeze(0) & within).unsqueeze(2)
                loss = loss + _ImpossibleGradient.apply(log_probs, rows)
    if reduction == "none":
        return loss if batched else loss.squeeze(0)
    if reduction == "sum":
        return loss.sum()
    divisors = rt.tensor([max(length, 1) for length in target_lengths], dtype=loss.dtype, device=loss.device)
    return (loss / divisors).mean()
