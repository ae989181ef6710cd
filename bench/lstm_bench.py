#!/usr/bin/env python3
"""nn.LSTM forward+backward, rustytorch vs PyTorch in the same process (issue 23 target: ratio <= 1.2).

    PYTHONPATH=build/python OMP_NUM_THREADS=1 /usr/bin/python3 bench/lstm_bench.py [--rounds 15] [--threads 1]
    ... bench/lstm_bench.py --mode GRU --layers 1      # other shapes and modules
    ... bench/lstm_bench.py --quick                    # 2 short rounds, to check that it runs

The default shape is PyTorch's word language model: sequence 35, batch 20, 2 layers of 200 (input 200).
One iteration: drop the gradients, run the module on x (requiring grad, as an embedding's output does) with
the initial state (h_0, c_0) carried by the model, and backward from out.sum() + h_n.sum() + c_n.sum().
Each round times `--iters` iterations of each library, in an order that alternates between rounds, so
machine noise hits both alike; the ratio (rustytorch time / PyTorch time, lower is better) is taken within
a round, then its median and spread (min..max over rounds) are printed, with a markdown row for
bench/RESULTS.md.
"""
import argparse
import datetime
import statistics
import time


def build(lib, args):
    lib.manual_seed(0)
    cls = getattr(lib.nn, args.mode)
    model = cls(args.hidden, args.hidden, args.layers)
    x = lib.randn(args.seq, args.batch, args.hidden).requires_grad_()
    h0 = lib.zeros(args.layers, args.batch, args.hidden)
    hx = (h0, lib.zeros(args.layers, args.batch, args.hidden)) if args.mode == "LSTM" else h0
    params = list(model.parameters())

    def iteration():
        for p in params:
            p.grad = None
        x.grad = None
        out, h_n = model(x, hx)
        loss = out.sum()
        for h in (h_n if isinstance(h_n, tuple) else (h_n,)):
            loss = loss + h.sum()
        loss.backward()

    return iteration


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=["LSTM", "GRU", "RNN"], default="LSTM")
    ap.add_argument("--seq", type=int, default=35)
    ap.add_argument("--batch", type=int, default=20)
    ap.add_argument("--hidden", type=int, default=200)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="2 rounds of 1 iteration (a smoke run, not a figure)")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.iters = 2, 1

    import rustytorch as rt
    import torch
    rt.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    runs = {"rustytorch": build(rt, args), "torch": build(torch, args)}
    for run in runs.values():  # warm-up
        run()
    times = {name: [] for name in runs}
    for r in range(args.rounds):
        order = list(runs) if r % 2 == 0 else list(reversed(runs))
        for name in order:
            start = time.perf_counter()
            for _ in range(args.iters):
                runs[name]()
            times[name].append((time.perf_counter() - start) / args.iters)
    ratios = [a / b for a, b in zip(times["rustytorch"], times["torch"])]

    def fmt(ts):
        return f"{statistics.median(ts) * 1e3:.2f} ms ({min(ts) * 1e3:.2f}..{max(ts) * 1e3:.2f})"

    shape = f"seq {args.seq}, batch {args.batch}, {args.layers} x {args.hidden}"
    print(f"nn.{args.mode} forward+backward, {shape}, {args.threads} thread(s), {args.rounds} rounds x "
          f"{args.iters} iterations")
    for name, ts in times.items():
        print(f"{name:12s} {fmt(ts)}")
    ratio = f"{statistics.median(ratios):.3f} ({min(ratios):.3f}..{max(ratios):.3f})"
    print(f"ratio rustytorch/torch: {ratio}")
    print(f"| nn.{args.mode} fwd+bwd | {shape} | {args.threads} | {fmt(times['rustytorch'])} | "
          f"{fmt(times['torch'])} | {ratio} | {datetime.date.today().isoformat()} |")


if __name__ == "__main__":
    main()
