#!/usr/bin/env python3
"""Runs rt_bench and torch_bench.py on this machine, same thread count, and prints the ratio table.

    python3 bench/compare.py --threads 2            # markdown table on stdout
    python3 bench/compare.py --rt-bench build/bin/rt_bench --only mlp_adam_step
    python3 bench/compare.py --quick                 # only the short micro-benchmarks
    python3 bench/compare.py --threads 2 --rounds 5 --only cnn_sgd_step   # ours, torch, ours, ... 5 times

With --rounds N the two run alternately N times; each round gives a ratio, and the table shows the
median times, the median ratio and the spread (lowest-highest ratio of the rounds).

Without PyTorch (python3-torch) it says so and prints the RustyTorch++ times alone.
ratio = RustyTorch++ time / PyTorch time (lower is better; < 1 means faster than PyTorch).
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = {  # from the foundation issue: a ratio target, or an absolute per-op target in microseconds
    "add_1elem": ("per-op overhead <= 0.3 us", None, 0.3e-6),
    "matmul_1024": ("(no target)", None, None),
    "mlp_adam_step": ("ratio <= 0.8", 0.8, None),
    "cnn_sgd_step": ("ratio <= 1.0", 1.0, None),
    "resnet_block_sgd_step": ("ratio <= 1.0", 1.0, None),
}
QUICK = ["add_1elem", "matmul_1024"]
NOTES = {
    "add_1elem": "rt: C++ API; PyTorch: Python API (interpreter overhead included)",
}


def run_json(cmd, env):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def fmt_time(s):
    return f"{s * 1e6:.2f} us" if s < 1e-3 else f"{s * 1e3:.2f} ms"


def torch_installed(env):
    probe = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True, env=env)
    return probe.returncode == 0


def print_rt_only(rt, args):
    print(f"PyTorch is not installed for {sys.executable} (install python3-torch for the comparison); "
          "RustyTorch++ times only.")
    print(f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; threads {args.threads}")
    print()
    print("| workload | RustyTorch++ |")
    print("|---|---|")
    for name in args.only:
        note = f" ({NOTES[name]})" if name in NOTES else ""
        print(f"| {name}{note} | {fmt_time(rt['seconds'][name])} |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--rt-bench", default=os.path.join(HERE, "..", "build", "bin", "rt_bench"))
    p.add_argument("--only", nargs="+", choices=list(TARGETS), metavar="WORKLOAD",
                   help=f"workloads to run, from: {' '.join(TARGETS)} (default: all)")
    p.add_argument("--rounds", type=int, default=1, help="run ours and PyTorch alternately this many times")
    p.add_argument("--quick", action="store_true", help=f"only the short micro-benchmarks ({' '.join(QUICK)})")
    args = p.parse_args()
    if args.only is None:
        args.only = QUICK if args.quick else list(TARGETS)
    if not os.path.exists(args.rt_bench):
        sys.exit(f"compare.py: {args.rt_bench} not found; build first (scripts/build.sh)")
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    rt_cmd = [args.rt_bench, "--threads", str(args.threads), "--only", *args.only]
    if not torch_installed(env):
        print_rt_only(run_json(rt_cmd, env), args)
        return
    torch_cmd = [sys.executable, os.path.join(HERE, "torch_bench.py"), "--threads", str(args.threads),
                 "--only", *args.only]
    rounds = []  # (rt, torch) JSON per round, run alternately
    try:
        for _ in range(args.rounds):
            rounds.append((run_json(rt_cmd, env), run_json(torch_cmd, env)))
    except (subprocess.CalledProcessError, FileNotFoundError) as e:
        sys.exit(f"compare.py: PyTorch benchmark failed ({e}); install python3-torch")
    print(f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; threads {args.threads}; "
          f"PyTorch {rounds[0][1]['torch_version']}; {args.rounds} round(s), interleaved; "
          f"load average {os.getloadavg()[0]:.2f}")
    print()
    print("| workload | RustyTorch++ | PyTorch | ratio | spread | target | met |")
    print("|---|---|---|---|---|---|---|")
    for name in args.only:
        rs = [r["seconds"][name] for r, _ in rounds]
        ts = [t["seconds"][name] for _, t in rounds]
        ratios = [r / t for r, t in zip(rs, ts)]
        r, t, ratio = statistics.median(rs), statistics.median(ts), statistics.median(ratios)
        label, ratio_target, abs_target = TARGETS[name]
        met = "—"
        if ratio_target is not None:
            met = "yes" if ratio <= ratio_target else "no"
        elif abs_target is not None:
            met = "yes" if r <= abs_target else "no"
        note = f" ({NOTES[name]})" if name in NOTES else ""
        print(f"| {name}{note} | {fmt_time(r)} | {fmt_time(t)} | {ratio:.2f} | {min(ratios):.2f}-{max(ratios):.2f} | "
              f"{label} | {met} |")


if __name__ == "__main__":
    main()
