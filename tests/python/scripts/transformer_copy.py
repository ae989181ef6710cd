"""A transformer encoder-decoder learns to copy token sequences of varying length: nn.Transformer with
batch_first, a causal target mask from generate_square_subsequent_mask, key padding masks for the source,
the target and the memory, a sinusoidal position encoding, cross-entropy that ignores padding, Adam, and
token and whole-sequence (greedy decoding) accuracy on held-out sequences.

    python3 transformer_copy.py --backend torch
    rtorch run transformer_copy.py --backend rt

Only the import differs between the two backends; data and initial weights come from numpy.
"""
import argparse
import math

import numpy as np

parser = argparse.ArgumentParser(description="transformer copy task")
parser.add_argument("--backend", choices=["rt", "torch"], required=True)
parser.add_argument("--steps", type=int, default=200)
parser.add_argument("--batch_size", type=int, default=16)
parser.add_argument("--d_model", type=int, default=32)
parser.add_argument("--lr", type=float, default=3e-3)
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--double", action="store_true", help="train in float64 (model.double())")
args = parser.parse_args()

if args.backend == "rt":
    import rustytorch as torch
else:
    import torch
nn = torch.nn

PAD, BOS, EOS, VOCAB = 0, 1, 2, 12
MIN_LEN, MAX_LEN = 3, 8


def make_batch(rng, n):
    """Source: tokens + EOS; decoder input: BOS + tokens; target: tokens + EOS; all padded with PAD."""
    lengths = rng.integers(MIN_LEN, MAX_LEN + 1, n)
    src = np.full((n, MAX_LEN + 1), PAD, dtype=np.int64)
    tgt_in = np.full((n, MAX_LEN + 1), PAD, dtype=np.int64)
    tgt_out = np.full((n, MAX_LEN + 1), PAD, dtype=np.int64)
    for row, length in enumerate(lengths):
        tokens = rng.integers(EOS + 1, VOCAB, length)
        src[row, :length], src[row, length] = tokens, EOS
        tgt_in[row, 0], tgt_in[row, 1:length + 1] = BOS, tokens
        tgt_out[row, :length], tgt_out[row, length] = tokens, EOS
    return torch.from_numpy(src), torch.from_numpy(tgt_in), torch.from_numpy(tgt_out)


class CopyTransformer(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.d_model = d_model
        self.embed = nn.Embedding(VOCAB, d_model, padding_idx=PAD)
        position = np.arange(MAX_LEN + 1)[:, None]
        div = np.exp(np.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = np.zeros((MAX_LEN + 1, d_model), dtype=np.float32)
        pe[:, 0::2], pe[:, 1::2] = np.sin(position * div), np.cos(position * div)
        self.register_buffer("pe", torch.from_numpy(pe))
        self.transformer = nn.Transformer(d_model=d_model, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
                                          dim_feedforward=2 * d_model, dropout=0.0, batch_first=True)
        self.generator = nn.Linear(d_model, VOCAB)

    def encode_tokens(self, tokens):
        return self.embed(tokens) * math.sqrt(self.d_model) + self.pe[:tokens.size(1)]

    def forward(self, src, tgt_in):
        tgt_mask = nn.Transformer.generate_square_subsequent_mask(tgt_in.size(1)).to(self.pe.dtype)
        src_pad = src == PAD
        out = self.transformer(self.encode_tokens(src), self.encode_tokens(tgt_in), tgt_mask=tgt_mask,
                               src_key_padding_mask=src_pad, tgt_key_padding_mask=tgt_in == PAD,
                               memory_key_padding_mask=src_pad)
        return self.generator(out)

    def greedy_decode(self, src):
        """Decodes one token at a time from BOS, always taking the most likely next token."""
        tgt = torch.full((src.size(0), 1), BOS, dtype=torch.int64)
        for _ in range(src.size(1)):
            logits = self.forward(src, tgt)
            tgt = torch.cat([tgt, logits[:, -1].argmax(dim=-1, keepdim=True)], dim=1)
        return tgt[:, 1:]


def load_numpy_weights(model, rng):
    """Glorot-uniform matrices and small uniform vectors from numpy; the layer norms keep their 1 and 0."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                continue
            if p.dim() > 1:
                bound = math.sqrt(6.0 / (p.shape[0] + p.shape[1]))
            else:
                bound = 0.1
            p.copy_(torch.from_numpy(rng.uniform(-bound, bound, size=tuple(p.shape))).to(p.dtype))


rng = np.random.default_rng(args.seed)
torch.manual_seed(args.seed)
model = CopyTransformer(args.d_model)
if args.double:
    model.double()
load_numpy_weights(model, rng)
criterion = nn.CrossEntropyLoss(ignore_index=PAD)
optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
test_src, test_in, test_out = make_batch(np.random.default_rng(12345), 64)

for step in range(1, args.steps + 1):
    model.train()
    src, tgt_in, tgt_out = make_batch(rng, args.batch_size)
    logits = model(src, tgt_in)
    loss = criterion(logits.reshape(-1, VOCAB), tgt_out.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 25 == 0 or step == 1:
        print(f"step {step:4d} | loss {loss.item():.6f}")

model.eval()
with torch.no_grad():
    logits = model(test_src, test_in)
    test_loss = criterion(logits.reshape(-1, VOCAB), test_out.reshape(-1)).item()
    real = test_out != PAD
    token_acc = ((logits.argmax(dim=-1) == test_out) & real).sum().item() / real.sum().item()
    decoded = model.greedy_decode(test_src)
    exact = ((decoded == test_out) | ~real).all(dim=1).float().mean().item()
print(f"test loss {test_loss:.6f} | token accuracy {token_acc:.4f} | sequence accuracy {exact:.4f}")
