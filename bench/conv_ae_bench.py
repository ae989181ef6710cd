#!/usr/bin/env python3
"""Convolutional autoencoder forward+backward, rustytorch vs PyTorch in the same process (issue 23).

    PYTHONPATH=python OMP_NUM_THREADS=1 /usr/bin/python3 bench/conv_ae_bench.py [--rounds 9] [--part decoder]

The model is the MNIST autoencoder of PyTorch tutorials (batch 64, 1 x 28 x 28, float32): encoder Conv2d(1, 16,
3, 2, 1), Conv2d(16, 32, 3, 2, 1), Conv2d(32, 64, 7); decoder ConvTranspose2d(64, 32, 7), ConvTranspose2d(32,
16, 3, 2, 1, output_padding=1), ConvTranspose2d(16, 1, 3, 2, 1, output_padding=1), ReLUs and a Sigmoid.
--part decoder times the three ConvTranspose2d layers alone (input [64, 64, 1, 1]). Each round times
`--iters` iterations of each library, alternating which goes first; the ratio (rustytorch / PyTorch, lower is
better) is taken within a round, and its median and spread over rounds are printed.
"""
import argparse
import statistics
import time

import numpy as np


def build(nn, part):
    decoder = [nn.ConvTranspose2d(64, 32, 7), nn.ReLU(), nn.ConvTranspose2d(32, 16, 3, 2, 1, output_padding=1),
               nn.ReLU(), nn.ConvTranspose2d(16, 1, 3, 2, 1, output_padding=1)]
    if part == "decoder":
        return nn.Sequential(*decoder)
    return nn.Sequential(nn.Conv2d(1, 16, 3, 2, 1), nn.ReLU(), nn.Conv2d(16, 32, 3, 2, 1), nn.ReLU(),
                         nn.Conv2d(32, 64, 7), *decoder, nn.Sigmoid())


def timed(model, x, iters):
    def step():
        model.zero_grad()
        (model(x) ** 2).mean().backward()
    step()
    start = time.perf_counter()
    for _ in range(iters):
        step()
    return (time.perf_counter() - start) / iters


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--part", choices=["autoencoder", "decoder"], default="autoencoder")
    args = parser.parse_args()
    import torch
    import rustytorch as rt
    torch.set_num_threads(1)
    rt.set_num_threads(1)
    shape = (64, 64, 1, 1) if args.part == "decoder" else (64, 1, 28, 28)
    data = np.random.default_rng(0).random(shape, dtype=np.float32)
    runs = {"torch": (build(torch.nn, args.part), torch.from_numpy(data.copy())),
            "rustytorch": (build(rt.nn, args.part), rt.from_numpy(data.copy()))}
    ratios, times = [], {"torch": [], "rustytorch": []}
    for r in range(args.rounds):
        order = ["torch", "rustytorch"] if r % 2 == 0 else ["rustytorch", "torch"]
        got = {name: timed(*runs[name], args.iters) for name in order}
        for name, t in got.items():
            times[name].append(t)
        ratios.append(got["rustytorch"] / got["torch"])
    t_ms = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    print(f"{args.part}: torch {t_ms['torch']:.2f} ms, rustytorch {t_ms['rustytorch']:.2f} ms per step; ratio "
          f"median {statistics.median(ratios):.2f} (min {min(ratios):.2f}, max {max(ratios):.2f})")


if __name__ == "__main__":
    main()
