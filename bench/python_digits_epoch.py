#!/usr/bin/env python3
"""Digits MLP epoch time from Python: rustytorch vs PyTorch, same model, data, batch size and thread count.

    python3 bench/python_digits_epoch.py --threads 2          # runs both backends, prints the ratio
    python3 bench/python_digits_epoch.py --backend torch --json   # one backend (what the driver runs)

The model is samples/digits_mlp.py's (64-128-64-10, ReLU, Adam, batch 64, 1437 training images); an epoch is
one pass over the shuffled training set including zero_grad/forward/loss/backward/step and loss.item().
ratio = rustytorch epoch time / PyTorch epoch time (target from issue 3: <= 0.8).
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)
TARGET_RATIO = 0.8


def measure(backend, epochs, threads):
    if backend == "torch":
        import torch as rt
        rt.set_num_threads(threads)
    else:
        import rustytorch as rt
    sys.path.insert(0, os.path.join(SOURCE, "samples"))
    import numpy as np
    import gzip
    with gzip.open(os.path.join(SOURCE, "samples", "data", "digits.csv.gz"), "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.float32)
    x_all = rt.from_numpy(np.ascontiguousarray(table[:1437, :64] / 16.0))
    y_all = rt.from_numpy(table[:1437, 64].astype(np.int64))
    rt.manual_seed(0)
    nn = rt.nn
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))
    loss_fn = nn.CrossEntropyLoss()
    opt = rt.optim.Adam(model.parameters(), lr=1e-3)
    batch = 64

    def epoch():
        order = rt.randperm(x_all.shape[0])
        total = 0.0
        for i in range(0, x_all.shape[0], batch):
            idx = order[i:i + batch]
            opt.zero_grad()
            loss = loss_fn(model(x_all[idx]), y_all[idx])
            loss.backward()
            opt.step()
            total += loss.item()
        return total

    epoch()  # warm-up
    times = []
    for _ in range(epochs):
        start = time.perf_counter()
        epoch()
        times.append(time.perf_counter() - start)
    times.sort()
    return {"backend": backend, "version": getattr(rt, "__version__", "?"), "median_s": times[len(times) // 2],
            "min_s": times[0]}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--backend", choices=["rt", "torch"])
    p.add_argument("--json", action="store_true")
    p.add_argument("--build-dir", default=os.path.join(SOURCE, "build"))
    args = p.parse_args()
    if args.backend:
        print(json.dumps(measure(args.backend, args.epochs, args.threads)))
        return
    results = {}
    for backend in ("rt", "torch"):
        env = dict(os.environ, OMP_NUM_THREADS=str(args.threads),
                   PYTHONPATH=os.path.join(args.build_dir, "python"))
        out = subprocess.run([sys.executable, __file__, "--backend", backend, "--threads", str(args.threads),
                              "--epochs", str(args.epochs)], env=env, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"python_digits_epoch.py: the {backend} run failed:\n{out.stderr}")
        results[backend] = json.loads(out.stdout.strip().splitlines()[-1])
    r, t = results["rt"]["median_s"], results["torch"]["median_s"]
    if args.json:
        print(json.dumps({"rt": results["rt"], "torch": results["torch"], "ratio": r / t}))
        return
    print(f"| digits MLP epoch (Python, threads {args.threads}) | rustytorch {r * 1e3:.2f} ms | "
          f"PyTorch {results['torch']['version']} {t * 1e3:.2f} ms | ratio {r / t:.2f} | target <= {TARGET_RATIO} | "
          f"{'met' if r / t <= TARGET_RATIO else 'NOT met'} |")


if __name__ == "__main__":
    main()
