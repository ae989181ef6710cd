#!/usr/bin/env python3
"""A data-parallel SGD step of an MLP: 2 ranks x 1 thread (DDP) against one process with 2 threads, ours and
PyTorch's, interleaved; and the share of our DDP's all-reduce time that the backward pass does not hide.

    PYTHONPATH=build/python /usr/bin/python3 bench/dist/ddp_step.py [--rounds 5]
    PYTHONPATH=build/python /usr/bin/python3 bench/dist/ddp_step.py --quick      # tiny model, 1 round

The model: Linear(784, 512) - ReLU - Linear(512, 512) - ReLU - Linear(512, 10), cross-entropy, SGD (lr 0.01),
batch 128 in total (one process: 128; DDP: 64 per rank). One step is zero_grad, forward, loss, backward, step.

Step configurations (each a fresh job; every round runs each once, in an order rotated by the round):
  rt-1proc / torch-1proc        one process, OMP_NUM_THREADS=2 (torch.set_num_threads(2)), batch 128
  rt-1proc-1t / torch-1proc-1t  one process, 1 thread, batch 128: half its step time is what 2 threads would
                                cost if they scaled perfectly (a baseline that other load on the machine hurts
                                less than 2 OpenMP threads, which spin-wait for each other)
  rt-ddp-gloo / torch-ddp-gloo  DistributedDataParallel (default buckets), 2 ranks x 1 thread, backend gloo
  rt-ddp-mpi                    ours over the mpi backend, 2 ranks started by mpirun
A job times `blocks` blocks of `steps` steps after a warm-up (a barrier before each block on DDP jobs); a block's
time per step is the slower rank's; the job's figure is the median block. Per-sample cost = step time / 128, so
the per-sample ratio DDP / one process is the ratio of step times (the issue's target: <= 1.10).

Overlap configurations (rt-overlap-gloo, rt-overlap-mpi, torch-overlap-gloo; 2 ranks x 1 thread, batch 64 each,
bucket_cap_mb 0.5 so our DDP makes 4 buckets) time, in each iteration, after a barrier each:
  local    loss.backward() of a forward taken under no_sync() (the backward alone, hooks return at once)
  ddp      loss.backward() with gradient sync (returns once every bucket is all-reduced and written back)
  noop     the same with a communication hook that only divides the bucket and returns it (DDP's bookkeeping:
           copies into buckets, hooks, write-back; no communication)
  alone    the same buckets' all-reduces on their own: div_, all_reduce(async_op=True) per bucket, then wait all
exposed = (ddp - local) / alone: the share of the all-reduce time that adds to the backward (0: fully hidden;
above 1: DDP costs more than its communication alone). comm exposed = (ddp - noop) / alone leaves the bookkeeping
out. Medians over iterations of the slower rank's time; the issue's target: exposed < 50% with >= 4 buckets.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _launch  # noqa: E402

STEP_CONFIGS = {  # name: (library, ddp backend or None, launcher, threads per process, processes)
    "rt-1proc": ("rt", None, "single", 2, 1),
    "torch-1proc": ("torch", None, "single", 2, 1),
    "rt-1proc-1t": ("rt", None, "single", 1, 1),
    "torch-1proc-1t": ("torch", None, "single", 1, 1),
    "rt-ddp-gloo": ("rt", "gloo", "env", 1, 2),
    "rt-ddp-mpi": ("rt", "mpi", "mpirun", 1, 2),
    "torch-ddp-gloo": ("torch", "gloo", "env", 1, 2),
}
OVERLAP_CONFIGS = {
    "rt-overlap-gloo": ("rt", "gloo", "env"),
    "rt-overlap-mpi": ("rt", "mpi", "mpirun"),
    "torch-overlap-gloo": ("torch", "gloo", "env"),
}
BASELINE = {"rt-ddp-gloo": "rt-1proc", "rt-ddp-mpi": "rt-1proc", "torch-ddp-gloo": "torch-1proc"}
ONE_THREAD = {"rt-ddp-gloo": "rt-1proc-1t", "rt-ddp-mpi": "rt-1proc-1t", "torch-ddp-gloo": "torch-1proc-1t",
              "rt-1proc": "rt-1proc-1t", "torch-1proc": "torch-1proc-1t"}


# ---- one rank ----------------------------------------------------------------------------------------
def _libs(name, threads):
    if name == "rt":
        import rustytorch as lib
        import rustytorch.distributed as dist
        import rustytorch.nn as nn
        import rustytorch.nn.functional as F
        import rustytorch.optim as optim
        from rustytorch.futures import Future
        from rustytorch.nn.parallel import DistributedDataParallel as DDP
    else:
        import torch as lib
        import torch.distributed as dist
        import torch.nn as nn
        import torch.nn.functional as F
        import torch.optim as optim
        from torch.futures import Future
        from torch.nn.parallel import DistributedDataParallel as DDP
        lib.set_num_threads(threads)
    return lib, dist, nn, F, optim, Future, DDP


def _mlp(nn, widths):
    layers = []
    for i in range(len(widths) - 1):
        layers.append(nn.Linear(widths[i], widths[i + 1]))
        if i < len(widths) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def _data(lib, rank, batch, widths):
    lib.manual_seed(1000 + rank)
    return lib.randn(batch, widths[0]), lib.randint(0, widths[-1], (batch,))


def step_worker(cfg):
    lib, dist, nn, F, optim, _, DDP = _libs(cfg["lib"], cfg["threads"])
    rank, world = 0, 1
    if cfg["backend"]:
        dist.init_process_group(cfg["backend"])
        rank, world = dist.get_rank(), dist.get_world_size()
    lib.manual_seed(0)
    model = _mlp(nn, cfg["widths"])
    if cfg["backend"]:
        model = DDP(model)
    opt = optim.SGD(model.parameters(), lr=0.01)
    x, y = _data(lib, rank, cfg["batch"] // world, cfg["widths"])

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    for _ in range(cfg["warmup"]):
        step()
    blocks = []
    for _ in range(cfg["blocks"]):
        if cfg["backend"]:
            dist.barrier()
        t0 = time.perf_counter()
        for _ in range(cfg["steps"]):
            step()
        blocks.append((time.perf_counter() - t0) / cfg["steps"])
    if cfg["backend"]:
        dist.barrier()
        dist.destroy_process_group()
    _launch.emit({"rank": rank, "world_size": world, "blocks": blocks})


def overlap_worker(cfg):
    lib, dist, nn, F, _, Future, DDP = _libs(cfg["lib"], 1)
    dist.init_process_group(cfg["backend"])
    rank, world = dist.get_rank(), dist.get_world_size()
    if cfg["lib"] == "torch":  # torch's first bucket is 1 MiB whatever the cap; make it the cap, as ours
        dist._DEFAULT_FIRST_BUCKET_BYTES = int(cfg["bucket_cap_mb"] * 2**20)
    lib.manual_seed(0)
    synced = DDP(_mlp(nn, cfg["widths"]), bucket_cap_mb=cfg["bucket_cap_mb"])
    lib.manual_seed(0)
    noop = DDP(_mlp(nn, cfg["widths"]), bucket_cap_mb=cfg["bucket_cap_mb"])

    def divide_only(state, bucket):
        buf = bucket.buffer()
        buf.div_(world)
        fut = Future()
        fut.set_result(buf)
        return fut

    noop.register_comm_hook(None, divide_only)
    x, y = _data(lib, rank, cfg["batch"] // world, cfg["widths"])

    def timed_backward(model, sync):
        model.zero_grad(set_to_none=True)
        if sync:
            loss = F.cross_entropy(model(x), y)
        else:
            with model.no_sync():
                loss = F.cross_entropy(model(x), y)
        dist.barrier()
        t0 = time.perf_counter()
        if sync:
            loss.backward()
        else:
            with model.no_sync():
                loss.backward()
        return time.perf_counter() - t0

    for _ in range(cfg["warmup"]):  # our buckets are rebuilt after the first iteration, torch's too
        timed_backward(synced, True)
        timed_backward(noop, True)
    if cfg["lib"] == "rt":
        sizes = dict((n, p.numel()) for n, p in synced.module.named_parameters())
        bucket_numels = [sum(sizes[n] for n in names) for names in synced.bucket_sizes()]
    else:
        bucket_numels = [int(b) // 4 for b in str(synced._get_ddp_logging_data()["bucket_sizes"]).split(",")]
    buffers = [lib.zeros(n) for n in bucket_numels]

    def timed_allreduce_alone():
        dist.barrier()
        t0 = time.perf_counter()
        works = []
        for b in buffers:
            b.div_(world)
            works.append(dist.all_reduce(b, async_op=True))
        for w in works:
            w.wait()
        return time.perf_counter() - t0

    times = {"local": [], "ddp": [], "noop": [], "alone": []}
    for _ in range(cfg["iters"]):
        times["local"].append(timed_backward(synced, False))
        times["ddp"].append(timed_backward(synced, True))
        times["noop"].append(timed_backward(noop, True))
        times["alone"].append(timed_allreduce_alone())
    dist.barrier()
    dist.destroy_process_group()
    _launch.emit({"rank": rank, "buckets": [n * 4 for n in bucket_numels], "times": times})


# ---- the driver --------------------------------------------------------------------------------------
def run_step_config(name, args):
    lib, backend, launcher, threads, procs = STEP_CONFIGS[name]
    cfg = {"mode": "step", "lib": lib, "backend": backend, "threads": threads, "widths": args.widths,
           "batch": args.batch, "warmup": args.warmup, "blocks": args.blocks, "steps": args.steps}
    ranks = _launch.run_job(os.path.abspath(__file__), ["--worker", json.dumps(cfg)], world_size=procs,
                            launcher=launcher, threads=threads, timeout=args.timeout)
    return _launch.med([max(b) for b in zip(*(r["blocks"] for r in ranks))])


def run_overlap_config(name, args):
    lib, backend, launcher = OVERLAP_CONFIGS[name]
    cfg = {"mode": "overlap", "lib": lib, "backend": backend, "widths": args.widths, "batch": args.batch,
           "warmup": args.warmup, "iters": args.iters, "bucket_cap_mb": args.bucket_cap_mb}
    ranks = _launch.run_job(os.path.abspath(__file__), ["--worker", json.dumps(cfg)], world_size=2,
                            launcher=launcher, threads=1, timeout=args.timeout)
    t = {k: _launch.med([max(v) for v in zip(*(r["times"][k] for r in ranks))]) for k in ranks[0]["times"]}
    t["exposed"] = (t["ddp"] - t["local"]) / t["alone"]
    t["comm_exposed"] = (t["ddp"] - t["noop"]) / t["alone"]
    t["buckets"] = ranks[0]["buckets"]
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--widths", type=int, nargs="+", default=[784, 512, 512, 10])
    ap.add_argument("--batch", type=int, default=128, help="samples per step in total")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--blocks", type=int, default=7)
    ap.add_argument("--steps", type=int, default=10, help="steps per timed block")
    ap.add_argument("--iters", type=int, default=30, help="iterations of the overlap measurement")
    ap.add_argument("--bucket-cap-mb", type=float, default=0.5)
    ap.add_argument("--configs", nargs="+", choices=list(STEP_CONFIGS) + list(OVERLAP_CONFIGS),
                    default=list(STEP_CONFIGS) + list(OVERLAP_CONFIGS))
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--quick", action="store_true", help="smoke run: 32-16-4 MLP, batch 8, 1 round, few steps")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        cfg = json.loads(args.worker)
        (step_worker if cfg["mode"] == "step" else overlap_worker)(cfg)
        return
    if args.quick:
        args.rounds, args.widths, args.batch = 1, [32, 16, 16, 4], 8
        args.warmup, args.blocks, args.steps, args.iters, args.bucket_cap_mb = 2, 2, 2, 3, 0.001
    notes = []
    configs = list(args.configs)
    tv = _launch.torch_version()
    if tv is None:
        configs = [c for c in configs if not c.startswith("torch")]
        notes.append(f"PyTorch configurations left out: not installed for {sys.executable} (python3-torch)")
    if not _launch.have_mpirun():
        configs = [c for c in configs if not c.endswith("-mpi")]
        notes.append("mpi configurations left out: no mpirun on PATH (openmpi-bin)")
    load_before = _launch.load_average()

    step = {c: [] for c in configs if c in STEP_CONFIGS}
    ratio = {c: [] for c in step if c in BASELINE and BASELINE[c] in step}
    ratio1 = {c: [] for c in step if c in ONE_THREAD and ONE_THREAD[c] in step}
    overlap = {c: [] for c in configs if c in OVERLAP_CONFIGS}
    loads = []  # 1-minute load average at the start of each round
    for r in range(args.rounds):
        loads.append(os.getloadavg()[0])
        this = {}
        for c in _launch.rounds_order(configs, r):
            if c in STEP_CONFIGS:
                this[c] = run_step_config(c, args)
                step[c].append(this[c])
                print(f"round {r + 1}/{args.rounds} {c}: {this[c] * 1e3:.2f} ms/step", file=sys.stderr, flush=True)
            else:
                o = run_overlap_config(c, args)
                overlap[c].append(o)
                print(f"round {r + 1}/{args.rounds} {c}: " + ", ".join(
                    f"{k} {o[k] * 1e3:.2f} ms" for k in ("local", "ddp", "noop", "alone")) +
                    f", exposed {o['exposed']:.0%}", file=sys.stderr, flush=True)
        for c in ratio:
            ratio[c].append(this[c] / this[BASELINE[c]])
        for c in ratio1:
            ratio1[c].append(this[c] / (this[ONE_THREAD[c]] / 2))

    arch = "-".join(map(str, args.widths))
    print(f"Machine: {_launch.machine_line()}; PyTorch {tv or 'not installed'}")
    print(f"MLP {arch}, batch {args.batch} in total, SGD; rounds {args.rounds}; load average before {load_before}, "
          f"after {_launch.load_average()}; 1-minute load at each round's start: {' '.join(f'{x:.1f}' for x in loads)}")
    for n in notes:
        print(f"Note: {n}")
    if step:
        print()
        print("| configuration | step time, ms | per-sample cost, us | per-sample cost / one process (2 threads) | "
              "per-sample cost / half of one process with 1 thread |")
        print("|---|---|---|---|---|")
        for c in step:
            r = _launch.spread(ratio[c]) if c in ratio else "—"
            r1 = _launch.spread(ratio1[c]) if c in ratio1 else "—"
            print(f"| {c} | {_launch.spread([t * 1e3 for t in step[c]])} | "
                  f"{_launch.spread([t / args.batch * 1e6 for t in step[c]], '{:.1f}')} | {r} | {r1} |")
        for c in ratio:
            m = _launch.med(ratio[c])
            print(f"target {c}: per-sample cost <= 1.10x one process: {'met' if m <= 1.10 else 'not met'} ({m:.2f}x)")
    if overlap:
        print()
        print(f"Overlap, bucket_cap_mb {args.bucket_cap_mb:g}, batch {args.batch // 2} per rank:")
        print()
        print("| configuration | buckets (KB) | local backward, ms | DDP backward, ms | no-op hook backward, ms | "
              "all-reduce alone, ms | exposed | comm exposed |")
        print("|---|---|---|---|---|---|---|---|")
        for c, runs in overlap.items():
            buckets = ", ".join(f"{b / 1024:.0f}" for b in runs[0]["buckets"])
            cells = [_launch.spread([o[k] * 1e3 for o in runs]) for k in ("local", "ddp", "noop", "alone")]
            cells += [_launch.spread([o[k] * 100 for o in runs], "{:.0f}%") for k in ("exposed", "comm_exposed")]
            print(f"| {c} | {len(runs[0]['buckets'])}: {buckets} | " + " | ".join(cells) + " |")
        for c, runs in overlap.items():
            if c.startswith("rt"):
                m = _launch.med([o["exposed"] for o in runs])
                n = len(runs[0]["buckets"])
                verdict = "met" if m < 0.5 and n >= 4 else "not met"
                print(f"target {c}: exposed < 50% with >= 4 buckets ({n}): {verdict} ({m:.0%})")


if __name__ == "__main__":
    main()
