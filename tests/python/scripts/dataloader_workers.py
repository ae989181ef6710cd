"""Two DataLoader worker processes feed the transformer copy task (transformer_copy.py's model): a map-style
Dataset of variable-length token sequences, a collate_fn that pads them with pad_sequence, a Sampler that
reshuffles every epoch, worker_init_fn and get_worker_info, and a check that a seeded generator makes
the shuffled batches (and the numpy noise drawn in the workers) repeat exactly.

    python3 dataloader_workers.py --backend torch
    rtorch run dataloader_workers.py --backend rt

Only the import differs between the two backends. The training order comes from numpy (the two libraries'
generators draw different numbers), so both libraries train on the same batches; the seeded-generator
check compares each library with itself.
"""
import argparse
import math

import numpy as np

parser = argparse.ArgumentParser(description="DataLoader with worker processes feeding a transformer")
parser.add_argument("--backend", choices=["rt", "torch"], required=True)
parser.add_argument("--epochs", type=int, default=6)
parser.add_argument("--samples", type=int, default=256)
parser.add_argument("--batch_size", type=int, default=16)
parser.add_argument("--num_workers", type=int, default=2)
parser.add_argument("--d_model", type=int, default=32)
parser.add_argument("--start_method", choices=["fork", "spawn"], default="fork")
args = parser.parse_args()

if args.backend == "rt":
    import rustytorch as torch
else:
    import torch
nn = torch.nn
data = torch.utils.data

PAD, BOS, EOS, VOCAB = 0, 1, 2, 12
MIN_LEN, MAX_LEN = 3, 8


class CopyDataset(data.Dataset):
    """Item i: (source, decoder input, target), 1-D int64 tensors of one sequence's length + 1."""

    def __init__(self, size, seed):
        self.size, self.seed = size, seed

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        rng = np.random.default_rng([self.seed, index])   # the item depends on its index only
        tokens = rng.integers(EOS + 1, VOCAB, rng.integers(MIN_LEN, MAX_LEN + 1))
        src = np.append(tokens, EOS)
        tgt_in = np.insert(tokens, 0, BOS)
        return torch.from_numpy(src), torch.from_numpy(tgt_in), torch.from_numpy(src.copy())


class NoisyIndexDataset(data.Dataset):
    """Item i: (i, noise drawn from numpy's global generator in whichever process loads it)."""

    def __len__(self):
        return 40

    def __getitem__(self, index):
        return index, float(np.random.rand())


class EpochShuffleSampler(data.Sampler):
    """A new permutation every epoch, from numpy, so that every library visits the items in one order."""

    def __init__(self, size, seed):
        self.size, self.seed, self.epoch = size, seed, 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __iter__(self):
        return iter(np.random.default_rng([self.seed, self.epoch]).permutation(self.size).tolist())

    def __len__(self):
        return self.size


def collate(batch):
    """Pads the sequences of a batch to its longest, and says which worker built it."""
    srcs, tgt_ins, tgt_outs = zip(*batch)
    pad = nn.utils.rnn.pad_sequence
    info = data.get_worker_info()
    worker = -1 if info is None else info.id
    return (pad(srcs, batch_first=True, padding_value=PAD), pad(tgt_ins, batch_first=True, padding_value=PAD),
            pad(tgt_outs, batch_first=True, padding_value=PAD), worker)


def seed_worker(worker_id):
    """PyTorch's recipe for reproducible workers: numpy's global generator from the worker's seed."""
    worker_seed = torch.initial_seed() % 2**32
    np.random.seed(worker_seed)


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
        self.transformer = nn.Transformer(d_model=d_model, nhead=4, num_encoder_layers=1, num_decoder_layers=1,
                                          dim_feedforward=2 * d_model, dropout=0.0, batch_first=True)
        self.generator = nn.Linear(d_model, VOCAB)

    def encode_tokens(self, tokens):
        return self.embed(tokens) * math.sqrt(self.d_model) + self.pe[:tokens.size(1)]

    def forward(self, src, tgt_in):
        tgt_mask = nn.Transformer.generate_square_subsequent_mask(tgt_in.size(1))
        src_pad = src == PAD
        out = self.transformer(self.encode_tokens(src), self.encode_tokens(tgt_in), tgt_mask=tgt_mask,
                               src_key_padding_mask=src_pad, tgt_key_padding_mask=tgt_in == PAD,
                               memory_key_padding_mask=src_pad)
        return self.generator(out)


def load_numpy_weights(model, rng):
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                continue
            bound = math.sqrt(6.0 / (p.shape[0] + p.shape[1])) if p.dim() > 1 else 0.1
            p.copy_(torch.from_numpy(rng.uniform(-bound, bound, size=tuple(p.shape)).astype(np.float32)))


def noisy_batches(num_workers, seed):
    loader = data.DataLoader(NoisyIndexDataset(), batch_size=4, shuffle=True, num_workers=num_workers,
                             worker_init_fn=seed_worker, generator=torch.Generator().manual_seed(seed),
                             multiprocessing_context=args.start_method if num_workers else None)
    return [(idx.tolist(), noise.tolist()) for idx, noise in loader]


if __name__ == "__main__":   # the workers of the "spawn" start method import this file
    torch.manual_seed(0)
    first, again = noisy_batches(args.num_workers, 7), noisy_batches(args.num_workers, 7)
    other = noisy_batches(args.num_workers, 8)
    in_process = noisy_batches(0, 7)
    print("seeded generator repeats batches and worker noise:", first == again)
    print("another seed gives another order:", [i for i, _ in first] != [i for i, _ in other])
    print("workers give the in-process order:", [i for i, _ in first] == [i for i, _ in in_process])
    print("every item once per epoch:", sorted(i for idx, _ in first for i in idx) == list(range(40)))

    train_set = CopyDataset(args.samples, seed=1)
    sampler = EpochShuffleSampler(len(train_set), seed=2)
    loader = data.DataLoader(train_set, batch_size=args.batch_size, sampler=sampler, collate_fn=collate,
                             num_workers=args.num_workers, worker_init_fn=seed_worker, persistent_workers=True,
                             multiprocessing_context=args.start_method)
    test_src, test_in, test_out, _ = collate([CopyDataset(64, seed=3)[i] for i in range(64)])

    model = CopyTransformer(args.d_model)
    load_numpy_weights(model, np.random.default_rng(0))
    criterion = nn.CrossEntropyLoss(ignore_index=PAD)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        total, batches, per_worker = 0.0, 0, {}
        for src, tgt_in, tgt_out, worker in loader:
            logits = model(src, tgt_in)
            loss = criterion(logits.reshape(-1, VOCAB), tgt_out.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total, batches = total + loss.item(), batches + 1
            per_worker[worker] = per_worker.get(worker, 0) + 1
        model.eval()
        with torch.no_grad():
            logits = model(test_src, test_in)
            test_loss = criterion(logits.reshape(-1, VOCAB), test_out.reshape(-1)).item()
            real = test_out != PAD
            accuracy = ((logits.argmax(dim=-1) == test_out) & real).sum().item() / real.sum().item()
        print(f"epoch {epoch} | batches per worker {sorted(per_worker.items())} | train loss {total / batches:.8f} "
              f"| test loss {test_loss:.8f} | token accuracy {accuracy:.4f}")
