"""A convolutional autoencoder on the 8x8 handwritten digits shipped in samples/data: Conv2d and MaxPool2d
down to a 16x2x2 code, back up with a strided ConvTranspose2d and a bilinear nn.Upsample, a sigmoid output,
mean-squared reconstruction error, Adam, shuffled mini-batches, train and test error per epoch.

    python3 conv_autoencoder.py --backend torch
    rtorch run conv_autoencoder.py --backend rt

Only the import differs between the two backends; the shuffling and initial weights come from numpy.
"""
import argparse
import gzip
import math
import os

import numpy as np

parser = argparse.ArgumentParser(description="convolutional autoencoder on 8x8 digits")
parser.add_argument("--backend", choices=["rt", "torch"], required=True)
parser.add_argument("--epochs", type=int, default=5)
parser.add_argument("--batch_size", type=int, default=32)
parser.add_argument("--train", type=int, default=512)
parser.add_argument("--lr", type=float, default=1e-2)
parser.add_argument("--cuda", action="store_true", help="train on the GPU when there is one")
args = parser.parse_args()

if args.backend == "rt":
    import rustytorch as torch
else:
    import torch
nn = torch.nn

DIGITS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "samples", "data",
                      "digits.csv.gz")


class ConvAutoencoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),      # 8x4x4
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))     # 16x2x2
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(16, 8, 2, stride=2), nn.ReLU(),              # 8x4x4
            nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),   # 8x8x8
            nn.Conv2d(8, 1, 3, padding=1), nn.Sigmoid())

    def forward(self, x):
        return self.decoder(self.encoder(x))


def load_numpy_weights(model, rng):
    """He-uniform kernels and small biases from numpy, so both libraries start from the same model."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() > 1:
                fan_in = p.shape[1] * p.shape[2] * p.shape[3]
                bound = math.sqrt(6.0 / fan_in)
            else:
                bound = 0.05
            p.copy_(torch.from_numpy(rng.uniform(-bound, bound, size=tuple(p.shape)).astype(np.float32)))


with gzip.open(DIGITS, "rt") as f:
    table = np.loadtxt(f, delimiter=",", dtype=np.float32)
images = (table[:, :64] / 16.0).reshape(-1, 1, 8, 8)
train_images = torch.from_numpy(images[:args.train].copy())
test_images = torch.from_numpy(images[args.train:args.train + 256].copy())

rng = np.random.default_rng(0)
torch.manual_seed(0)
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False
if args.cuda and torch.cuda.is_available():
    device = torch.device("cuda")
elif torch.backends.mps.is_available():
    device = torch.device("mps")
else:
    device = torch.device("cpu")
train_images, test_images = train_images.to(device), test_images.to(device)
model = ConvAutoencoder()
load_numpy_weights(model, rng)
model.to(device)
criterion = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
print(f"{train_images.shape[0]} train and {test_images.shape[0]} test images, "
      f"{sum(p.numel() for p in model.parameters())} parameters")

for epoch in range(1, args.epochs + 1):
    model.train()
    order = torch.from_numpy(rng.permutation(train_images.shape[0])).to(device)
    total = 0.0
    for start in range(0, len(order), args.batch_size):
        batch = train_images[order[start:start + args.batch_size]]
        loss = criterion(model(batch), batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item() * batch.shape[0]
    model.eval()
    with torch.no_grad():
        recon = model(test_images)
        test_loss = criterion(recon, test_images).item()
        code = model.encoder(test_images)
    print(f"epoch {epoch} | train mse {total / len(order):.8f} | test mse {test_loss:.8f} "
          f"| code mean {code.mean().item():.6f}")
