"""Tensor factories with torch's signatures: rt.zeros(2, 3), rt.zeros((2, 3), dtype=...),
rt.randint(10, (3,)), rt.randn(4, generator=g), ..."""
from . import _C
from ._random import using

__all__ = ["zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "rand_like", "randn_like",
           "randint_like", "normal", "bernoulli", "multinomial"]


def _size(size, what="size"):
    if len(size) == 1 and not isinstance(size[0], int) and size[0] is not None:
        return tuple(size[0])
    return size


def _check_unused(layout, pin_memory, out, device=None):
    if out is not None:
        raise NotImplementedError("the out= argument is not supported; assign the result instead")
    if pin_memory and device is not None and _C.device(device).type != "cpu":
        raise RuntimeError(f"pin_memory=True is for CPU tensors, got device={device}")


def _pinned(t, pin_memory, requires_grad):
    """The factory's result in pinned memory (pin_memory=True), still a leaf with requires_grad."""
    if not pin_memory:
        return t
    return t.detach().pin_memory().requires_grad_(requires_grad)


def _shaped(cfn):
    def factory(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
                memory_format=None, generator=None):
        _check_unused(layout, pin_memory, out, device)
        with using(generator):
            t = cfn(_size(size), dtype=dtype, device=device, requires_grad=requires_grad)
        return _pinned(t, pin_memory, requires_grad)
    return factory


zeros = _shaped(_C._zeros)
ones = _shaped(_C._ones)
empty = _shaped(_C._empty)
rand = _shaped(_C._rand)
randn = _shaped(_C._randn)
for _f, _n in ((zeros, "zeros"), (ones, "ones"), (empty, "empty"), (rand, "rand"), (randn, "randn")):
    _f.__name__ = _f.__qualname__ = _n


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    _check_unused(layout, pin_memory, out, device)
    t = _C._full(size, fill_value, dtype=dtype, device=device, requires_grad=requires_grad)
    return _pinned(t, pin_memory, requires_grad)


def randint(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
            pin_memory=False):
    """randint(high, size) or randint(low, high, size): integers in [low, high)."""
    _check_unused(layout, pin_memory, out, device)
    args = list(args)
    if size is None:
        if not args:
            raise TypeError("randint() missing required argument 'size'")
        size = args.pop()
    if len(args) == 1:
        low, high = 0, args[0]
    elif len(args) == 2:
        low, high = args
    else:
        raise TypeError("randint() expects (high, size) or (low, high, size)")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    with using(generator):
        t = _C._randint(int(low), int(high), size, dtype=dtype, device=device, requires_grad=requires_grad)
    return _pinned(t, pin_memory, requires_grad)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    _check_unused(layout, pin_memory, out, device)
    with using(generator):
        t = _C.randperm(n, dtype=dtype, device=device, requires_grad=requires_grad)
    return _pinned(t, pin_memory, requires_grad)


def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return _C.rand_like(input, dtype=dtype, device=device, requires_grad=requires_grad)


def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return _C.randn_like(input, dtype=dtype, device=device, requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, layout=None, device=None, requires_grad=False,
                 memory_format=None):
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype, device=device,
                   requires_grad=requires_grad)


def normal(mean, std, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    """normal(mean: float, std: float, size) or normal(mean: Tensor, std: Tensor/float)."""
    _check_unused(layout, False, out)
    with using(generator):
        if isinstance(mean, _C.Tensor) or isinstance(std, _C.Tensor):
            shape = _C.broadcast_shapes(tuple(getattr(mean, "shape", ())), tuple(getattr(std, "shape", ())))
            ref = mean if isinstance(mean, _C.Tensor) else std
            return _C._randn(shape, dtype=ref.dtype) * std + mean
        if size is None:
            raise TypeError("normal(mean: float, std: float) needs a size")
        t = _C._randn(size, dtype=dtype, device=device) * std + mean
    return t.requires_grad_(requires_grad) if requires_grad else t


def bernoulli(input, p=None, *, generator=None, out=None):
    _check_unused(None, False, out)
    with using(generator):
        probs = input if p is None else _C.full_like(input, p)
        return _C.bernoulli(probs)


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Indices drawn from the rows of `input` (non-negative weights); uniforms come from the
    engine's generator, so rt.manual_seed makes the draws reproducible. A GPU input is read back
    (one copy of the weights, as PyTorch's CUDA multinomial also synchronises) and the indices go
    to its device: the same draws on every device for one seed."""
    import numpy as np
    _check_unused(None, False, out)
    if input.dim() not in (1, 2):
        raise RuntimeError(f"multinomial: prob_dist must be 1 or 2 dim, got {input.dim()}")
    probs = input.detach().double().cpu().numpy().reshape(-1, input.shape[-1]).copy()
    rows, n = probs.shape
    if (probs < 0).any() or not np.isfinite(probs).all():
        raise RuntimeError("multinomial: probability tensor contains either `inf`, `nan` or element < 0")
    if (probs.sum(axis=1) <= 0).any():
        raise RuntimeError("multinomial: invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and num_samples > n:
        raise RuntimeError("multinomial: cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    with using(generator):
        u = _C._rand((rows, num_samples), dtype=_C.float64).numpy()
    out_idx = np.empty((rows, num_samples), dtype=np.int64)
    for r in range(rows):
        p = probs[r]
        for k in range(num_samples):
            c = np.cumsum(p)
            j = int(np.searchsorted(c, u[r, k] * c[-1], side="right"))
            j = min(j, n - 1)
            while p[j] == 0 and j > 0:
                j -= 1
            out_idx[r, k] = j
            if not replacement:
                p = p.copy()
                p[j] = 0
    result = _C.from_numpy(out_idx).to(input.device)
    return result.view(num_samples) if input.dim() == 1 else result
