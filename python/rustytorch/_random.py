"""rt.Generator and the `generator=` argument of the random factories.

The engine draws from one default Philox generator (seed + counter offset). A Generator keeps
its own (seed, offset) and, while one of its draws runs, is swapped in as the default state,
so results depend only on its seed and the draws made from it (as with torch.Generator)."""
import contextlib

from . import _C

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "default_generator"]


class Generator:
    """A random-number stream: `g = rt.Generator().manual_seed(0); rt.randperm(10, generator=g)`."""

    def __init__(self, device="cpu"):
        if _C.device(device).type != "cpu":
            raise RuntimeError(f"Generator: device {device} is not available in this build (CPU only)")
        self.device = _C.device(device)
        self._seed = 67280421310721
        self._offset = 0

    def manual_seed(self, seed):
        self._seed = int(seed) & 0xFFFFFFFFFFFFFFFF
        self._offset = 0
        return self

    def seed(self):
        import random
        return self.manual_seed(random.getrandbits(63))._seed

    def initial_seed(self):
        return self._seed

    def get_state(self):
        return _C.tensor([self._seed, self._offset], dtype=_C.int64)

    def set_state(self, state):
        s, o = (int(v) for v in state.tolist())
        self._seed, self._offset = s, o
        return self


class _DefaultGenerator(Generator):
    """The engine's default generator (what rt.manual_seed seeds)."""

    def manual_seed(self, seed):
        _C.manual_seed(int(seed) & 0xFFFFFFFFFFFFFFFF)
        return self

    def initial_seed(self):
        return _C.initial_seed()

    def get_state(self):
        s, o = _C._get_rng_state()
        return _C.tensor([s, o], dtype=_C.int64)

    def set_state(self, state):
        s, o = (int(v) for v in state.tolist())
        _C._set_rng_state(s, o)
        return self


default_generator = _DefaultGenerator()


@contextlib.contextmanager
def using(generator):
    """Runs the body's draws on `generator` (None: the default generator)."""
    if generator is None or isinstance(generator, _DefaultGenerator):
        yield
        return
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a rustytorch.Generator, not {type(generator).__name__}")
    saved = _C._get_rng_state()
    _C._set_rng_state(generator._seed, generator._offset)
    try:
        yield
    finally:
        generator._seed, generator._offset = _C._get_rng_state()
        _C._set_rng_state(*saved)


def manual_seed(seed):
    """Seeds the default generator; returns it (as torch.manual_seed does)."""
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return _C.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state):
    default_generator.set_state(state)
