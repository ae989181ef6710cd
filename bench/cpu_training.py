#!/usr/bin/env python3
"""CPU training steps, rustytorch against PyTorch in one process, interleaved (issue 24's table).

    PYTHONPATH=build/python /usr/bin/python3 bench/cpu_training.py                  # every row, 2 threads
    PYTHONPATH=build/python /usr/bin/python3 bench/cpu_training.py --only mlp_adam cnn_sgd --rounds 11
    PYTHONPATH=build/python /usr/bin/python3 bench/cpu_training.py --quick          # 2 short rounds: does it run

Each workload builds the same model, data and optimizer in both libraries (the same seeds do not give the same
numbers across libraries; the shapes and the work are the same). One round times `iters` training steps of each
library, alternating which goes first from round to round, so that machine noise hits both alike. The ratio
(rustytorch time / PyTorch time; lower is better, < 1 is faster than PyTorch) is taken within each round; the
table gives its median and spread (min..max over rounds) and whether the issue's target is met. The rows:

  mlp_adam          784-512-512-10 MLP, batch 128, Adam, cross entropy                 target <= 0.8
  cnn_sgd           conv32-pool-conv64-pool-fc128-fc10 on 28x28, batch 64, SGD             target <= 1.0
  resnet_sgd        ResNet-18-style basic blocks (64-64, 64-128 /2, 128-128) on 32x32, batch 32, SGD  <= 1.0
  char_transformer  samples/char_transformer.py's CharGPT (2 blocks of 64, 4 heads, context 64), batch 32, AdamW
                                                                                        target <= 1.0
  lstm_lm           word language model: embedding 200, 2-layer LSTM 200, sequence 35, batch 20, vocab 10000,
                    SGD with clip_grad_norm_                                             target <= 1.0
  add_python        `a + b` on 1-element float32 tensors (the per-op cost seen from Python)  target <= 0.5
"""
import argparse
import datetime
import math
import os
import statistics
import sys
import time

TARGETS = {"mlp_adam": 0.8, "cnn_sgd": 1.0, "resnet_sgd": 1.0, "char_transformer": 1.0, "lstm_lm": 1.0,
           "add_python": 0.5}


def mlp_adam(lib):
    nn = lib.nn
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    x, y = lib.randn(128, 784), lib.randint(0, 10, (128,))
    return model, opt, lambda: nn.functional.cross_entropy(model(x), y), 20


def cnn_sgd(lib):
    nn = lib.nn
    model = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = lib.randn(64, 1, 28, 28), lib.randint(0, 10, (64,))
    return model, opt, lambda: nn.functional.cross_entropy(model(x), y), 5


def resnet_sgd(lib):
    nn = lib.nn

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.shortcut = nn.Sequential()
            if stride != 1 or cin != cout:
                self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            out = nn.functional.relu(self.bn1(self.conv1(x)))
            return nn.functional.relu(self.bn2(self.conv2(out)) + self.shortcut(x))

    model = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                          BasicBlock(64, 64, 1), BasicBlock(64, 128, 2), BasicBlock(128, 128, 1),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    x, y = lib.randn(32, 3, 32, 32), lib.randint(0, 10, (32,))
    return model, opt, lambda: nn.functional.cross_entropy(model(x), y), 2


def char_transformer(lib):
    """The sample's CharGPT, written against `lib` (samples/char_transformer.py imports rustytorch itself)."""
    nn, F = lib.nn, lib.nn.functional
    vocab, block, d_model, n_head = 80, 64, 64, 4

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv, self.proj, self.drop = nn.Linear(d_model, 3 * d_model), nn.Linear(d_model, d_model), nn.Dropout(0.1)
            self.register_buffer("future", lib.triu(lib.ones(block, block, dtype=lib.bool), diagonal=1))

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(x).split(c, dim=2)
            q, k, v = (z.view(b, t, n_head, c // n_head).transpose(1, 2) for z in (q, k, v))
            scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(c // n_head))
            scores = scores.masked_fill(self.future[:t, :t], float("-inf"))
            return self.proj((self.drop(F.softmax(scores, dim=-1)) @ v).transpose(1, 2).reshape(b, t, c))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.attn, self.ln2 = nn.LayerNorm(d_model), Attention(), nn.LayerNorm(d_model)
            self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model),
                                     nn.Dropout(0.1))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class CharGPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d_model), nn.Embedding(block, d_model)
            self.blocks = nn.ModuleList([Block(), Block()])
            self.ln, self.head = nn.LayerNorm(d_model), nn.Linear(d_model, vocab)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(lib.arange(idx.shape[1]))
            for b in self.blocks:
                x = b(x)
            return self.head(self.ln(x))

    model = CharGPT()
    opt = lib.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    x, y = lib.randint(0, vocab, (32, block)), lib.randint(0, vocab, (32, block))
    return model, opt, lambda: F.cross_entropy(model(x).view(-1, vocab), y.view(-1)), 5


