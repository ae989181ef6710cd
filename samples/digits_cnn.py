"""Train a small convolutional network on the 8x8 digits — PyTorch's API on rustytorch.

    rtorch run samples/digits_cnn.py                 # 15 epochs, about 99% test accuracy
    rtorch run samples/digits_cnn.py --quick         # 1 epoch (what the tests run)
"""
import argparse

import rustytorch as rt
from rustytorch import nn
from rustytorch.optim.lr_scheduler import CosineAnnealingLR
from rustytorch.utils.data import DataLoader

from digits_data import accuracy, load_digits, train_epoch


class DigitsCNN(nn.Module):
    """Two conv/ReLU/max-pool stages (8x8 -> 4x4 -> 2x2) and a linear classifier."""

    def __init__(self, channels=16, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, channels, kernel_size=3, padding=1), nn.BatchNorm2d(channels), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(channels, 2 * channels, kernel_size=3, padding=1), nn.BatchNorm2d(2 * channels), nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(2 * channels * 2 * 2, num_classes))

    def forward(self, x):
        return self.classifier(self.features(x))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="1 epoch, for tests")
    args = parser.parse_args()
    epochs = 1 if args.quick else args.epochs

    rt.manual_seed(args.seed)
    train, test = load_digits(image_shape=(1, 8, 8), seed=args.seed)
    train_loader = DataLoader(train, batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(test, batch_size=256)

    model = DigitsCNN()
    optimizer = rt.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    scheduler = CosineAnnealingLR(optimizer, T_max=epochs)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(1, epochs + 1):
        mean_loss, elapsed = train_epoch(model, train_loader, loss_fn, optimizer)
        scheduler.step()
        print(f"epoch {epoch:3d}  lr {scheduler.get_last_lr()[0]:.4f}  loss {mean_loss:.4f}  "
              f"test accuracy {accuracy(model, test_loader):.4f}  ({elapsed * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
