"""DDP communication hooks (torch.distributed.algorithms.ddp_comm_hooks): register one with
model.register_comm_hook(state, hook); default_hooks has allreduce, fp16 and bf16 compression."""
from . import default_hooks  # noqa: F401
