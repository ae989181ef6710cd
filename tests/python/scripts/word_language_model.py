"""Word-level language model on the opening of Pride and Prejudice, the way PyTorch's word_language_model
example trains one (scaled down to run in seconds): nn.Embedding, a 2-layer nn.LSTM (or GRU, RNN, or a
causal nn.TransformerEncoder with a sinusoidal position encoding: --model), dropout, an nn.Linear decoder (optionally tied to the embedding), truncated backpropagation through time
with repackage_hidden, clip_grad_norm_, plain SGD written out by hand, learning-rate annealing, perplexity
per epoch, the best model saved whole with torch.save and reloaded for the test perplexity, and a few
words generated greedily.

    python3 word_language_model.py --backend torch
    rtorch run word_language_model.py --backend rt

Only the import differs between the two backends. The initial weights come from numpy, so both start
from the same model; dropout draws from the library's own generator, so the runs compared number for
number use --dropout 0 (tests/python/test_real_scripts.py).
"""
import argparse
import math
import os
import tempfile

import numpy as np

parser = argparse.ArgumentParser(description="word-level LSTM language model")
parser.add_argument("--backend", choices=["rt", "torch"], required=True)
parser.add_argument("--words", type=int, default=4000, help="words of the text used (train 80%%, valid and "
                    "test 10%% each)")
parser.add_argument("--model", choices=["LSTM", "GRU", "RNN_TANH", "RNN_RELU", "Transformer"], default="LSTM")
parser.add_argument("--emsize", type=int, default=32)
parser.add_argument("--nhid", type=int, default=32, help="hidden units (feed-forward width for Transformer)")
parser.add_argument("--nhead", type=int, default=2, help="attention heads of the Transformer model")
parser.add_argument("--nlayers", type=int, default=2)
parser.add_argument("--lr", type=float, default=20.0)
parser.add_argument("--clip", type=float, default=0.25)
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--batch_size", type=int, default=10)
parser.add_argument("--bptt", type=int, default=20)
parser.add_argument("--dropout", type=float, default=0.2)
parser.add_argument("--seed", type=int, default=1111)
parser.add_argument("--double", action="store_true", help="train in float64 (model.double())")
parser.add_argument("--tied", action="store_true", help="the decoder uses the embedding's weight")
parser.add_argument("--generate", type=int, default=8, help="words to generate from the best model")
args = parser.parse_args()

if args.backend == "rt":
    import rustytorch as torch
else:
    import torch
nn = torch.nn

torch.manual_seed(args.seed)

TEXT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "samples", "data",
                    "pride_and_prejudice.txt")


class Corpus:
    """Words of the text, one <eos> after each line, numbered in order of first appearance."""

    def __init__(self, path, max_words):
        self.word2idx, self.idx2word = {}, []
        ids = []
        with open(path, encoding="utf-8") as f:
            for line in f:
                for word in line.split() + ["<eos>"]:
                    if word not in self.word2idx:
                        self.word2idx[word] = len(self.idx2word)
                        self.idx2word.append(word)
                    ids.append(self.word2idx[word])
                if len(ids) >= max_words:
                    break
        train_end, valid_end = len(ids) * 8 // 10, len(ids) * 9 // 10
        self.train = torch.tensor(ids[:train_end], dtype=torch.int64)
        self.valid = torch.tensor(ids[train_end:valid_end], dtype=torch.int64)
        self.test = torch.tensor(ids[valid_end:], dtype=torch.int64)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


def get_batch(source, i):
    seq_len = min(args.bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].reshape(-1)
    return data, target


def repackage_hidden(h):
    """Cuts the graph at the batch boundary: the next batch starts from the values, not the history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


class RNNModel(nn.Module):
    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout, tie_weights=False):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ["LSTM", "GRU"]:
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        else:
            nonlinearity = {"RNN_TANH": "tanh", "RNN_RELU": "relu"}[rnn_type]
            self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:   # "Using the Output Embedding to Improve Language Models" (Press & Wolf, 2016)
            if nhid != ninp:
                raise ValueError("when using the tied flag, nhid must be equal to emsize")
            self.decoder.weight = self.encoder.weight
        self.rnn_type, self.nlayers, self.nhid = rnn_type, nlayers, nhid

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.ntoken)
        return nn.functional.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == "LSTM":
            return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))
        return weight.new_zeros(self.nlayers, bsz, self.nhid)


class PositionalEncoding(nn.Module):
    """Adds sin/cos of the position at geometrically spaced frequencies, then dropout."""

    def __init__(self, d_model, dropout, max_len=500):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0).transpose(0, 1))   # [max_len, 1, d_model]

    def forward(self, x):
        return self.dropout(x + self.pe[:x.size(0), :])


class TransformerModel(nn.Module):
    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout):
        super().__init__()
        self.model_type = "Transformer"
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        self.transformer_encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(ninp, nhead, nhid, dropout),
                                                         nlayers)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)

    def _generate_square_subsequent_mask(self, sz):
        mask = (torch.triu(torch.ones(sz, sz)) == 1).transpose(0, 1)
        return mask.float().masked_fill(mask == 0, float("-inf")).masked_fill(mask == 1, float(0.0))

    def forward(self, src, has_mask=True):
        if has_mask:
            if self.src_mask is None or self.src_mask.size(0) != len(src):
                # float64 model: the additive mask in the model's dtype
                self.src_mask = self._generate_square_subsequent_mask(len(src)).to(self.pos_encoder.pe.dtype)
        else:
            self.src_mask = None
        src = self.encoder(src) * math.sqrt(self.ninp)
        src = self.pos_encoder(src)
        output = self.transformer_encoder(src, self.src_mask)
        output = self.decoder(output)
        return nn.functional.log_softmax(output, dim=-1)


def load_numpy_weights(model, seed):
    """Same starting point in every library: each parameter, in registration order, from numpy."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                continue   # layer norms keep their ones and zeros
            values = rng.uniform(-0.1, 0.1, size=tuple(p.shape))
            p.copy_(torch.from_numpy(values).to(p.dtype))


