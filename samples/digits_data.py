"""The 8x8 digits set (samples/data/digits.csv.gz) as rustytorch datasets, shared by the digits samples.

    from digits_data import load_digits
    train, test = load_digits()          # TensorDatasets of (image [64] float32 in [0, 1], label int64)
    train, test = load_digits(image_shape=(1, 8, 8))   # images shaped for a conv net
    mean_loss, seconds = train_epoch(model, loader, loss_fn, optimizer)
"""
import gzip
import os
import time

import numpy as np
import rustytorch as rt
from rustytorch.utils.data import TensorDataset

DATA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "digits.csv.gz")


def load_digits(image_shape=(64,), test_fraction=0.2, seed=0):
    """Split the 1797 digits into shuffled train/test TensorDatasets (same split for a given seed)."""
    with gzip.open(DATA_FILE, "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.float32)
    if table.ndim != 2 or table.shape[1] != 65:
        raise ValueError(f"{DATA_FILE}: expected 65 columns (64 pixels and a label), got shape {table.shape}")
    images = rt.from_numpy(np.ascontiguousarray(table[:, :64] / 16.0)).reshape(-1, *image_shape)
    labels = rt.from_numpy(table[:, 64].astype(np.int64))
    order = np.random.default_rng(seed).permutation(len(table))
    n_test = int(len(table) * test_fraction)
    test_idx, train_idx = rt.from_numpy(order[:n_test]), rt.from_numpy(order[n_test:])
    return (TensorDataset(images[train_idx], labels[train_idx]),
            TensorDataset(images[test_idx], labels[test_idx]))


def accuracy(model, loader):
    """Fraction of correctly classified samples, computed without autograd."""
    model.eval()
    correct = total = 0
    with rt.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(dim=1) == y).sum().item()
            total += y.shape[0]
    model.train()
    return correct / total


def train_epoch(model, loader, loss_fn, optimizer):
    """One pass over `loader`; returns the mean training loss and the wall time in seconds."""
    start, total_loss, batches = time.perf_counter(), 0.0, 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
        rt.profiler.counter("loss", loss)  # a Scalars chart when profiled; a no-op otherwise
        batches += 1
    return total_loss / batches, time.perf_counter() - start
