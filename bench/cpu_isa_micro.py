#!/usr/bin/env python3
"""Per-level CPU kernel micro-benchmark: float32 [1024, 1024] pointwise ops at each instruction-set level
(RT_CPU_CAPABILITY, one child process per level) against PyTorch, interleaved (ours, torch, ours, ...).

    PYTHONPATH=build/python /usr/bin/python3 bench/cpu_isa_micro.py --threads 1 --rounds 5

Prints one row per op and level: our median time, PyTorch's, and the median ratio with its spread
(min-max of the per-round ratios; < 1: faster than PyTorch).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

OPS = {
    "exp": lambda m, x, y: m.exp(x),
    "tanh": lambda m, x, y: m.tanh(x),
    "sigmoid": lambda m, x, y: m.sigmoid(x),
    "gelu": lambda m, x, y: m.nn.functional.gelu(x),
    "gelu_tanh": lambda m, x, y: m.nn.functional.gelu(x, approximate="tanh"),
    "silu": lambda m, x, y: m.nn.functional.silu(x),
    "add_alpha": lambda m, x, y: m.add(x, y, alpha=0.5),
    "mul": lambda m, x, y: x * y,
}


def best_of(fn, iters=20):
    fn()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    return (time.perf_counter() - t0) / iters


def child(args):
    """Times every op once per round for one library; prints JSON {op: [seconds per round]}."""
    if args.lib == "torch":
        import torch as m
        m.set_num_threads(args.threads)
        x, y = m.randn(1024, 1024), m.randn(1024, 1024)
    else:
        import rustytorch as m
        m.set_num_threads(args.threads)
        x, y = m.randn(1024, 1024), m.randn(1024, 1024)
    out = {"level": getattr(getattr(m, "backends").cpu, "get_cpu_capability")() if args.lib != "torch" else "torch"}
    out["times"] = {op: best_of(lambda: fn(m, x, y)) for op, fn in OPS.items()}
    print(json.dumps(out))


def run_child(lib, level, threads):
    env = dict(os.environ)
    if level:
        env["RT_CPU_CAPABILITY"] = level
    cmd = [sys.executable, __file__, "--child", "--lib", lib, "--threads", str(threads)]
    return json.loads(subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--levels", nargs="+", default=["default", "avx2", "avx512"])
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--lib", default="rt", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return child(args)
    ours = {lvl: [] for lvl in args.levels}
    torch_runs = []
    for _ in range(args.rounds):
        for lvl in args.levels:
            ours[lvl].append(run_child("rt", lvl, args.threads))
            torch_runs.append(run_child("torch", None, args.threads))
    print(f"threads {args.threads}, {args.rounds} rounds, load average {os.getloadavg()[0]:.2f}")
    print("| op | level | RustyTorch++ | PyTorch | ratio (spread) |")
    print("|---|---|---|---|---|")
    for op in OPS:
        for lvl in args.levels:
            runs = ours[lvl]
            mine = [r["times"][op] for r in runs]
            theirs = [torch_runs[i * len(args.levels) + args.levels.index(lvl)]["times"][op] for i in range(len(runs))]
            ratios = [a / b for a, b in zip(mine, theirs)]
            print(f"| {op} | {runs[0]['level']} | {statistics.median(mine) * 1e3:.3f} ms | "
                  f"{statistics.median(theirs) * 1e3:.3f} ms | {statistics.median(ratios):.2f} "
                  f"({min(ratios):.2f}-{max(ratios):.2f}) |")


if __name__ == "__main__":
    main()
