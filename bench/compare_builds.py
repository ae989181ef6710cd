#!/usr/bin/env python3
"""Times the same benchmarks from two builds of RustyTorch++ (a change and the commit before it), interleaved
on this machine, and prints each figure with its spread and the ratio head / base.

    git worktree add /tmp/base HEAD~1 && (cd /tmp/base && cmake -S . -B build ... && cmake --build build \\
        --target rt_bench prof_rec_bench prof_trace_bench)
    python3 bench/compare_builds.py --base /tmp/base/build --head build --runs 5

Each round runs every benchmark once from the base build and once from the head build, alternating which goes
first, so both see the same machine state. Figures: rt_bench's workloads (seconds per step), prof_rec_bench's
"steady state" per-event cost, prof_trace_bench's export and import times. ratio < 1: the head is faster.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile


def rt_bench(build, threads):
    out = subprocess.run([os.path.join(build, "bin", "rt_bench"), "--threads", str(threads)], check=True,
                         capture_output=True, text=True).stdout
    return {f"rt_bench {k}": v for k, v in json.loads(out.strip().splitlines()[-1])["seconds"].items()}


def prof_rec_bench(build, threads):
    out = subprocess.run([os.path.join(build, "bin", "prof_rec_bench"), "--threads", str(threads)], check=True,
                         capture_output=True, text=True).stdout
    figures = {}
    for line in out.splitlines():
        m = re.search(r"steady state.*?([\d.]+) ns", line)
        if m:
            figures["prof_rec_bench steady-state ns/event"] = float(m.group(1)) * 1e-9
        m = re.search(r"overhead.*?([-+]?[\d.]+)%", line)
        if m and "prof_rec_bench step overhead %" not in figures:
            figures["prof_rec_bench step overhead %"] = float(m.group(1))
    return figures


def prof_trace_bench(build, _threads):
    with tempfile.TemporaryDirectory() as scratch:
        out = subprocess.run([os.path.join(build, "bin", "prof_trace_bench")], check=True, capture_output=True,
                             text=True, cwd=scratch).stdout
    figures = {}
    for line in out.splitlines():
        m = re.match(r"export (\S+) .*: ([\d.]+) s", line)
        if m:
            figures[f"prof_trace_bench export {m.group(1)}"] = float(m.group(2))
        m = re.match(r"import .*: ([\d.]+) s", line)
        if m:
            figures["prof_trace_bench import"] = min(float(m.group(1)), figures.get("prof_trace_bench import", 1e9))
    return figures


BENCHES = {"rt_bench": rt_bench, "prof_rec_bench": prof_rec_bench, "prof_trace_bench": prof_trace_bench}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="build folder of the commit before the change")
    ap.add_argument("--head", required=True, help="build folder of the change")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", nargs="*", choices=sorted(BENCHES), default=sorted(BENCHES))
    args = ap.parse_args()
    args.base, args.head = os.path.abspath(args.base), os.path.abspath(args.head)
    for build in (args.base, args.head):
        for name in args.only:
            if not os.path.exists(os.path.join(build, "bin", name)):
                sys.exit(f"compare_builds: {build}/bin/{name} is missing: build it first (cmake --build {build} "
                         f"--target {name})")
    samples = {"base": {}, "head": {}}
    for r in range(args.runs):
        for name in args.only:
            order = ("base", "head") if r % 2 == 0 else ("head", "base")
            for side in order:
                build = args.base if side == "base" else args.head
                for key, value in BENCHES[name](build, args.threads).items():
                    samples[side].setdefault(key, []).append(value)
        print(f"round {r + 1}/{args.runs} done", file=sys.stderr)
    print("| figure | base (median, min-max) | head (median, min-max) | head / base |")
    print("|---|---|---|---|")
    for key in sorted(samples["head"]):
        b, h = samples["base"].get(key, []), samples["head"][key]
        if not b:
            continue
        mb, mh = statistics.median(b), statistics.median(h)
        ratio = f"{mh / mb:.3f}" if mb else "—"
        print(f"| {key} | {mb:.4g} ({min(b):.4g}-{max(b):.4g}) | {mh:.4g} ({min(h):.4g}-{max(h):.4g}) | {ratio} |")


if __name__ == "__main__":
    main()
