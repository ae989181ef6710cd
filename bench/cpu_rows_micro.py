#!/usr/bin/env python3
"""Row kernels of CPU training (issue 24): softmax, layer_norm, sum/mean over a dim, cross entropy, forward
and forward+backward at the training benchmarks' shapes, rustytorch against PyTorch in one process,
interleaved (ours, torch, ours, ...).

    PYTHONPATH=build/python /usr/bin/python3 bench/cpu_rows_micro.py --threads 1 --rounds 5
    PYTHONPATH=build/python /usr/bin/python3 bench/cpu_rows_micro.py --only sum_dim0 ce_lstm

Prints one row per case: our median time, PyTorch's, and the median ratio with its spread (min-max of
the per-round ratios; < 1: faster than PyTorch).
"""
import argparse
import os
import statistics
import time


def cases(lib):
    """name -> (setup() returning state, run(state))."""
    F = lib.nn.functional

    def grad_of(fn, *shape, **kw):
        def setup():
            lib.manual_seed(0)
            x = lib.randn(*shape).requires_grad_(True)
            return x, lib.randn(*shape) if kw.get("upstream") else None

        def run(s):
            x, g = s
            y = fn(x)
            (y.backward(g) if g is not None else y.backward())
            x.grad = None
        return setup, run

    def fwd(fn, *shape):
        def setup():
            lib.manual_seed(0)
            return lib.randn(*shape)
        return setup, fn

    def ce(n, c):
        def setup():
            lib.manual_seed(0)
            return lib.randn(n, c).requires_grad_(True), lib.randint(0, c, (n,))

        def run(s):
            x, y = s
            F.cross_entropy(x, y).backward()
            x.grad = None
        return setup, run

    return {
        "softmax_attn": fwd(lambda x: F.softmax(x, dim=-1), 32, 4, 64, 64),
        "softmax_attn_fb": grad_of(lambda x: F.softmax(x, dim=-1), 32, 4, 64, 64, upstream=True),
        "log_softmax_lstm": fwd(lambda x: F.log_softmax(x, dim=-1), 700, 10000),
        "softmax_dim0": fwd(lambda x: F.softmax(x, dim=0), 512, 512),
        "layer_norm": fwd(lambda x: F.layer_norm(x, (64,)), 32, 64, 64),
        "layer_norm_fb": (lambda: (lib.manual_seed(0), (lib.randn(32, 64, 64).requires_grad_(True),
                                                        lib.ones(64).requires_grad_(True),
                                                        lib.zeros(64).requires_grad_(True),
                                                        lib.randn(32, 64, 64)))[1],
                          lambda s: (F.layer_norm(s[0], (64,), s[1], s[2]).backward(s[3]),
                                     setattr(s[0], "grad", None), setattr(s[1], "grad", None),
                                     setattr(s[2], "grad", None))),
        "sum_dim0": fwd(lambda x: x.sum(0), 1024, 1024),
        "sum_dim1": fwd(lambda x: x.sum(1), 1024, 1024),
        "sum_dim01_btc": fwd(lambda x: x.sum((0, 1)), 32, 64, 256),
        "mean_dim0": fwd(lambda x: x.mean(0), 1024, 1024),
        "ce_char": ce(2048, 80),
        "ce_lstm": ce(700, 10000),
    }


def timed(run, state, iters):
    run(state)
    t0 = time.perf_counter()
    for _ in range(iters):
        run(state)
    return (time.perf_counter() - t0) / iters


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    import rustytorch as rt
    import torch
    rt.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    ours, theirs = cases(rt), cases(torch)
    names = args.only or list(ours)
    print(f"threads {args.threads}, rounds {args.rounds}, load average {os.getloadavg()[0]:.2f}, "
          f"level {rt.backends.cpu.get_cpu_capability()}")
    print(f"{'case':18} {'ours ms':>9} {'torch ms':>9} {'ratio':>7}  spread")
    for name in names:
        s_ours, s_torch = ours[name][0](), theirs[name][0]()
        t_ours, t_torch, ratios = [], [], []
        for r in range(args.rounds):
            order = [(ours, s_ours, t_ours), (theirs, s_torch, t_torch)]
            if r % 2:
                order.reverse()
            for lib_cases, state, out in order:
                out.append(timed(lib_cases[name][1], state, args.iters))
            ratios.append(t_ours[-1] / t_torch[-1])
        print(f"{name:18} {statistics.median(t_ours) * 1e3:9.3f} {statistics.median(t_torch) * 1e3:9.3f} "
              f"{statistics.median(ratios):7.2f}  {min(ratios):.2f}-{max(ratios):.2f}")


if __name__ == "__main__":
    main()
