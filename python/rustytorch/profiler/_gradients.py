"""Per-parameter gradient histograms in the profile (rt::prof::record_gradient_histogram).

    # TensorBoard's habit (writer.add_histogram after backward), one call for the whole model:
    with rt.profiler.profile() as prof:
        for x, y in loader:
            loss_fn(model(x), y).backward()
            rt.profiler.record_gradients(model)       # one histogram per parameter, at this step
            opt.step(); opt.zero_grad(); prof.step()

    # wandb.watch's habit: every backward records every parameter's histogram by itself.
    with rt.profiler.profile(record_gradients=model) as prof:
        ...
    for h in prof.gradient_histograms():
        print(h.step, h.name, h.norm, h.counts)

Each record holds the gradient's L2 norm, the range [lo, hi] of its finite values, NaN and Inf counts and `bins`
equal-width bins over [lo, hi] (torch.histc(g[isfinite(g)], bins, lo, hi) counts the same; the last bin also
holds hi). Cost: one pass over each gradient (two when it is finite) while a profile records; nothing otherwise.
"""
import math

from .. import _C

_P = _C._profiler

__all__ = ["GradientHistogram", "record_gradients"]


class GradientHistogram:
    """One parameter's gradient at one step (rt::prof::GradientHistogramRecord)."""

    __slots__ = ("step", "time_ns", "name", "numel", "norm", "lo", "hi", "nan_count", "inf_count", "counts")

    def __init__(self, step, time_ns, name, numel, norm, lo, hi, nan_count, inf_count, counts):
        self.step = step            # the profile's step (prof.step_num when it was recorded); -1 when none
        self.time_ns = time_ns      # session clock
        self.name = name            # "encoder.0.weight"
        self.numel = numel
        self.norm = norm            # nan when any element is NaN, inf when any is +-inf
        self.lo = lo                # range of the finite elements (0, 0 when there is none)
        self.hi = hi
        self.nan_count = nan_count
        self.inf_count = inf_count
        self.counts = list(counts)  # empty when no element is finite

    def bin_edges(self):
        """The len(counts) + 1 bin edges over [lo, hi]."""
        n = len(self.counts)
        if n == 0:
            return [self.lo, self.hi]
        return [self.lo + (self.hi - self.lo) * i / n for i in range(n)] + [self.hi]

    def __repr__(self):
        norm = "nan" if math.isnan(self.norm) else f"{self.norm:.4g}"
        extra = (f", nan={self.nan_count}" if self.nan_count else "") + (f", inf={self.inf_count}" if self.inf_count else "")
        return (f"GradientHistogram(step={self.step}, name={self.name!r}, numel={self.numel}, norm={norm}, "
                f"range=[{self.lo:.4g}, {self.hi:.4g}], bins={len(self.counts)}{extra})")


def build_gradient_histograms(data):
    return [GradientHistogram(*row) for row in data.gradient_histograms()]


def named_parameters_of(target, what):
    """(name, parameter) pairs of an nn.Module, a dict {name: parameter} or an iterable of pairs."""
    if hasattr(target, "named_parameters") and callable(target.named_parameters):
        pairs = list(target.named_parameters())
    elif isinstance(target, dict):
        pairs = list(target.items())
    else:
        try:
            pairs = list(target)
        except TypeError:
            raise TypeError(f"{what}: expected an nn.Module, a dict of name -> parameter or (name, parameter) "
                            f"pairs (model.named_parameters()), got {type(target).__name__}") from None
    for item in pairs:
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)):
            raise TypeError(f"{what}: expected (name, parameter) pairs such as model.named_parameters(), got "
                            f"{item!r:.80}")
        if not isinstance(item[1], _C.Tensor):
            raise TypeError(f"{what}: {item[0]!r} is a {type(item[1]).__name__}, not a Tensor")
    return pairs


def _check_bins(bins, what):
    if isinstance(bins, bool) or not isinstance(bins, int) or not 1 <= bins <= 4096:
        raise ValueError(f"{what}: bins must be an int from 1 to 4096 (default 32), got {bins!r}")
    return bins


def record_gradients(model, bins=32):
    """Records each parameter's gradient histogram (norm, range, NaN/Inf counts, `bins` bins) into the
    recording profile, at its current step; call it after backward, before zero_grad. `model` is an
    nn.Module, a dict or model.named_parameters(). Parameters without a .grad are skipped.
    Returns how many were recorded: 0 when no profile records (safe to leave in unprofiled code)."""
    bins = _check_bins(bins, "record_gradients")
    recorded = 0
    for name, p in named_parameters_of(model, "record_gradients"):
        g = p.grad
        if g is not None and _P.record_gradient_histogram(name, g, bins):
            recorded += 1
    return recorded


def hooked_parameters(model, bins):
    """The (name, parameter) pairs profile(record_gradients=model) hooks: leaves that require a gradient.
    Raises TypeError/ValueError for anything else, so a profile fails when it is created, not at start()."""
    what = "profile(record_gradients=...)"
    _check_bins(bins, "profile(gradient_bins=...)")
    pairs = []
    for name, p in named_parameters_of(model, what):
        if not p.requires_grad:
            continue
        if p.grad_fn is not None:
            raise ValueError(f"{what}: {name!r} is not a leaf tensor (it has a grad_fn); gradient histograms are "
                             "recorded for parameters")
        pairs.append((name, p))
    if not pairs:
        raise ValueError(f"{what}: no parameter requires a gradient, so there is nothing to record")
    return pairs


class GradientHooks:
    """Post-accumulate hooks that record each parameter's gradient histogram after every backward
    (profile(record_gradients=model)); remove() disarms them."""

    def __init__(self, pairs, bins):
        from .._grad_mode import enable_grad
        self._nodes = []  # the AccumulateGrad nodes: kept alive, as DDP keeps them, so the hooks stay on them
        self._hooks = []
        with enable_grad():
            for name, p in pairs:
                node = p.expand_as(p).grad_fn.next_functions[0][0]
                self._nodes.append(node)
                self._hooks.append(_P.GradientHistogramHook(node, name, bins))

    def remove(self):
        for h in self._hooks:
            h.remove()
        self._hooks = []
        self._nodes = []
