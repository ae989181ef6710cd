#!/usr/bin/env python3
"""all_reduce bus bandwidth with 2 ranks: RustyTorch++ (gloo, mpi) against PyTorch's gloo, same run, interleaved.

    PYTHONPATH=build/python /usr/bin/python3 bench/dist/allreduce_bandwidth.py [--rounds 5] [--iters 20]
    PYTHONPATH=build/python /usr/bin/python3 bench/dist/allreduce_bandwidth.py --quick     # tiny sizes, 1 round

Configurations, each a fresh job of 2 ranks with OMP_NUM_THREADS=1:
  rt-gloo     rustytorch.distributed, backend "gloo", ranks started as `rtorch launch` does (env://)
  rt-mpi      rustytorch.distributed, backend "mpi", ranks started by `mpirun -np 2 --oversubscribe --bind-to none`
  torch-gloo  torch.distributed (Debian's PyTorch), backend "gloo", env://
  rt-mpi-ring rt-mpi with OMPI_MCA_coll_libnbc_iallreduce_algorithm=1: Open MPI's non-blocking all-reduce (which
              the mpi backend calls, MPI_Iallreduce in place) forced to its ring algorithm; by default libnbc
              picks a binomial reduce + broadcast for fewer than 4 ranks or an in-place call. Not a target row.
Every round runs each configuration once, in an order rotated by the round, so machine noise hits all alike; the
driver measures memcpy bandwidth (numpy copy of a 64 MiB buffer) in every round too.

In each rank, per size: float32 zeros, a few warm-up all_reduce(SUM), then `iters` timed all_reduce(SUM), each
after a barrier. A job's time for a size is the median over iterations of the slower rank's time. Bus bandwidth
is nccl-tests' definition: busbw = 2 (n - 1) / n * bytes / time (for n = 2 ranks, bytes / time); GB = 1e9 bytes,
1 MB here = 2^20 bytes. Reported: the median over rounds and the spread (min..max over rounds); the ratios are
taken within each round, then the median and spread of those; fraction of memcpy = busbw / memcpy bandwidth
(bytes copied / time), the physical ceiling of moving data between two processes on one machine.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _launch  # noqa: E402

CONFIGS = {  # name: (library, backend, launcher, extra environment)
    "rt-gloo": ("rt", "gloo", "env", {}),
    "rt-mpi": ("rt", "mpi", "mpirun", {}),
    "torch-gloo": ("torch", "gloo", "env", {}),
    "rt-mpi-ring": ("rt", "mpi", "mpirun", {"OMPI_MCA_coll_libnbc_iallreduce_algorithm": "1"}),
}
LABELS = {"rt-gloo": "ours gloo", "rt-mpi": "ours mpi", "torch-gloo": "PyTorch gloo", "rt-mpi-ring": "ours mpi (ring)"}


# ---- one rank ----------------------------------------------------------------------------------------
def worker(cfg):
    if cfg["lib"] == "rt":
        import rustytorch as lib
        import rustytorch.distributed as dist
    else:
        import torch as lib
        import torch.distributed as dist
        lib.set_num_threads(1)
    dist.init_process_group(cfg["backend"])
    world = dist.get_world_size()
    out = {"rank": dist.get_rank(), "world_size": world, "times": {}}
    for mb in cfg["sizes_mb"]:
        n = int(mb * 2**20) // 4
        t = lib.zeros(n, dtype=lib.float32)  # zeros: a sum of zeros stays finite however often it runs
        for _ in range(cfg["warmup"]):
            dist.all_reduce(t)
        times = []
        for _ in range(cfg["iters"]):
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_reduce(t)
            times.append(time.perf_counter() - t0)
        out["times"][repr(mb)] = times
    dist.barrier()
    dist.destroy_process_group()
    _launch.emit(out)


# ---- the driver --------------------------------------------------------------------------------------
def memcpy_bandwidth(mb=64, reps=15):
    import numpy as np
    src = np.ones(int(mb * 2**20) // 4, dtype=np.float32)
    dst = np.empty_like(src)
    np.copyto(dst, src)  # first touch of dst outside the timing
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        times.append(time.perf_counter() - t0)
    return src.nbytes / _launch.med(times) / 1e9


def run_config(name, args):
    lib, backend, launcher, extra_env = CONFIGS[name]
    cfg = {"lib": lib, "backend": backend, "sizes_mb": args.sizes_mb, "iters": args.iters, "warmup": args.warmup}
    ranks = _launch.run_job(os.path.abspath(__file__), ["--worker", json.dumps(cfg)], world_size=2,
                            launcher=launcher, threads=1, timeout=args.timeout, extra_env=extra_env)
    busbw = {}
    for mb in args.sizes_mb:
        per_rank = [r["times"][repr(mb)] for r in ranks]
        slowest = [max(ts) for ts in zip(*per_rank)]
        n = ranks[0]["world_size"]
        nbytes = (int(mb * 2**20) // 4) * 4
        busbw[mb] = 2 * (n - 1) / n * nbytes / _launch.med(slowest) / 1e9
    return busbw


def size_label(mb):
    return f"{mb:g} MB" if mb >= 1 else f"{mb * 1024:g} KB"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20, help="timed all_reduce calls per size and job")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--sizes-mb", type=float, nargs="+", default=[1, 16, 64])
    ap.add_argument("--configs", nargs="+", choices=list(CONFIGS), default=list(CONFIGS))
    ap.add_argument("--timeout", type=float, default=600, help="seconds per job before its ranks are killed")
    ap.add_argument("--quick", action="store_true", help="smoke run: 64 KB and 256 KB, 1 round, 3 iterations")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(json.loads(args.worker))
        return
    if args.quick:
        args.rounds, args.iters, args.warmup, args.sizes_mb = 1, 3, 1, [1 / 16, 1 / 4]
    notes = []
    configs = list(args.configs)
    if not _launch.have_mpirun() and any(c.startswith("rt-mpi") for c in configs):
        configs = [c for c in configs if not c.startswith("rt-mpi")]
        notes.append("mpi configurations left out: no mpirun on PATH (openmpi-bin)")
    tv = _launch.torch_version()
    if "torch-gloo" in configs and tv is None:
        configs.remove("torch-gloo")
        notes.append(f"torch-gloo left out: PyTorch is not installed for {sys.executable} (python3-torch)")
    load_before = _launch.load_average()

    bw = {c: {mb: [] for mb in args.sizes_mb} for c in configs}  # per round
    ratio = {}  # (config, mb) -> per-round busbw / torch's
    memcpy = []
    loads = []  # 1-minute load average at the start of each round
    for r in range(args.rounds):
        loads.append(os.getloadavg()[0])
        memcpy.append(memcpy_bandwidth())
        this_round = {}
        for c in _launch.rounds_order(configs, r):
            this_round[c] = run_config(c, args)
            print(f"round {r + 1}/{args.rounds} {c}: " +
                  ", ".join(f"{size_label(mb)} {v:.2f} GB/s" for mb, v in this_round[c].items()),
                  file=sys.stderr, flush=True)
        for c in configs:
            for mb in args.sizes_mb:
                bw[c][mb].append(this_round[c][mb])
                if "torch-gloo" in configs and c != "torch-gloo":
                    ratio.setdefault((c, mb), []).append(this_round[c][mb] / this_round["torch-gloo"][mb])

    print(f"Machine: {_launch.machine_line()}; 2 ranks x OMP_NUM_THREADS=1; PyTorch {tv or 'not installed'}")
    print(f"Rounds {args.rounds}, {args.iters} timed all_reduce per size and job; load average before "
          f"{load_before}, after {_launch.load_average()}; 1-minute load at each round's start: "
          f"{' '.join(f'{x:.1f}' for x in loads)}")
    print(f"memcpy bandwidth (numpy copy of 64 MB, one thread): {_launch.spread(memcpy)} GB/s")
    for n in notes:
        print(f"Note: {n}")
    print()
    mc = _launch.med(memcpy)
    print("| size | backend | busbw GB/s, median (min..max) | / PyTorch gloo, same round | / memcpy |")
    print("|---|---|---|---|---|")
    for mb in args.sizes_mb:
        for c in configs:
            r = _launch.spread(ratio[(c, mb)]) if (c, mb) in ratio else "—"
            print(f"| {size_label(mb)} | {LABELS[c]} | {_launch.spread(bw[c][mb])} | {r} | "
                  f"{_launch.med(bw[c][mb]) / mc:.0%} |")
    if "torch-gloo" in configs:
        print()
        for mb in args.sizes_mb:
            parts = []
            if "rt-mpi" in configs:
                m = _launch.med(ratio[("rt-mpi", mb)])
                parts.append(f"mpi >= 2x PyTorch gloo: {'met' if m >= 2 else 'not met'} ({m:.2f}x)")
            if "rt-gloo" in configs:
                g = _launch.med(ratio[("rt-gloo", mb)])
                parts.append(f"our gloo within 10% of PyTorch's: {'met' if g >= 0.9 else 'not met'} ({g:.2f}x)")
            print(f"targets at {size_label(mb)}: " + "; ".join(parts))


if __name__ == "__main__":
    main()