def lstm_lm(lib):
    nn = lib.nn
    vocab, emb, seq, batch = 10000, 200, 35, 20

    class WordLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder, self.rnn, self.decoder = nn.Embedding(vocab, emb), nn.LSTM(emb, emb, 2), nn.Linear(emb, vocab)

        def forward(self, idx):
            out, _ = self.rnn(self.encoder(idx))
            return self.decoder(out)

    model = WordLM()
    opt = lib.optim.SGD(model.parameters(), lr=20.0)
    x, y = lib.randint(0, vocab, (seq, batch)), lib.randint(0, vocab, (seq, batch))

    def loss():
        return nn.functional.cross_entropy(model(x).view(-1, vocab), y.view(-1))

    def clip():
        nn.utils.clip_grad_norm_(model.parameters(), 0.25)

    return model, opt, loss, 3, clip


WORKLOADS = {"mlp_adam": mlp_adam, "cnn_sgd": cnn_sgd, "resnet_sgd": resnet_sgd,
             "char_transformer": char_transformer, "lstm_lm": lstm_lm}


def step_fn(lib, workload):
    """One training step of `workload` built with `lib`, and the steps per timing."""
    lib.manual_seed(0)
    built = WORKLOADS[workload](lib)
    model, opt, loss_fn, iters = built[:4]
    before_step = built[4] if len(built) > 4 else None

    def step():
        opt.zero_grad()
        loss_fn().backward()
        if before_step:
            before_step()
        opt.step()

    return step, iters


def add_fn(lib):
    a, b = lib.ones(1), lib.ones(1)

    def run():
        for _ in range(20000):
            a + b

    return run, 1


def time_once(fn, iters):
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    return (time.perf_counter() - t0) / iters


def measure(workload, libs, rounds, quick):
    fns = {}
    for name, lib in libs.items():
        fn, iters = add_fn(lib) if workload == "add_python" else step_fn(lib, workload)
        if quick:
            iters = 1
        fn()  # warm up: first-call allocations, caches, lazy initialisation
        fn()
        fns[name] = (fn, iters)
    times = {name: [] for name in libs}
    for r in range(rounds):
        order = list(libs) if r % 2 == 0 else list(reversed(libs))
        for name in order:
            fn, iters = fns[name]
            times[name].append(time_once(fn, iters))
    return times


def fmt(s):
    return f"{s * 1e6:.2f} us" if s < 1e-3 else f"{s * 1e3:.2f} ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="+", choices=list(TARGETS), metavar="ROW", help="rows to run (default: all)")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="2 rounds of one step each: checks that it runs")
    args = ap.parse_args()
    rows = args.only or list(TARGETS)
    rounds = 2 if args.quick else args.rounds

    import rustytorch as rt
    try:
        import torch
    except ImportError:
        sys.exit("cpu_training.py: PyTorch is not importable; run it with Debian's /usr/bin/python3 "
                 "(apt-get install python3-torch)")
    for lib in (rt, torch):
        lib.set_num_threads(args.threads)
    libs = {"rustytorch": rt, "torch": torch}
    load = os.getloadavg()[0]
    print(f"{datetime.date.today()}, {os.cpu_count()} cores, {args.threads} threads, PyTorch {torch.__version__}, "
          f"{rounds} interleaved rounds, load average {load:.1f} at start")
    print()
    print("| row | rustytorch (median) | PyTorch (median) | ratio median | ratio spread | target | met |")
    print("|---|---|---|---|---|---|---|")
    missed = []
    for row in rows:
        times = measure(row, libs, rounds, args.quick)
        ratios = [a / b for a, b in zip(times["rustytorch"], times["torch"])]
        med = statistics.median(ratios)
        ok = med <= TARGETS[row]
        if not ok:
            missed.append(row)
        per = 20000 if row == "add_python" else 1
        print(f"| {row} | {fmt(statistics.median(times['rustytorch']) / per)} | "
              f"{fmt(statistics.median(times['torch']) / per)} | {med:.2f} | {min(ratios):.2f}..{max(ratios):.2f} | "
              f"<= {TARGETS[row]} | {'yes' if ok else 'no'} |", flush=True)
    print()
    print(f"load average {os.getloadavg()[0]:.1f} at the end; rows missing their target: {', '.join(missed) or 'none'}")


if __name__ == "__main__":
    main()