corpus = Corpus(TEXT, args.words)
train_data = batchify(corpus.train, args.batch_size)
val_data = batchify(corpus.valid, 5)
test_data = batchify(corpus.test, 5)
ntokens = len(corpus.idx2word)
if args.model == "Transformer":
    model = TransformerModel(ntokens, args.emsize, args.nhead, args.nhid, args.nlayers, args.dropout)
else:
    model = RNNModel(args.model, ntokens, args.emsize, args.nhid, args.nlayers, args.dropout, args.tied)
if args.double:
    model.double()
load_numpy_weights(model, args.seed)
criterion = nn.NLLLoss()
print(f"vocabulary {ntokens} words, {corpus.train.numel()} train, {corpus.valid.numel()} valid, "
      f"{corpus.test.numel()} test, "
      f"{sum(p.numel() for p in model.parameters())} parameters")


def evaluate(data_source):
    model.eval()
    total_loss = 0.
    if args.model != "Transformer":
        hidden = model.init_hidden(5)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, args.bptt):
            data, targets = get_batch(data_source, i)
            if args.model == "Transformer":
                output = model(data).view(-1, ntokens)
            else:
                output, hidden = model(data, hidden)
                hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


def train(epoch, lr):
    model.train()
    total_loss, steps = 0., 0
    if args.model != "Transformer":
        hidden = model.init_hidden(args.batch_size)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
        data, targets = get_batch(train_data, i)
        model.zero_grad()
        if args.model == "Transformer":
            output = model(data).view(-1, ntokens)
        else:
            hidden = repackage_hidden(hidden)
            output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        total_loss += loss.item()
        steps += 1
        if batch % 5 == 0:
            print(f"| epoch {epoch:3d} | batch {batch:3d} | lr {lr:.2f} | loss {loss.item():.8f} "
                  f"| grad norm {float(grad_norm):.8f}")
    return total_loss / steps


def generate(model, prompt, n):
    """Reads the prompt, prints the 5 likeliest next words, then samples n more words at temperature 0.8 (with
    numpy's generator: torch.multinomial would draw from each library's own)."""
    model.eval()
    words = prompt.split()
    input = torch.tensor([[corpus.word2idx[w]] for w in words], dtype=torch.int64)
    rng = np.random.default_rng(args.seed)
    with torch.no_grad():
        if args.model == "Transformer":
            log_probs = model(input)[-1].view(-1)
        else:
            hidden = model.init_hidden(1)
            output, hidden = model(input, hidden)
            log_probs, input = output[-1], input[-1:]
        probs, candidates = log_probs.exp().topk(5)
        print("next word:", ", ".join(f"{corpus.idx2word[i]} {p:.6f}" for i, p in zip(candidates.tolist(),
                                                                                      probs.tolist())))
        for _ in range(n):
            word_weights = log_probs.div(0.8).exp().double()
            word_idx = int(rng.choice(ntokens, p=(word_weights / word_weights.sum()).numpy()))
            words.append(corpus.idx2word[word_idx])
            if args.model == "Transformer":   # the whole text so far, every time
                input = torch.cat([input, torch.tensor([[word_idx]], dtype=torch.int64)], 0)
                log_probs = model(input)[-1].view(-1)
            else:                             # one word, and the state
                input.fill_(word_idx)
                output, hidden = model(input, hidden)
                log_probs = output[-1]
    return " ".join(words)


save_path = os.path.join(tempfile.mkdtemp(), "model.pt")
lr = args.lr
best_val_loss = None
for epoch in range(1, args.epochs + 1):
    train_loss = train(epoch, lr)
    val_loss = evaluate(val_data)
    print(f"| end of epoch {epoch:3d} | train loss {train_loss:.8f} | valid loss {val_loss:.8f} "
          f"| valid ppl {math.exp(val_loss):.6f}")
    if best_val_loss is None or val_loss < best_val_loss:
        with open(save_path, "wb") as f:
            torch.save(model, f)
        best_val_loss = val_loss
    else:
        lr /= 4.0   # anneal when validation stops improving, as the example does

with open(save_path, "rb") as f:
    # The whole pickled model: torch 1.13 loads any pickle by default, newer releases (and rustytorch)
    # only weights unless told that the file is trusted.
    model = torch.load(f, weights_only=False)
    if args.model != "Transformer":
        model.rnn.flatten_parameters()
os.remove(save_path)
test_loss = evaluate(test_data)
print(f"| end of training | best valid ppl {math.exp(best_val_loss):.6f} | test loss {test_loss:.8f} "
      f"| test ppl {math.exp(test_loss):.6f}")
print("generated:", generate(model, "It is a truth universally acknowledged, that", args.generate))
