#!/usr/bin/env python3
"""Times the bench/ workloads with PyTorch on this machine and prints JSON (seconds per iteration).

The same workloads as bench/rt_bench.cpp, with the same shapes, thread count and timing method
(warm-up, then the median of several timed repeats). Used by bench/compare.py.
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def timeit(fn, iters, repeats=5, warmup=3):
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        samples.append((time.perf_counter() - t0) / iters)
    return statistics.median(samples)


def bench_add_overhead():
    a, b = torch.ones(1), torch.ones(1)
    return timeit(lambda: a + b, iters=20000)


def bench_matmul():
    torch.manual_seed(0)
    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
    return timeit(lambda: a @ b, iters=5)


def bench_mlp_adam():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(128, 784), torch.randint(0, 10, (128,))

    def step():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        opt.step()

    return timeit(step, iters=20)


def bench_cnn_sgd():
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,))

    def step():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        opt.step()

    return timeit(step, iters=5)


class BasicBlock(nn.Module):
    """ResNet-18's BasicBlock; the same model as rt_bench.cpp's resnet_block_sgd_step."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down_conv = self.down_bn = None
        if stride != 1 or cin != cout:
            self.down_conv = nn.Conv2d(cin, cout, 1, stride=stride, bias=False)
            self.down_bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        h = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(h + (self.down_bn(self.down_conv(x)) if self.down_conv is not None else x))


class ResNetBlocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 32, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(32)
        self.block1, self.block2, self.block3 = BasicBlock(32, 32, 1), BasicBlock(32, 64, 2), BasicBlock(64, 64, 1)
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        h = F.relu(self.bn(self.stem(x)))
        h = self.block3(self.block2(self.block1(h)))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(h, (1, 1)), 1))


def bench_resnet_blocks_sgd():
    torch.manual_seed(0)
    model = ResNetBlocks()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,))

    def step():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        opt.step()

    return timeit(step, iters=3)


WORKLOADS = {
    "add_1elem": bench_add_overhead,
    "matmul_1024": bench_matmul,
    "mlp_adam_step": bench_mlp_adam,
    "cnn_sgd_step": bench_cnn_sgd,
    "resnet_block_sgd_step": bench_resnet_blocks_sgd,
}


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--threads", type=int, default=0, help="intra-op threads (0: PyTorch's default)")
    p.add_argument("--only", nargs="*", default=list(WORKLOADS), help="workloads to run")
    args = p.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    out = {"torch_version": torch.__version__, "threads": torch.get_num_threads(), "seconds": {}}
    for name in args.only:
        out["seconds"][name] = WORKLOADS[name]()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
