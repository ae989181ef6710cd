#!/usr/bin/env python3
"""The fused-bias-gelu plugin op against the unfused gelu(x + b), ours and PyTorch's, forward+backward.

    PYTHONPATH=build/python OMP_NUM_THREADS=1 /usr/bin/python3 bench/plugin_fused_bias_gelu.py [--rounds 15]
    ... bench/plugin_fused_bias_gelu.py --threads 2        # OpenMP over rows in the plugin and both engines
    ... bench/plugin_fused_bias_gelu.py --quick            # 2 short rounds, to check that it runs

Three contenders per size, float32, x [rows, n] and b [n] both requiring grad:
  plugin   rt.ops.rtx.fused_bias_gelu(x, b)            one pass forward, one pass backward (+ the bias sum)
  ours     rt.nn.functional.gelu(x + b)                RustyTorch++'s two ops
  torch    torch.nn.functional.gelu(x + b)             PyTorch's two ops
One iteration: drop the gradients, y = op(x, b), y.backward(g) with a fixed g. Each round times `--iters`
iterations of each contender in an order that rotates between rounds, so machine noise hits all alike; the
ratios are taken within a round, then their median and spread (min..max over rounds) are printed, with markdown
rows for bench/RESULTS.md.
"""
import argparse
import datetime
import os
import statistics
import time
from pathlib import Path

SIZES = [(256, 256), (1024, 1024), (4096, 1024)]


def contenders(rt, torch, rows, n):
    rt.manual_seed(0)
    x = rt.randn(rows, n, requires_grad=True)
    b = rt.randn(n, requires_grad=True)
    g = rt.randn(rows, n)
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    tb = torch.tensor(b.detach().numpy(), requires_grad=True)
    tg = torch.tensor(g.numpy())
    fused = rt.ops.rtx.fused_bias_gelu
    gelu = rt.nn.functional.gelu
    tgelu = torch.nn.functional.gelu

    def plugin():
        x.grad = None
        b.grad = None
        fused(x, b).backward(g)

    def ours():
        x.grad = None
        b.grad = None
        gelu(x + b).backward(g)

    def theirs():
        tx.grad = None
        tb.grad = None
        tgelu(tx + tb).backward(tg)

    return {"plugin": plugin, "ours": ours, "torch": theirs}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--plugin", default=None, help="plugin folder (default: build/plugins/fused-bias-gelu)")
    ap.add_argument("--quick", action="store_true", help="2 rounds of 1 iteration (a smoke run, not a figure)")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.iters = 2, 1

    import rustytorch as rt
    import torch
    build = Path(os.environ.get("RT_BUILD_DIR", Path(__file__).resolve().parents[1] / "build"))
    rt.ops.load_library(args.plugin or build / "plugins" / "fused-bias-gelu")
    rt.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)

    def fmt(ts):
        return f"{statistics.median(ts) * 1e3:.3f} ms ({min(ts) * 1e3:.3f}..{max(ts) * 1e3:.3f})"

    def ratio(a, b):
        rs = [x / y for x, y in zip(a, b)]
        return f"{statistics.median(rs):.2f} ({min(rs):.2f}..{max(rs):.2f})"

    rows_md = []
    for rows, n in SIZES:
        runs = contenders(rt, torch, rows, n)
        for run in runs.values():  # warm-up
            run()
        times = {name: [] for name in runs}
        names = list(runs)
        for r in range(args.rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for name in order:
                start = time.perf_counter()
                for _ in range(args.iters):
                    runs[name]()
                times[name].append((time.perf_counter() - start) / args.iters)
        print(f"[{rows}, {n}] float32, {args.threads} thread(s), {args.rounds} rounds x {args.iters} iterations")
        for name, ts in times.items():
            print(f"  {name:7s} {fmt(ts)}")
        print(f"  plugin/ours {ratio(times['plugin'], times['ours'])}   plugin/torch "
              f"{ratio(times['plugin'], times['torch'])}   ours/torch {ratio(times['ours'], times['torch'])}")
        rows_md.append(f"| [{rows}, {n}] | {args.threads} | {fmt(times['plugin'])} | {fmt(times['ours'])} | "
                       f"{fmt(times['torch'])} | {ratio(times['plugin'], times['ours'])} | "
                       f"{ratio(times['plugin'], times['torch'])} | {datetime.date.today().isoformat()} |")
    print()
    print("| x | threads | plugin median (min..max) | ours unfused | torch unfused | plugin/ours | plugin/torch | date |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows_md))


if __name__ == "__main__":
    main()
