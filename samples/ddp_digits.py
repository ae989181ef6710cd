"""Train the digits CNN data-parallel: one process per rank, each on its shard, gradients averaged by DDP.

    rtorch launch --nproc-per-node 2 samples/ddp_digits.py            # 15 epochs
    rtorch launch --nproc-per-node 2 samples/ddp_digits.py --quick    # 1 epoch (what the tests run)

The same script as digits_cnn.py with four changes, as in PyTorch's DDP tutorial: init_process_group, the model
wrapped in DistributedDataParallel, a DistributedSampler (set_epoch each epoch), and only rank 0 evaluates.
"""
import argparse

import rustytorch as rt
import rustytorch.distributed as dist
from rustytorch import nn
from rustytorch.nn.parallel import DistributedDataParallel as DDP
from rustytorch.utils.data import DataLoader
from rustytorch.utils.data.distributed import DistributedSampler

from digits_cnn import DigitsCNN
from digits_data import accuracy, load_digits, train_epoch


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch-size", type=int, default=32, help="per rank")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="1 epoch, for tests")
    args = parser.parse_args()
    epochs = 1 if args.quick else args.epochs

    dist.init_process_group("gloo")           # env://: rtorch launch sets RANK, WORLD_SIZE, MASTER_ADDR/PORT
    rank, world = dist.get_rank(), dist.get_world_size()
    rt.manual_seed(args.seed)                 # the same initial weights everywhere (DDP broadcasts rank 0's anyway)
    train, test = load_digits(image_shape=(1, 8, 8), seed=args.seed)
    sampler = DistributedSampler(train, shuffle=True, seed=args.seed)
    train_loader = DataLoader(train, batch_size=args.batch_size, sampler=sampler)

    model = DDP(DigitsCNN())
    optimizer = rt.optim.SGD(model.parameters(), lr=args.lr * world, momentum=0.9, weight_decay=1e-4)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(1, epochs + 1):
        sampler.set_epoch(epoch)
        mean_loss, elapsed = train_epoch(model, train_loader, loss_fn, optimizer)
        losses = [None] * world
        dist.all_gather_object(losses, mean_loss)
        if rank == 0:
            test_acc = accuracy(model.module, DataLoader(test, batch_size=256))
            print(f"epoch {epoch:3d}  loss {sum(losses) / world:.4f} (mean over {world} ranks)  "
                  f"test accuracy {test_acc:.4f}  ({elapsed * 1e3:.1f} ms)")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
