"""Train the digits MLP with GELU activations through the fused-bias-gelu plugin op, next to the same model with
PyTorch's unfused gelu(x + b), from the same initial weights: the losses agree.

    rtorch run samples/fused_bias_gelu.py            # 20 epochs, about 97% test accuracy
    rtorch run samples/fused_bias_gelu.py --quick    # 2 epochs (what the tests run)

The plugin is found by its id in the plugin search paths (a build tree's build/plugins, or
~/.local/share/rustytorch/plugins); pass --plugin DIR to load it from elsewhere. docs/plugins.md explains it.
"""
import argparse

import rustytorch as rt
from rustytorch import nn
from rustytorch.utils.data import DataLoader

from digits_data import accuracy, load_digits, train_epoch


class GeluMLP(nn.Module):
    """64 -> 128 -> 64 -> 10 with GELU; each hidden layer's bias is added by the activation."""

    def __init__(self, fused):
        super().__init__()
        self.fused = fused
        self.fc1 = nn.Linear(64, 128, bias=False)
        self.b1 = nn.Parameter(rt.zeros(128))
        self.fc2 = nn.Linear(128, 64, bias=False)
        self.b2 = nn.Parameter(rt.zeros(64))
        self.out = nn.Linear(64, 10)

    def act(self, h, b):
        return rt.ops.rtx.fused_bias_gelu(h, b) if self.fused else nn.functional.gelu(h + b)

    def forward(self, x):
        return self.out(self.act(self.fc2(self.act(self.fc1(x), self.b1)), self.b2))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plugin", default="org.rustytorch.fused-bias-gelu", help="the plugin's folder or id")
    parser.add_argument("--quick", action="store_true", help="2 epochs, for tests")
    args = parser.parse_args()
    epochs = 2 if args.quick else args.epochs

    plugin = rt.ops.load_library(args.plugin)
    print(f"loaded {plugin['id']} {plugin['version']}: {', '.join(plugin['ops'])}")
    train, test = load_digits(seed=args.seed)
    test_loader = DataLoader(test, batch_size=256)
    for fused in (True, False):
        rt.manual_seed(args.seed)  # the same initial weights and batches for both
        model = GeluMLP(fused)
        train_loader = DataLoader(train, batch_size=args.batch_size, shuffle=True)
        optimizer = rt.optim.Adam(model.parameters(), lr=args.lr)
        name = "fused  " if fused else "unfused"
        for epoch in range(1, epochs + 1):
            mean_loss, elapsed = train_epoch(model, train_loader, nn.CrossEntropyLoss(), optimizer)
            print(f"{name} epoch {epoch:3d}  loss {mean_loss:.4f}  test accuracy {accuracy(model, test_loader):.4f}  "
                  f"({elapsed * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
