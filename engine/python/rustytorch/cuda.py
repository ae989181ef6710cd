"""rt.cuda: queries about CUDA. This build runs on the CPU only, so nothing is available."""

__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all"]


def is_available():
    return False


def device_count():
    return 0


def manual_seed(seed):
    """Like torch.cuda.manual_seed without a GPU: nothing to seed, so nothing happens."""


def manual_seed_all(seed):
    """Like torch.cuda.manual_seed_all without a GPU: nothing to seed, so nothing happens."""


def synchronize(device=None):
    raise RuntimeError("rt.cuda.synchronize(): CUDA is not available in this build of rustytorch")
