#!/usr/bin/env python3
"""Linear + activation in nn.Sequential: rustytorch fused (rt.backends.cpu.fuse_linear_activation, the default),
rustytorch unfused, and PyTorch, in one process, interleaved round by round.

    PYTHONPATH=build/python /usr/bin/python3 bench/linear_activation_micro.py --threads 1 --rounds 7

Each case times forward + backward of Sequential(Linear(k, n), act) on x [rows, k] requiring grad, float32. The
fused path saves the bias copy before the GEMM and the activation's separate pass and tensor, so it shows most
where the GEMM is short (small k). Prints the median time of each variant and the median (min..max) of the
per-round ratios fused / unfused and fused / PyTorch.
"""
import argparse
import statistics
import time

CASES = [  # rows, k, n, activation
    (4096, 64, 256, "ReLU"),
    (4096, 64, 256, "GELU"),
    (1024, 512, 512, "ReLU"),
]


def step_fn(lib, rows, k, n, act):
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(k, n), getattr(lib.nn, act)())
    x = lib.randn(rows, k, requires_grad=True)

    def step():
        net.zero_grad()
        x.grad = None
        net(x).sum().backward()
    return step


def time_it(step, iters):
    step()
    t0 = time.perf_counter()
    for _ in range(iters):
        step()
    return (time.perf_counter() - t0) / iters


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--iters", type=int, default=20)
    args = ap.parse_args()
    import rustytorch as rt
    import torch
    rt.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    print(f"threads {args.threads}, rounds {args.rounds}, {args.iters} steps each; capability "
          f"{rt.backends.cpu.get_cpu_capability()}")
    print("| x, layer | fused | unfused | PyTorch | fused / unfused | fused / PyTorch |")
    print("|---|---|---|---|---|---|")
    for rows, k, n, act in CASES:
        steps = {"fused": step_fn(rt, rows, k, n, act), "unfused": step_fn(rt, rows, k, n, act),
                 "torch": step_fn(torch, rows, k, n, act)}
        times = {name: [] for name in steps}
        order = list(steps)
        for r in range(args.rounds):
            for name in (order if r % 2 == 0 else order[::-1]):
                rt.backends.cpu.fuse_linear_activation = name != "unfused"
                times[name].append(time_it(steps[name], args.iters))
        rt.backends.cpu.fuse_linear_activation = True
        vs_unfused = [f / u for f, u in zip(times["fused"], times["unfused"])]
        vs_torch = [f / t for f, t in zip(times["fused"], times["torch"])]
        med = {name: statistics.median(v) * 1e3 for name, v in times.items()}
        print(f"| [{rows}, {k}], Linear({k}, {n}) + {act} | {med['fused']:.3f} ms | {med['unfused']:.3f} ms | "
              f"{med['torch']:.3f} ms | {statistics.median(vs_unfused):.2f} ({min(vs_unfused):.2f}..{max(vs_unfused):.2f}) | "
              f"{statistics.median(vs_torch):.2f} ({min(vs_torch):.2f}..{max(vs_torch):.2f}) |")


if __name__ == "__main__":
    main()
