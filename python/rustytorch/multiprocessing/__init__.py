"""rt.multiprocessing: Python's multiprocessing plus torch.multiprocessing's spawn API.

    import rustytorch.multiprocessing as mp
    mp.spawn(train, args=(world_size,), nprocs=world_size)

Everything of the standard `multiprocessing` module is re-exported (Process, Queue, get_context, ...), as
torch.multiprocessing does. Unlike torch, tensors are not moved to shared memory when sent to another process:
they travel the way the standard module sends any object (pickled copies).
"""
import multiprocessing as _multiprocessing
from multiprocessing import *  # noqa: F401,F403

from .spawn import (ProcessContext, ProcessException, ProcessExitedException, ProcessRaisedException,  # noqa: F401
                    SpawnContext, spawn, start_processes)

__all__ = _multiprocessing.__all__ + ["ProcessContext", "ProcessException", "ProcessExitedException",
                                      "ProcessRaisedException", "SpawnContext", "spawn", "start_processes"]
