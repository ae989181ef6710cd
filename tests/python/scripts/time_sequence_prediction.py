"""Sine-wave predictor, the way PyTorch's time_sequence_prediction example trains it (scaled down): two
nn.LSTMCell layers and an nn.Linear unrolled by hand over the sequence, in float64, trained by LBFGS with a
closure, then asked to continue the waves `--future` steps past the input.

    python3 time_sequence_prediction.py --backend torch
    rtorch run time_sequence_prediction.py --backend rt

Only the import differs between the two backends; data and initial weights come from numpy.
"""
import argparse

import numpy as np

parser = argparse.ArgumentParser(description="sine-wave LSTM trained with LBFGS")
parser.add_argument("--backend", choices=["rt", "torch"], required=True)
parser.add_argument("--steps", type=int, default=4)
parser.add_argument("--waves", type=int, default=12)
parser.add_argument("--length", type=int, default=60)
parser.add_argument("--hidden", type=int, default=16)
parser.add_argument("--future", type=int, default=20)
args = parser.parse_args()

if args.backend == "rt":
    import rustytorch as torch
else:
    import torch
nn = torch.nn
optim = torch.optim


class Sequence(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.hidden = hidden
        self.lstm1 = nn.LSTMCell(1, hidden)
        self.lstm2 = nn.LSTMCell(hidden, hidden)
        self.linear = nn.Linear(hidden, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), self.hidden, dtype=torch.double)
        c_t = torch.zeros(input.size(0), self.hidden, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), self.hidden, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), self.hidden, dtype=torch.double)
        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for _ in range(future):   # the prediction is fed back as the next input
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        return torch.cat(outputs, dim=1)


rng = np.random.default_rng(2)
T = 20
x = np.empty((args.waves, args.length), dtype=np.float64)
x[:] = np.arange(args.length) + rng.integers(-4 * T, 4 * T, args.waves).reshape(args.waves, 1)
data = np.sin(x / 1.0 / T)

torch.manual_seed(0)
input = torch.from_numpy(data[3:, :-1])
target = torch.from_numpy(data[3:, 1:])
test_input = torch.from_numpy(data[:3, :-1])
test_target = torch.from_numpy(data[:3, 1:])

seq = Sequence(args.hidden)
seq.double()
with torch.no_grad():
    for p in seq.parameters():   # numpy's initial weights, so both libraries start from the same model
        bound = 1.0 / np.sqrt(args.hidden)
        p.copy_(torch.from_numpy(rng.uniform(-bound, bound, size=tuple(p.shape))))
criterion = nn.MSELoss()
optimizer = optim.LBFGS(seq.parameters(), lr=0.8)
for i in range(args.steps):
    print("STEP: ", i)

    def closure():
        optimizer.zero_grad()
        out = seq(input)
        loss = criterion(out, target)
        print(f"loss: {loss.item():.12e}")
        loss.backward()
        return loss

    optimizer.step(closure)
    with torch.no_grad():   # the test waves, continued past their end
        pred = seq(test_input, future=args.future)
        loss = criterion(pred[:, :-args.future], test_target)
        print(f"test loss: {loss.item():.12e}")
        y = pred.detach().numpy()
    print("future:", " ".join(f"{v:.10f}" for v in y[0, -args.future::5]))
