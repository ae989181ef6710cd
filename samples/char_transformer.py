"""Train a small GPT-style character model on Pride and Prejudice, then sample text from it.

    rtorch run samples/char_transformer.py                   # 1500 steps (a few minutes on 2 cores)
    rtorch run samples/char_transformer.py --quick           # 30 steps and a short sample (what the tests run)
    rtorch run samples/char_transformer.py --prompt "Mr. Darcy" --tokens 400 --temperature 0.8
"""
import argparse
import math
import os
import time

import numpy as np
import rustytorch as rt
from rustytorch import nn
from rustytorch.nn import functional as F

TEXT_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "pride_and_prejudice.txt")


class CharVocab:
    """Maps each distinct character of a text to an integer id and back."""

    def __init__(self, text):
        self.chars = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.chars)}

    def __len__(self):
        return len(self.chars)

    def encode(self, text):
        unknown = sorted(set(text) - set(self.index))
        if unknown:
            raise ValueError(f"characters not in the training text: {''.join(unknown)!r}")
        return [self.index[c] for c in text]

    def decode(self, ids):
        return "".join(self.chars[i] for i in ids)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_head, block_size, dropout):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("future", rt.triu(rt.ones(block_size, block_size, dtype=rt.bool), diagonal=1))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (y.view(b, t, self.n_head, c // self.n_head).transpose(1, 2) for y in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(c // self.n_head))
        scores = scores.masked_fill(self.future[:t, :t], float("-inf"))
        y = self.dropout(F.softmax(scores, dim=-1)) @ v
        return self.proj(y.transpose(1, 2).reshape(b, t, c))


class Block(nn.Module):
    """Pre-norm transformer block: attention and an MLP, each with a residual connection."""

    def __init__(self, d_model, n_head, block_size, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_head, block_size, dropout)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model),
                                 nn.Dropout(dropout))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class CharGPT(nn.Module):
    def __init__(self, vocab_size, block_size=64, d_model=64, n_head=4, n_layer=2, dropout=0.1):
        super().__init__()
        self.block_size = block_size
        self.tok = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(block_size, d_model)
        self.blocks = nn.ModuleList([Block(d_model, n_head, block_size, dropout) for _ in range(n_layer)])
        self.ln = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, idx):
        t = idx.shape[1]
        if t > self.block_size:
            raise ValueError(f"CharGPT: sequence length {t} exceeds block_size {self.block_size}")
        x = self.tok(idx) + self.pos(rt.arange(t))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))

    @rt.no_grad()
    def generate(self, idx, tokens, temperature=1.0, seed=0):
        """Appends `tokens` sampled characters to idx [1, T]."""
        self.eval()
        rng = np.random.default_rng(seed)
        out = idx[0].tolist()
        for _ in range(tokens):
            context = rt.tensor([out[-self.block_size:]])
            logits = self(context)[0, -1] / temperature
            probs = F.softmax(logits, dim=-1).double().numpy()
            out.append(int(rng.choice(len(probs), p=probs / probs.sum())))
        self.train()
        return out


def batches(data, block_size, batch_size, generator):
    """Random windows of the encoded text: inputs and the same windows shifted by one."""
    while True:
        starts = rt.randint(0, data.shape[0] - block_size - 1, (batch_size,), generator=generator)
        offsets = starts.unsqueeze(1) + rt.arange(block_size + 1).unsqueeze(0)
        windows = data[offsets]
        yield windows[:, :-1], windows[:, 1:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--prompt", default="It is a truth")
    parser.add_argument("--tokens", type=int, default=300, help="characters to sample after training")
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--quick", action="store_true", help="30 steps and 40 sampled characters, for tests")
    args = parser.parse_args()
    steps, tokens = (30, 40) if args.quick else (args.steps, args.tokens)

    rt.manual_seed(args.seed)
    with open(TEXT_FILE, encoding="utf-8") as f:
        text = f.read()
    vocab = CharVocab(text)
    data = rt.tensor(vocab.encode(text), dtype=rt.int64)
    n_val = len(text) // 10
    train_data, val_data = data[:-n_val], data[-n_val:]

    model = CharGPT(len(vocab))
    print(f"{sum(p.numel() for p in model.parameters())} parameters, vocabulary of {len(vocab)} characters")
    optimizer = rt.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    scheduler = rt.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps)
    generator = rt.Generator().manual_seed(args.seed)
    train_batches = batches(train_data, model.block_size, args.batch_size, generator)
    val_batches = batches(val_data, model.block_size, args.batch_size, generator)

    start = time.perf_counter()
    for step in range(1, steps + 1):
        x, y = next(train_batches)
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, len(vocab)), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        rt.profiler.counter("loss", loss)            # a Scalars chart when profiled; a no-op otherwise
        rt.profiler.counter("lr", scheduler.get_last_lr()[0])
        scheduler.step()
        if step % max(1, steps // 10) == 0 or step == steps:
            with rt.no_grad():
                vx, vy = next(val_batches)
                val = F.cross_entropy(model(vx).reshape(-1, len(vocab)), vy.reshape(-1)).item()
            print(f"step {step:5d}  train loss {loss.item():.4f}  val loss {val:.4f}  "
                  f"({(time.perf_counter() - start) / step * 1e3:.1f} ms/step)")

    prompt = rt.tensor([vocab.encode(args.prompt)])
    print("--- sample ---")
    print(vocab.decode(model.generate(prompt, tokens, args.temperature, seed=args.seed)))


if __name__ == "__main__":
    main()
