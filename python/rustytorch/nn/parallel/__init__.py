"""rt.nn.parallel: DistributedDataParallel (data parallelism across processes, torch's DDP)."""
from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
