"""rt.utils.data: datasets, samplers and the DataLoader (torch.utils.data's names and semantics).

    ds = rt.utils.data.TensorDataset(x, y)
    for xb, yb in rt.utils.data.DataLoader(ds, batch_size=32, shuffle=True, num_workers=2):
        ...
"""
from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .distributed import DistributedSampler
from ._worker_info import WorkerInfo, get_worker_info
from .dataset import ChainDataset, ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "DistributedSampler",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "Subset", "SubsetRandomSampler",
           "TensorDataset", "WeightedRandomSampler", "WorkerInfo", "default_collate", "default_convert",
           "get_worker_info", "random_split"]
