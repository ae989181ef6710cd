"""Train a small MLP on the 8x8 digits and report test accuracy — PyTorch's API on rustytorch.

    rtorch run samples/digits_mlp.py                 # 30 epochs, about 97% test accuracy
    rtorch run samples/digits_mlp.py --quick         # 2 epochs (what the tests run)
    rtorch run samples/digits_mlp.py --save mlp.safetensors
"""
import argparse

import rustytorch as rt
from rustytorch import nn
from rustytorch.utils.data import DataLoader

from digits_data import accuracy, load_digits, train_epoch


def build_model():
    return nn.Sequential(
        nn.Linear(64, 128), nn.ReLU(),
        nn.Linear(128, 64), nn.ReLU(),
        nn.Linear(64, 10),
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="2 epochs, for tests")
    parser.add_argument("--save", metavar="PATH", help="write the trained weights (safetensors)")
    args = parser.parse_args()
    epochs = 2 if args.quick else args.epochs

    rt.manual_seed(args.seed)
    train, test = load_digits(seed=args.seed)
    train_loader = DataLoader(train, batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(test, batch_size=256)

    model = build_model()
    loss_fn = nn.CrossEntropyLoss()
    optimizer = rt.optim.Adam(model.parameters(), lr=args.lr)
    print(model)
    for epoch in range(1, epochs + 1):
        mean_loss, elapsed = train_epoch(model, train_loader, loss_fn, optimizer)
        print(f"epoch {epoch:3d}  loss {mean_loss:.4f}  "
              f"test accuracy {accuracy(model, test_loader):.4f}  ({elapsed * 1e3:.1f} ms)")
    if args.save:
        rt.save(model.state_dict(), args.save)
        print(f"saved weights to {args.save}")


if __name__ == "__main__":
    main()
